import { QueueFull, createTeamLimiter } from '../../src/limiter';

/** A task that ends when `finish` is called. */
function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createTeamLimiter', () => {
  it("runs at most perTeam of a team's tasks at once, queues queuePerTeam more in order, and refuses the rest; other teams are not held up", async () => {
    const limiter = createTeamLimiter({ perTeam: 2, queuePerTeam: 1 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const task = (name: string) => () => {
      started.push(name);
      const g = gate();
      gates.set(name, g);
      return g.done.then(() => name);
    };
    const b1 = limiter.run('B', task('b1'));
    const b2 = limiter.run('B', task('b2'));
    const b3 = limiter.run('B', task('b3'));
    await expect(limiter.run('B', task('b4'))).rejects.toBeInstanceOf(QueueFull);
    const a1 = limiter.run('A', task('a1'));
    await settle();
    expect(started).toEqual(['b1', 'b2', 'a1']);
    gates.get('a1')!.finish();
    await expect(a1).resolves.toBe('a1');

    gates.get('b1')!.finish();
    await expect(b1).resolves.toBe('b1');
    await settle();
    expect(started).toEqual(['b1', 'b2', 'a1', 'b3']);
    gates.get('b2')!.finish();
    gates.get('b3')!.finish();
    await expect(Promise.all([b2, b3])).resolves.toEqual(['b2', 'b3']);
  });

  it('gives up the place of a waiter whose signal aborts, and frees the turn of a task that fails', async () => {
    const limiter = createTeamLimiter({ perTeam: 1, queuePerTeam: 1 });
    const first = gate();
    const running = limiter.run('B', () => first.done.then(() => { throw new Error('failed'); }));
    const left = new AbortController();
    const waiting = limiter.run('B', async () => 'never', left.signal);
    left.abort('gone');
    await expect(waiting).rejects.toBe('gone');
    // Its place is free again.
    const next = limiter.run('B', async () => 'next');
    first.finish();
    await expect(running).rejects.toThrow('failed');
    await expect(next).resolves.toBe('next');
  });
});
