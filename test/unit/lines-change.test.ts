import type { ChangedLine, LinesChange } from '../../src/finance/rules/calculator';
import type { ChangedLineRow } from '../../src/finance/inputs/cost-changes';
import { linesChangeByTask } from '../../src/finance/read-model/labor';

/*
 * linesChangeByTask (src/finance/read-model/labor.ts): the rows of a rate change's cost lines (one role at one rate
 * of each card, ordered by task and member) become, task by task, each member's lines before and after
 * the change, however the rows are split into batches.
 */
const row = (task: string, member: string, role: string | null, before: string, after: string, seconds: number): ChangedLineRow => ({
  task_id: task,
  team_member_id: member,
  job_role_id: role && `id-${role}`,
  job_role: role,
  hourly_rate_before: before,
  hourly_rate: after,
  seconds,
});

// Ann on task A: as Dev, 100 on both cards before June, 100 -> 110 from June; as QA (50 on both).
// Ben on task A: no role (0). Ann on task B: Dev 100 -> 110.
const rows = [
  row('A', 'ann', 'Dev', '100', '100', 3600),
  row('A', 'ann', 'Dev', '100', '110', 1800),
  row('A', 'ann', 'QA', '50', '50', 900),
  row('A', 'ben', null, '0', '0', 60),
  row('B', 'ann', 'Dev', '100', '110', 7200),
];

const text = (l: ChangedLine) => `${l.jobRole} ${l.hourlyRate.toFixed()} ${l.seconds}`;
const plain = (tasks: { taskId: string; changes: LinesChange[] }[]) =>
  tasks.map(({ taskId, changes }) => ({ taskId, members: changes.map(({ before, after }) => ({ before: before.map(text), after: after.map(text) })) }));

const expected = [
  {
    taskId: 'A',
    members: [
      {
        // Before: one Dev line at 100 (both rows); after: 100 before June, 110 from June. QA the same on both.
        before: ['Dev 100 5400', 'QA 50 900'],
        after: ['Dev 100 3600', 'Dev 110 1800', 'QA 50 900'],
      },
      { before: ['null 0 60'], after: ['null 0 60'] },
    ],
  },
  { taskId: 'B', members: [{ before: ['Dev 100 7200'], after: ['Dev 110 7200'] }] },
];

async function collect(batches: ChangedLineRow[][]) {
  const out = [];
  async function* source() {
    for (const batch of batches) yield batch;
  }
  for await (const task of linesChangeByTask(source())) out.push(task);
  return out;
}

it('puts each card\'s lines together per member, task by task', async () => {
  expect(plain(await collect([rows]))).toEqual(expected);
});

it('gives the same whichever rows a batch ends after (a task or a member split over batches)', async () => {
  for (let size = 1; size <= rows.length; size++) {
    const batches = [];
    for (let at = 0; at < rows.length; at += size) batches.push(rows.slice(at, at + size));
    expect({ size, tasks: plain(await collect(batches)) }).toEqual({ size, tasks: expected });
  }
});

it('answers nothing for no rows', async () => {
  expect(await collect([])).toEqual([]);
});
