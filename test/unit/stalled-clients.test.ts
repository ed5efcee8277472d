import http from 'node:http';
import net from 'node:net';
import express from 'express';
import { cutStalledClients } from '../../src/http/stalled-clients';

/*
 * Over TCP, a client that takes nothing of an answer is cut off once it has taken nothing for the
 * limit: the service's side closes, and the client, reading at last, gets only what the system had
 * already taken in, then the end. 20 MB is more than loopback's buffers hold.
 */
describe('cutStalledClients over TCP', () => {
  it('cuts off a client that reads nothing', async () => {
    const app = express();
    app.use(cutStalledClients(1_000));
    const serverSide: net.Socket[] = [];
    app.get('/big', (req, res) => {
      serverSide.push(req.socket);
      res.end(Buffer.alloc(20 * 1024 * 1024, 97));
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const client = net.connect(port, '127.0.0.1');
      let received = 0;
      const clientEnd = new Promise<void>((resolve) => client.once('close', () => resolve()));
      client.on('error', () => undefined);
      client.on('data', (chunk: Buffer) => (received += chunk.length));
      client.pause();
      client.write('GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n');
      while (serverSide.length === 0) await new Promise((resolve) => setImmediate(resolve));
      await new Promise<void>((resolve) => serverSide[0]!.once('close', () => resolve()));
      client.resume();
      await clientEnd;
      expect(received).toBeLessThan(20 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);
});
