import express, { Router } from 'express';
import request from 'supertest';
import { gated } from '../../src/http/gate';

/** An app whose first router is gated, its fallback telling whether that router saw the request. */
function appWith(router: Router) {
  const seen: string[] = [];
  const app = express();
  app.use((req, _res, next) => {
    (req as unknown as { seen: string[] }).seen = seen;
    next();
  });
  app.use(gated(router));
  app.use((req, res) => res.status(404).json({ path: req.path }));
  return { app, seen };
}

function recordingRouter(): Router {
  const router = Router();
  router.use(['/tokens', '/teams'], (req, _res, next) => {
    (req as unknown as { seen: string[] }).seen.push(req.originalUrl);
    next();
  });
  router.get('/tokens', (_req, res) => res.json({ route: 'tokens' }));
  router.post('/teams/:id/members', (_req, res) => res.json({ route: 'members' }));
  return router;
}

describe('gated routers', () => {
  it('answer their own routes, whatever the case of the path', async () => {
    const { app, seen } = appWith(recordingRouter());
    expect((await request(app).get('/tokens').expect(200)).body).toEqual({ route: 'tokens' });
    expect((await request(app).get('/TOKENS').expect(200)).body).toEqual({ route: 'tokens' });
    expect((await request(app).post('/teams/7/members').expect(200)).body).toEqual({ route: 'members' });
    expect(seen).toEqual(['/tokens', '/TOKENS', '/teams/7/members']);
  });

  it('are skipped by requests for other paths, which go on to the next handler', async () => {
    const router = recordingRouter();
    const entered: string[] = [];
    // The router as gated() sees it (its routes), counting the requests let in.
    const counting = Object.assign(
      (req: express.Request, res: express.Response, next: express.NextFunction) => {
        entered.push(req.path);
        router(req, res, next);
      },
      { stack: router.stack },
    ) as unknown as Router;
    const { app } = appWith(counting);
    await request(app).get('/projects/1').expect(404);
    await request(app).get('/').expect(404);
    await request(app).get('/tokensx').expect(404);
    await request(app).get('/tokens').expect(200);
    expect(entered).toEqual(['/tokens']);
  });

  it('leave a router with a parameter or a pathless middleware as it is', () => {
    const withParameter = Router();
    withParameter.get('/:anything', (_req, res) => res.end());
    expect(gated(withParameter)).toBe(withParameter);
    const withMiddleware = Router();
    withMiddleware.use((_req, _res, next) => next());
    withMiddleware.get('/tokens', (_req, res) => res.end());
    expect(gated(withMiddleware)).toBe(withMiddleware);
  });
});
