/**
 * Runs at most `max` tasks at once, the rest waiting: a bound on the work (and the memory) of something
 * expensive that many requests may start together. Tasks carry a key (a team): one key runs at most
 * `maxPerKey` at once, so with `maxPerKey < max` a key that keeps every slot busy still leaves one for
 * the others. Waiting tasks of a key go in arrival order, and keys take turns (one task of each in
 * turn), so a key with many waiting does not push another's one behind all of its own.
 */
export type Limiter = { run<T>(task: () => Promise<T>, key?: string): Promise<T> };

export function createLimiter(max: number, maxPerKey = max): Limiter {
  let running = 0;
  const runningByKey = new Map<string, number>();
  /** Waiting tasks by key; the map's order is the order keys take their turns in. */
  const waiting = new Map<string, (() => void)[]>();
  const mayStart = (key: string) => running < max && (runningByKey.get(key) ?? 0) < maxPerKey;
  const start = (key: string) => {
    running++;
    runningByKey.set(key, (runningByKey.get(key) ?? 0) + 1);
  };
  const finish = (key: string) => {
    running--;
    const left = (runningByKey.get(key) ?? 1) - 1;
    if (left === 0) runningByKey.delete(key);
    else runningByKey.set(key, left);
  };
  /** Starts the next waiting task of the first key, in turn order, that may start; that key goes to the back. */
  const startNext = (): boolean => {
    for (const [key, queue] of waiting) {
      if (!mayStart(key)) continue;
      const next = queue.shift() as () => void;
      waiting.delete(key);
      if (queue.length > 0) waiting.set(key, queue);
      start(key);
      next();
      return true;
    }
    return false;
  };
  return {
    async run<T>(task: () => Promise<T>, key = ''): Promise<T> {
      // Behind the key's own waiting tasks; another key's are waiting only because that key is at its bound.
      if (!waiting.has(key) && mayStart(key)) start(key);
      else {
        await new Promise<void>((resolve) => {
          const queue = waiting.get(key);
          if (queue) queue.push(resolve);
          else waiting.set(key, [resolve]);
        });
      }
      try {
        return await task();
      } finally {
        finish(key);
        while (startNext());
      }
    },
  };
}

/** A team already has as many tasks waiting as it may: the caller is refused at once. */
export class QueueFull extends Error {
  constructor() {
    super("the team's queue is full");
  }
}

export type TeamLimiter = {
  /**
   * Runs `task` in one of `teamId`'s turns. Rejects with QueueFull, without waiting, when the team has
   * as many waiting as it may; with `signal`'s reason when it aborts while waiting (its place is freed).
   */
  run<T>(teamId: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
};

type Lane = { running: number; waiting: Set<() => void> };

/*
 * Each team has its own lane: at most `perTeam` of its tasks run at once, at most `queuePerTeam` more
 * wait, in arrival order. One team's waiting tasks are in its own queue only, so they never delay
 * another team's; and the number waiting is bounded, so a team cannot pile up work (or memory).
 * Hand-written like createLimiter: the kept promise-limit libraries (p-limit, p-queue) are ES modules
 * only in their maintained versions, and none keys lanes or refuses past a queue bound.
 */
export function createTeamLimiter({ perTeam, queuePerTeam }: { perTeam: number; queuePerTeam: number }): TeamLimiter {
  const lanes = new Map<string, Lane>();
  const release = (teamId: string, lane: Lane) => {
    const next = lane.waiting.values().next();
    if (!next.done) {
      lane.waiting.delete(next.value);
      return next.value();
    }
    lane.running--;
    if (lane.running === 0) lanes.delete(teamId);
  };
  return {
    async run<T>(teamId: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      let lane = lanes.get(teamId);
      if (!lane) lanes.set(teamId, (lane = { running: 0, waiting: new Set() }));
      const mine = lane;
      if (mine.running < perTeam) mine.running++;
      else {
        if (mine.waiting.size >= queuePerTeam) throw new QueueFull();
        // The turn is handed over by release(): `running` stays counted for the task that starts.
        await new Promise<void>((resolve, reject) => {
          const leave = () => {
            mine.waiting.delete(turn);
            reject(signal?.reason);
          };
          const turn = () => {
            signal?.removeEventListener('abort', leave);
            resolve();
          };
          if (signal?.aborted) return reject(signal.reason);
          mine.waiting.add(turn);
          signal?.addEventListener('abort', leave, { once: true });
        });
      }
      try {
        return await task();
      } finally {
        release(teamId, mine);
      }
    },
  };
}

/** Project lists and exports: the instance's render slots, and each team's turns. */
export type Renders = { instance: Limiter; perTeam: TeamLimiter };
