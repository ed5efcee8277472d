import fc from 'fast-check';
import { groupBy, groupByInTurns } from '../../src/group-by';
import { countingTurns } from '../support/turns';

describe('groupBy', () => {
  it('keeps groups in order of first appearance and items in order, mapping values when asked', () => {
    const rows = [
      { task: 'b', member: 1 },
      { task: 'a', member: 2 },
      { task: 'b', member: 3 },
    ];
    expect([...groupBy(rows, (r) => r.task).entries()]).toEqual([
      ['b', [rows[0], rows[2]]],
      ['a', [rows[1]]],
    ]);
    expect([...groupBy(rows, (r) => r.task, (r) => r.member).entries()]).toEqual([
      ['b', [1, 3]],
      ['a', [2]],
    ]);
    expect(groupBy([], (r: { task: string }) => r.task).size).toBe(0);
  });
});

describe('groupByInTurns', () => {
  it('makes the groups groupBy makes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c', ''), value: fc.integer() })), async (rows) => {
        expect([...(await groupByInTurns(rows, (r) => r.key, 0)).entries()]).toEqual([...groupBy(rows, (r) => r.key).entries()]);
      }),
    );
  });

  it('lets other callbacks run while it groups', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ key: i % 3 }));
    // A budget of 0 ms: a turn before every item, so the counter runs once per item (in one go: never).
    const { result: groups, turns: turnsSeen } = await countingTurns(() => groupByInTurns(rows, (r) => r.key, 0));
    expect([...groups.keys()]).toEqual([0, 1, 2]);
    expect(turnsSeen).toBeGreaterThanOrEqual(rows.length - 1);
  });
});
