import { createTokenCache } from '../../src/auth/token-cache';
import type { Actor } from '../../src/auth/roles';

const actor = (tokenId: string): Actor => ({ teamId: 'team', role: 'viewer', tokenId, tokenName: tokenId });

describe('token cache', () => {
  it('trusts an entry for its time to live, then forgets it', () => {
    let clock = 1000;
    const cache = createTokenCache(5000, { maxEntries: 10, now: () => clock });
    cache.set('h1', actor('t1'));
    clock += 5000;
    expect(cache.get('h1')?.tokenId).toBe('t1');
    clock += 1;
    expect(cache.get('h1')).toBeUndefined();
  });

  it("never trusts an entry past its token's own expiry", () => {
    let clock = 1000;
    const cache = createTokenCache(60_000, { now: () => clock });
    cache.set('h1', { ...actor('t1'), expiresAt: 3000 });
    clock = 2999;
    expect(cache.get('h1')?.tokenId).toBe('t1');
    clock = 3000;
    expect(cache.get('h1')).toBeUndefined();
  });

  it('forgets a revoked token at once, and keeps the others', () => {
    const cache = createTokenCache(5000);
    cache.set('h1', actor('t1'));
    cache.set('h2', actor('t2'));
    cache.forgetToken('t1');
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.get('h2')?.tokenId).toBe('t2');
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const cache = createTokenCache(5000, { maxEntries: 2 });
    cache.set('h1', actor('t1'));
    cache.set('h2', actor('t2'));
    cache.set('h3', actor('t3'));
    expect([cache.get('h1'), cache.get('h2')?.tokenId, cache.get('h3')?.tokenId]).toEqual([undefined, 't2', 't3']);
  });

  it('serves and keeps nothing while suspended, and resumes from empty', () => {
    const cache = createTokenCache(5000);
    cache.set('h1', actor('t1'));
    cache.suspend();
    expect(cache.get('h1')).toBeUndefined();
    cache.set('h2', actor('t2'));
    cache.resume();
    expect([cache.get('h1'), cache.get('h2')]).toEqual([undefined, undefined]);
    cache.set('h3', actor('t3'));
    expect(cache.get('h3')?.tokenId).toBe('t3');
  });

  it('keeps nothing when the time to live is 0', () => {
    const cache = createTokenCache(0);
    cache.set('h1', actor('t1'));
    expect(cache.get('h1')).toBeUndefined();
  });

  it('does not keep a lookup that was in flight when a revocation arrived', async () => {
    const cache = createTokenCache(5000);
    let answer: (a: Actor) => void = () => undefined;
    const pending = cache.lookup('h1', () => new Promise<Actor>((resolve) => (answer = resolve)));
    cache.forgetToken('t1');
    answer(actor('t1'));
    expect((await pending)?.tokenId).toBe('t1');
    expect(cache.get('h1')).toBeUndefined();
    // A lookup started after it is kept.
    await cache.lookup('h1', async () => actor('t1'));
    expect(cache.get('h1')?.tokenId).toBe('t1');
  });

  it('does not keep a lookup that was in flight across a suspension', async () => {
    const cache = createTokenCache(5000);
    let answer: (a: Actor) => void = () => undefined;
    const pending = cache.lookup('h1', () => new Promise<Actor>((resolve) => (answer = resolve)));
    cache.suspend();
    cache.resume();
    answer(actor('t1'));
    await pending;
    expect(cache.get('h1')).toBeUndefined();
  });

  it('shares one lookup between concurrent misses, but not across a revocation', async () => {
    const cache = createTokenCache(5000);
    let loads = 0;
    const answers: ((a: Actor | undefined) => void)[] = [];
    const load = () => {
      loads++;
      return new Promise<Actor | undefined>((resolve) => answers.push(resolve));
    };
    const first = cache.lookup('h1', load);
    const second = cache.lookup('h1', load);
    expect(loads).toBe(1);
    cache.forgetToken('t1');
    const third = cache.lookup('h1', load);
    expect(loads).toBe(2);
    answers[0]?.(actor('t1'));
    answers[1]?.(undefined);
    expect([(await first)?.tokenId, (await second)?.tokenId, await third]).toEqual(['t1', 't1', undefined]);
    expect(cache.get('h1')).toBeUndefined();
  });
});
