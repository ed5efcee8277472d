import express, { Router } from 'express';
import fs from 'node:fs';
import path from 'node:path';

/*
 * The finance screen: the page built from web/ by `npm run build:web` into dist/web. Its assets carry
 * a content hash in their names, so they are cached for a year; index.html is revalidated every time,
 * so a new build is picked up at once. The page runs no inline script or style, so its policy allows
 * nothing but this origin (connect-src 'self' is all the API calls need).
 */

const IMMUTABLE = 'public, max-age=31536000, immutable';

function policy(servedOverHttps: boolean): string {
  const directives = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ];
  if (servedOverHttps) directives.push('upgrade-insecure-requests');
  return directives.join('; ');
}

/** The repository (or image) root: the nearest folder upwards holding package.json. */
function packageRoot(start: string): string {
  let dir = start;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
  return dir;
}

export const DEFAULT_WEB_DIR = path.join(packageRoot(__dirname), 'dist', 'web');

/** Serves the screen at GET / when `webDir` holds a build; without one the root leads to /docs. */
export function screenRouter(webDir: string | undefined, servedOverHttps: boolean): Router {
  const router = Router();
  const index = webDir ? path.join(webDir, 'index.html') : undefined;
  if (!webDir || !index || !fs.existsSync(index)) {
    router.get('/', (_req, res) => res.redirect(302, '/docs'));
    return router;
  }
  const csp = policy(servedOverHttps);
  router.get(['/', '/index.html'], (_req, res) => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(fs.readFileSync(index));
  });
  router.use(
    '/assets',
    (_req, res, next) => {
      res.setHeader('Content-Security-Policy', csp);
      next();
    },
    express.static(path.join(webDir, 'assets'), {
      index: false,
      fallthrough: true,
      setHeaders: (res) => res.setHeader('Cache-Control', IMMUTABLE),
    }),
  );
  return router;
}
