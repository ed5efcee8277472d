import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a test receiver got. */
export type Received = { path: string; headers: http.IncomingHttpHeaders; body: string };

/**
 * A webhook receiver on 127.0.0.1 for tests: every request is recorded, and `answer` decides what each
 * path answers (a status, or 'hang': never answer until the receiver closes).
 */
export async function startReceiver(answer: (path: string, count: number) => number | 'hang' | 'stream' = () => 200) {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reply = answer(path, received.filter((r) => r.path === path).length);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      if (reply === 'stream') {
        // An answer that never ends: a megabyte at a time, for as long as the client reads.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(1024 * 1024, 'x');
        const pump = () => {
          while (res.write(chunk)) if (res.destroyed) return;
        };
        res.on('drain', pump);
        res.on('close', () => res.off('drain', pump));
        pump();
        hanging.add(res);
        return;
      }
      res.writeHead(reply, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    /** Requests to `path` still waiting for an answer. */
    hangingCount: () => hanging.size,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until `condition` holds (checked every 20 ms), failing with `what` after a minute. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
