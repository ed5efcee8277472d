import path from 'node:path';
import express, { Router } from 'express';
import { sendJson } from '../http/respond';
import { buildOpenApiDocument } from './document';

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Project finance service: API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A separate script rather than an inline one, so the default Content-Security-Policy holds. The token
// typed into "Authorize" is forgotten with the page: persisted, it would sit in localStorage.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', persistAuthorization: false });\n`;

/** `/openapi.json` and the interactive reference at `/docs`, both open (no token). */
export function openApiRouter(): Router {
  const router = Router();
  const document = buildOpenApiDocument();
  const assets = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  router.get('/openapi.json', (_req, res) => sendJson(res, 200, document));
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(DOCS_INIT);
  });
  router.use('/docs/assets', express.static(assets, { index: false, maxAge: '1h' }));
  return router;
}
