import { TURN_MS, turns } from './turns';

/**
 * Groups items by key: groups in order of first appearance, items in their order, each item mapped by
 * `valueOf` (itself by default).
 */
export function groupBy<T, K, V = T>(items: Iterable<T>, keyOf: (item: T) => K, valueOf?: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const key = keyOf(item);
    const value = valueOf ? valueOf(item) : (item as unknown as V);
    const group = groups.get(key);
    if (group) group.push(value);
    else groups.set(key, [value]);
  }
  return groups;
}

/** groupBy for a whole project's rows: the same groups, built in turns of the event loop (turns.ts). */
export async function groupByInTurns<T, K>(items: readonly T[], keyOf: (item: T) => K, budgetMs = TURN_MS): Promise<Map<K, T[]>> {
  const groups = new Map<K, T[]>();
  const pace = turns(budgetMs);
  for (const item of items) {
    if (pace.due()) await pace.take();
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
