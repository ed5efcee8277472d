import type { AddressInfo } from 'node:net';
import express from 'express';
import { serverFor } from '../../src/http/express-server';

/*
 * src/http/express-server.ts: requests and responses are made with the app's prototypes, so Express's
 * own Object.setPrototypeOf finds nothing to change; they still work as Node's and Express's. This
 * fails if an upgrade of Express (pinned exactly in package.json) or Node breaks the patch: Express
 * giving requests another prototype than app.request, or Node's constructors refusing the subclass.
 */
it("makes requests and responses with the app's prototypes, which still read bodies and stream answers", async () => {
  const app = express();
  app.use(express.json());
  const atArrival: boolean[] = [];
  const inHandlers: boolean[] = [];
  // Every request passes here after Express took it up: its prototypes are still the ones it was made with.
  app.use((req, res, next) => {
    inHandlers.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    next();
  });
  app.post('/echo', (req, res) => {
    res.status(201).json({ body: req.body, q: req.query.q, host: typeof req.get('host') });
  });
  app.get('/stream', (_req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.write('one,');
    setImmediate(() => res.end('two'));
  });
  const server = serverFor(app);
  // Before Express takes the request up (its listener was added first).
  server.prependListener('request', (req, res) => atArrival.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const echo = await fetch(`${base}/echo?q=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: [1, 'é'] }) });
    expect(echo.status).toBe(201);
    expect(await echo.json()).toEqual({ body: { a: [1, 'é'] }, q: '1', host: 'string' });
    const stream = await fetch(`${base}/stream`);
    expect(await stream.text()).toBe('one,two');
    expect(atArrival).toEqual([true, true, true, true]);
    expect(inHandlers).toEqual([true, true, true, true]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it("refuses an app whose prototypes are not Node's request and response", () => {
  const app = express();
  expect(() => serverFor({ ...app, request: {}, response: app.response } as unknown as typeof app)).toThrow(TypeError);
  expect(() => serverFor({ ...app, request: app.request, response: {} } as unknown as typeof app)).toThrow(TypeError);
});
