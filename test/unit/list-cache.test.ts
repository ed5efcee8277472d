import { createListCache } from '../../src/finance/read-model/list-cache';

const bytes = (n: number, fill = 'x') => Buffer.from(fill.repeat(n));

describe('list cache', () => {
  it('serves an entry only at the version it was stored at', () => {
    const cache = createListCache(1000);
    cache.keep('p', '7', bytes(10));
    expect(cache.get('p', '7')?.length).toBe(10);
    expect(cache.get('p', '8')).toBeUndefined();
    // A newer version dropped it: the old one is not served again either.
    expect(cache.get('p', '7')).toBeUndefined();
  });

  it('stays within its byte budget, dropping the least recently used first', () => {
    const cache = createListCache(100);
    cache.keep('a', '1', bytes(20));
    cache.keep('b', '1', bytes(20));
    cache.keep('c', '1', bytes(20));
    cache.keep('d', '1', bytes(20));
    cache.get('a', '1'); // a is now the most recently used
    cache.keep('e', '1', bytes(25));
    expect(['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(key, '1') !== undefined)).toEqual([true, false, true, true, true]);
  });

  it('does not keep a body larger than a quarter of the budget, nor anything with no budget', () => {
    const cache = createListCache(100);
    cache.keep('big', '1', bytes(26));
    expect(cache.get('big', '1')).toBeUndefined();
    const none = createListCache(0);
    none.keep('p', '1', bytes(1));
    expect(none.get('p', '1')).toBeUndefined();
  });

  it('replaces an entry stored again', () => {
    const cache = createListCache(100);
    cache.keep('p', '1', bytes(10, 'a'));
    cache.keep('p', '2', bytes(10, 'b'));
    expect(cache.get('p', '2')?.toString()).toBe('b'.repeat(10));
  });
});
