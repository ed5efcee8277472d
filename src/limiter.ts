/**
 * Runs at most `max` tasks at once, the rest waiting in arrival order: a bound on the work (and the
 * memory) of something expensive that many requests may start together.
 */
export type Limiter = { run<T>(task: () => Promise<T>): Promise<T> };

export function createLimiter(max: number): Limiter {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (running < max) running++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
