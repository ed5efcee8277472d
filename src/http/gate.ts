import type { NextFunction, Request, Response, Router } from 'express';

/** A path's first segment, as routes match it (case-insensitively): '/tasks/:id/time-logs' gives 'tasks'. */
const firstSegment = (path: string) => (path.split('/')[1] ?? '').toLowerCase();

/**
 * A router that sees only the requests its routes can answer, told by their first path segment.
 * Express tries every route of every router in turn, so a request for the last router mounted paid
 * for matching the routes of all the others (a tenth of a time log's cost). The segments are read
 * from the router's own routes, so they cannot drift from them; a router with a route or middleware
 * whose first segment is not a plain word (a parameter, a pattern, no path) is left as it is.
 */
export function gated(router: Router): Router | ((req: Request, res: Response, next: NextFunction) => void) {
  const segments = new Set<string>();
  for (const layer of router.stack as { rawPath?: unknown }[]) {
    const paths: unknown[] = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath];
    for (const path of paths) {
      const segment = typeof path === 'string' ? firstSegment(path) : '';
      if (!/^[a-z0-9._-]+$/.test(segment)) return router;
      segments.add(segment);
    }
  }
  return (req, res, next) => (segments.has(firstSegment(req.path)) ? router(req, res, next) : next());
}
