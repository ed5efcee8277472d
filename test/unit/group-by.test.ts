import { groupBy } from '../../src/group-by';

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
