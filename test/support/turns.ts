/**
 * Runs `work` while a callback that queues itself again with setImmediate counts the turns of the
 * event loop `work` lets pass: work done in one go lets none.
 */
export async function countingTurns<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const count = () => {
    if (!running) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(count);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    running = false;
  }
}
