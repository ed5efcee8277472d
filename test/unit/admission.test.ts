import type { NextFunction, Request, Response } from 'express';
import { admissionInTurns, clientByCheckedToken } from '../../src/http/admission';

/*
 * admissionInTurns (src/http/admission.ts), driven with a settable clock: each request "costs" what
 * its start adds to the clock, so what runs in which pass of the event loop is exact. The tokens
 * pft_a and pft_b are checked ones (in the token cache), of teams A and B; any other is unknown.
 */
const CHECKED: Record<string, string> = { pft_a: 'A', pft_b: 'B' };

function setup(budgetMs: number) {
  let now = 0;
  const admit = admissionInTurns(budgetMs, () => now, clientByCheckedToken((secret) => CHECKED[secret]));
  const started: string[] = [];
  /**
   * Sends a request with Authorization `client` (none: undefined) from `address` that costs `cost` ms
   * when started; `gone` marks a client that left.
   */
  const send = (client: string | undefined, label: string, cost: number, gone = false, address = '10.0.0.1') => {
    const req = { headers: client === undefined ? {} : { authorization: client }, socket: { remoteAddress: address } } as unknown as Request;
    const res = { destroyed: gone } as Response;
    const next: NextFunction = () => {
      started.push(label);
      now += cost;
    };
    admit(req, res, next);
  };
  return { send, started };
}

/** The labels started in each pass of the event loop until nothing waits (a pass ends at setImmediate). */
async function passes(started: string[], count: number): Promise<string[][]> {
  const seen: string[][] = [[...started]];
  let before = started.length;
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    seen.push(started.slice(before));
    before = started.length;
  }
  return seen;
}

it('starts requests at once until a pass has spent its budget, then the rest a budget per turn', async () => {
  const { send, started } = setup(10);
  for (let i = 0; i < 12; i++) send('Bearer pft_a', `a${i}`, 3);
  // 0, 3, 6, 9 ms: four start in the pass they arrived in (the fifth would start at 12 ms).
  expect(started).toEqual(['a0', 'a1', 'a2', 'a3']);
  const seen = await passes(started, 4);
  expect(seen.slice(1).map((pass) => pass.length)).toEqual([4, 4, 0, 0]);
  expect(started).toEqual(Array.from({ length: 12 }, (_, i) => `a${i}`));
});

it("takes waiting clients in turn: one client's flood does not put another's request behind all of it", async () => {
  const { send, started } = setup(10);
  for (let i = 0; i < 20; i++) send('Bearer pft_b', `b${i}`, 3);
  send('Bearer pft_a', 'a', 3);
  send(undefined, 'screen', 1, false, '10.0.0.9');
  expect(started).toEqual(['b0', 'b1', 'b2', 'b3']);
  const [, first] = await passes(started, 1);
  // B's next, A's, the screen's (its address is its client), then B's again: A and the screen do not wait for B's other 15.
  expect(first).toEqual(['b4', 'a', 'screen', 'b5']);
});

it('counts a client by its address when its Authorization is not a token of the service, so junk headers take one turn', async () => {
  const { send, started } = setup(10);
  send('Bearer pft_a', 'a0', 10);
  for (let i = 0; i < 5; i++) send(`Junk ${i}`, `junk${i}`, 3, false, '10.0.0.7');
  send('Bearer pft_a', 'a1', 3);
  expect(started).toEqual(['a0']);
  const [, first] = await passes(started, 1);
  // The five junk headers from one address are one client: A's second request goes second.
  expect(first).toEqual(['junk0', 'a1', 'junk1', 'junk2']);
});

it('never gives an unchecked token a turn of its own: made-up tokens from one address are one client', async () => {
  const { send, started } = setup(10);
  send('Bearer pft_a', 'a0', 10);
  // A flood of requests, each with a token nobody has checked yet (made up, or not yet looked up).
  for (let i = 0; i < 6; i++) send(`Bearer pft_made-up-${i}`, `u${i}`, 3, false, '10.0.0.7');
  send('Bearer pft_a', 'a1', 3);
  expect(started).toEqual(['a0']);
  const [, first] = await passes(started, 1);
  // Team A's second request goes second, not behind six "clients" of one request each.
  expect(first).toEqual(['u0', 'a1', 'u1', 'u2']);
});

it('counts two tokens of one team as one client', async () => {
  let now = 0;
  const admit = admissionInTurns(10, () => now, clientByCheckedToken((secret) => ({ pft_a1: 'A', pft_a2: 'A', pft_b: 'B' })[secret]));
  const started: string[] = [];
  const send = (secret: string, label: string) => {
    const req = { headers: { authorization: `Bearer ${secret}` }, socket: { remoteAddress: '10.0.0.1' } } as unknown as Request;
    admit(req, { destroyed: false } as Response, () => {
      started.push(label);
      now += 3;
    });
  };
  send('pft_b', 'b0');
  send('pft_b', 'b1');
  send('pft_b', 'b2');
  send('pft_b', 'b3');
  for (let i = 0; i < 4; i++) send(i % 2 === 0 ? 'pft_a1' : 'pft_a2', `a${i}`);
  send('pft_b', 'b4');
  expect(started).toEqual(['b0', 'b1', 'b2', 'b3']);
  await new Promise((resolve) => setImmediate(resolve));
  // A's four requests through two tokens alternate with B's one as one client would.
  expect(started.slice(4)).toEqual(['a0', 'b4', 'a1', 'a2']);
});

it('lets a request that arrives while others wait queue behind them, and skips clients that left', async () => {
  const { send, started } = setup(5);
  send('Bearer pft_a', 'a0', 6);
  send('Bearer pft_a', 'a1', 1, true);
  send('Bearer pft_a', 'a2', 1);
  expect(started).toEqual(['a0']);
  await passes(started, 1);
  expect(started).toEqual(['a0', 'a2']);
  // A new pass with nobody waiting starts at once again.
  send('Bearer pft_a', 'a3', 1);
  expect(started).toEqual(['a0', 'a2', 'a3']);
});

it('puts a request of a new pass behind those still waiting, never ahead of them', async () => {
  const { send, started } = setup(5);
  for (let i = 0; i < 6; i++) send('Bearer pft_a', `a${i}`, 3);
  expect(started).toEqual(['a0', 'a1']);
  await passes(started, 1);
  expect(started).toEqual(['a0', 'a1', 'a2', 'a3']);
  // A new pass begins while a4 and a5 still wait: a6 takes its place behind them.
  send('Bearer pft_a', 'a6', 1);
  expect(started).toEqual(['a0', 'a1', 'a2', 'a3']);
  await passes(started, 2);
  expect(started).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
});


it('never makes /healthz, /readyz or /metrics wait', async () => {
  let now = 0;
  const admit = admissionInTurns(5, () => now);
  const started: string[] = [];
  const request = (path: string) => ({ path, headers: {}, socket: { remoteAddress: '10.0.0.1' } }) as unknown as Request;
  const res = { destroyed: false } as Response;
  admit(request('/api/projects'), res, () => void (now += 6));
  admit(request('/api/projects'), res, () => void started.push('api'));
  for (const path of ['/healthz', '/readyz', '/metrics']) admit(request(path), res, () => void started.push(path));
  expect(started).toEqual(['/healthz', '/readyz', '/metrics']);
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual(['/healthz', '/readyz', '/metrics', 'api']);
});
