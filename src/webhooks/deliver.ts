import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { PrivateAddressError, guardedLookup, hostOf, isPrivateAddress } from './address-guard';

/** Longest an attempt may take, connection to the end of the answer; past it, the attempt failed. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** At most this much of a receiver's answer is read; the rest is not waited for. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export type Outcome = { statusCode: number | null; error: string | null; durationMs: number };

export type Message = { id: string; body: string; url: string; secret: string };

// Keep-alive agents whose connections are made through the guarded lookup.
const agents = {
  guarded: { http: new http.Agent({ keepAlive: true, lookup: guardedLookup }), https: new https.Agent({ keepAlive: true, lookup: guardedLookup }) },
  open: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

/**
 * One attempt: POSTs the event's JSON, signed per the Standard Webhooks specification (webhook-id is
 * the event id, the same on every retry; webhook-signature `v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>`), and answers the status code or the error. A 2xx is a delivery. Never throws.
 */
export function deliver(message: Message, options: { allowPrivate: boolean; now: Date; signal?: AbortSignal }): Promise<Outcome> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const url = new URL(message.url);
  const host = hostOf(url);
  // An IP literal is connected to without a lookup: checked here.
  if (!options.allowPrivate && net.isIP(host) && isPrivateAddress(host)) {
    return Promise.resolve({ statusCode: null, error: new PrivateAddressError(host, host).message, durationMs: 0 });
  }
  const signature = new Webhook(message.secret).sign(message.id, options.now, message.body);
  const secure = url.protocol === 'https:';
  const pool = options.allowPrivate ? agents.open : agents.guarded;
  return new Promise<Outcome>((resolve) => {
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? pool.https : pool.http,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'project-finance-webhooks/1',
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(options.now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      signal: options.signal,
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`)), ATTEMPT_TIMEOUT_MS);
    let settled = false;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ statusCode, error, durationMs: elapsed() });
    };
    // The address connected to, checked again (whatever the lookup gave).
    request.on('socket', (socket) => {
      // A kept-alive socket was checked when it connected.
      if (!socket.connecting) return;
      socket.once('connect', () => {
        const remote = socket.remoteAddress ?? '';
        if (!options.allowPrivate && isPrivateAddress(remote)) request.destroy(new PrivateAddressError(host, remote));
      });
    });
    request.on('error', (err) => finish(null, err.message.slice(0, 500)));
    request.on('response', (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough of the answer: the status is what counts. The connection is not reused.
        if (read >= MAX_ANSWER_BYTES) {
          finish(response.statusCode ?? null, null);
          request.destroy();
        }
      });
      response.on('end', () => finish(response.statusCode ?? null, null));
      response.on('error', (err) => finish(response.statusCode ?? null, err.message.slice(0, 500)));
      response.on('close', () => finish(response.statusCode ?? null, response.complete ? null : 'the answer was cut off'));
    });
    request.end(message.body);
  });
}

export const delivered = (outcome: Outcome) => outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
