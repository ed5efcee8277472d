import { TURN_MS, turns } from './turns';

/** Adds `value` to its key's group, a new group at the end for a new key. */
function addTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}

/**
 * Groups items by key: groups in order of first appearance, items in their order, each item mapped by
 * `valueOf` (itself by default).
 */
export function groupBy<T, K, V = T>(items: Iterable<T>, keyOf: (item: T) => K, valueOf?: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) addTo(groups, keyOf(item), valueOf ? valueOf(item) : (item as unknown as V));
  return groups;
}

/** groupBy for a whole project's rows: the same groups, built in turns of the event loop (turns.ts). */
export async function groupByInTurns<T, K>(items: readonly T[], keyOf: (item: T) => K, budgetMs = TURN_MS): Promise<Map<K, T[]>> {
  const groups = new Map<K, T[]>();
  const pace = turns(budgetMs);
  for (const item of items) {
    if (pace.due()) await pace.take();
    addTo(groups, keyOf(item), item);
  }
  return groups;
}
