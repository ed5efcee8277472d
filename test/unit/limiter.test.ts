import { createLimiter } from '../../src/limiter';

/** A task that records how many run beside it and ends when `finish` is called. */
function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish };
}

describe('createLimiter', () => {
  it('runs at most max tasks at once, the rest in arrival order, and releases a slot when a task fails', async () => {
    const limiter = createLimiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const gates = Array.from({ length: 5 }, gate);
    const results = gates.map((g, i) =>
      limiter.run(async () => {
        started.push(i);
        running++;
        most = Math.max(most, running);
        await g.done;
        running--;
        if (i === 1) throw new Error('task 1 failed');
        return i;
      }),
    );
    const outcomes = Promise.allSettled(results); // handled from the start: task 1 rejects before the end
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toEqual([0, 1]);
    gates[1]?.finish(); // fails: its slot must still go to the next task
    await settle();
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.finish();
    expect((await outcomes).map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([0, 'failed', 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    // Every slot came back, and no more than that: of three new tasks, two start at once.
    const later = [gate(), gate(), gate()];
    let startedLater = 0;
    const all = later.map((g) =>
      limiter.run(() => {
        startedLater++;
        return g.done;
      }),
    );
    await settle();
    expect(startedLater).toBe(2);
    later.forEach((g) => g.finish());
    await Promise.all(all);
    expect(startedLater).toBe(3);
  });
});

describe('createLimiter with keys', () => {
  it('lets waiting keys take turns: one key with many waiting does not push another key’s one behind them', async () => {
    const limiter = createLimiter(1);
    const order: string[] = [];
    const first = gate();
    const running = limiter.run(() => first.done, 'B');
    const waiting = ['B', 'B', 'B', 'A'].map((key, i) => limiter.run(async () => void order.push(`${key}${i}`), key));
    first.finish();
    await Promise.all([running, ...waiting]);
    expect(order).toEqual(['B0', 'A3', 'B1', 'B2']);
  });
});

describe('createLimiter with a bound per key', () => {
  it('keeps a slot for other keys when one key has maxPerKey running, and starts its waiting ones as slots free', async () => {
    const limiter = createLimiter(3, 2);
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const task = (name: string) => () => {
      started.push(name);
      const g = gate();
      gates.set(name, g);
      return g.done;
    };
    const runs = ['b1', 'b2', 'b3'].map((name) => limiter.run(task(name), 'B'));
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toEqual(['b1', 'b2']);
    runs.push(limiter.run(task('a1'), 'A'), limiter.run(task('a2'), 'A'));
    await settle();
    expect(started).toEqual(['b1', 'b2', 'a1']);
    gates.get('b1')!.finish();
    await settle();
    // The slot b1 freed: B's waiting one and A's both may use it; B's turn came first.
    expect(started).toEqual(['b1', 'b2', 'a1', 'b3']);
    gates.get('a1')!.finish();
    await settle();
    expect(started).toEqual(['b1', 'b2', 'a1', 'b3', 'a2']);
    for (const g of gates.values()) g.finish();
    await Promise.all(runs);
  });
});
