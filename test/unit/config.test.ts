import { loadConfig } from '../../src/config';

describe('HEAP_GROWING_PERCENT in the configuration', () => {
  it('is 60 by default; 0 leaves V8 its own heuristics', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(60);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '25' }).heapGrowingPercent).toBe(25);
  });

  it('refuses what is not a whole percentage', () => {
    for (const value of ['-1', '2.5', 'ten', '1001']) {
      expect(() => loadConfig({ HEAP_GROWING_PERCENT: value })).toThrow(/HEAP_GROWING_PERCENT/);
    }
  });
});
