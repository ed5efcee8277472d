import ExcelJS from 'exceljs';
import { binary, parseCsv } from '../../support/files';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';

let h: Harness;
let projectId: string;
let ids: Record<string, string>;

/*
 *   Launch, "phase 1" (billable, 10 h, Ann; fixed 100)
 *     └ =SUM(A1) (non-billable, 4 h, Ben; Ben logged 1 h)
 *         └ Docs (billable, 2 h, Ann; Zed logged 0.5 h)
 *   Ops (non-billable, 6 h, no assignees, fixed 20.5; Ben logged 2 h)
 */
beforeAll(async () => {
  h = await startHarness();
  const dev = await createJobRole(h.api);
  const project = await createProject(h.api, { name: `Export, "quoted" ${Date.now()}`, currency: 'EUR' });
  projectId = project.id;
  await setRateCard(h.api, projectId, [{ job_role_id: dev.id, hourly_rate: 80.25 }]);
  const ann = (await createMember(h.api, { name: 'Ann' })).id;
  const ben = (await createMember(h.api, { name: 'Ben' })).id;
  const zed = (await createMember(h.api, { name: 'Zed' })).id;
  await addToProject(h.api, projectId, ann, dev.id);
  await addToProject(h.api, projectId, ben, dev.id);
  const launch = await createTask(h.api, projectId, { name: 'Launch, "phase 1"', estimated_hours: 10, fixed_cost: 100, assignee_ids: [ann], status: 'doing' });
  const formula = await createTask(h.api, projectId, { name: '=SUM(A1)', parent_task_id: launch.id, billable: false, estimated_hours: 4, assignee_ids: [ben] });
  const docs = await createTask(h.api, projectId, { name: 'Docs', parent_task_id: formula.id, estimated_hours: 2, assignee_ids: [ann] });
  const ops = await createTask(h.api, projectId, { name: 'Ops', billable: false, estimated_hours: 6, fixed_cost: 20.5 });
  await logTime(h.api, formula.id, ben, { hours: 1 });
  await logTime(h.api, docs.id, zed, { seconds: 1800 });
  await logTime(h.api, ops.id, ben, { hours: 2 }); // 2 h x 80.25 = 160.50 over a 0 estimate: variance -160.50
  ids = { launch: launch.id, formula: formula.id, docs: docs.id, ops: ops.id };
});
afterAll(() => h.close());

const FIGURES = [
  'estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost', 'variance',
  // Section 8, after the columns that were there before: revenue, margin, and whether a rate is missing (yes or no).
  'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'has_missing_rates',
];
/** A figure cell of a CSV row as the list answers it: a number, or a flag's yes / no as a boolean. */
const cellValue = (text: string) => (text === 'yes' ? true : text === 'no' ? false : Number(text));

/** The list rows of every level, by task id, as the API computes them under the filter. */
async function listRows(filter = 'all'): Promise<{ rows: Map<string, Record<string, number>>; totals: Record<string, number> }> {
  const rows = new Map<string, Record<string, number>>();
  const top = (await h.api.get(`/api/project-finance/project/${projectId}/tasks?billable_filter=${filter}`).expect(200)).body.body;
  const visit = async (list: { id: string; sub_tasks_count: number }[]) => {
    for (const row of list) {
      rows.set(row.id, row as unknown as Record<string, number>);
      if (row.sub_tasks_count > 0) {
        await visit((await h.api.get(`/api/project-finance/project/${projectId}/tasks?billable_filter=${filter}&parent_task_id=${row.id}`).expect(200)).body.body.tasks);
      }
    }
  };
  await visit(top.tasks);
  return { rows, totals: top.totals };
}

describe('GET /api/project-finance/project/:project_id/export', () => {
  it('writes RFC 4180 CSV: a header, every listed task at every level, and the list totals', async () => {
    const res = await h.api.get(`/api/project-finance/project/${projectId}/export?format=csv`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="Export-quoted-\d+-finance-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.text.endsWith('\r\n')).toBe(true);
    const [header, ...rest] = parseCsv(res.text);
    expect(header).toEqual(['Task', 'Task id', 'Level', 'Parent task', 'Status', 'Priority', 'Phase', 'Billable', 'Estimated hours', 'Logged hours', 'Estimated labor cost (EUR)', 'Actual labor cost (EUR)', 'Fixed cost (EUR)', 'Total estimated cost (EUR)', 'Total actual cost (EUR)', 'Variance (EUR)', 'Estimated revenue (EUR)', 'Actual revenue (EUR)', 'Estimated margin (EUR)', 'Actual margin (EUR)', 'Missing rates']);
    const total = rest.pop() as string[];
    // Depth first, with levels and parents; the formula-like name is defused, the quoted one kept.
    expect(rest.map((r) => r.slice(0, 4))).toEqual([
      ['Launch, "phase 1"', ids.launch, '0', ''],
      ["'=SUM(A1)", ids.formula, '1', 'Launch, "phase 1"'],
      ['Docs', ids.docs, '2', "'=SUM(A1)"],
      ['Ops', ids.ops, '0', ''],
    ]);
    const api = await listRows();
    for (const row of rest) {
      const expected = api.rows.get(row[1] as string) as Record<string, number>;
      expect(row.slice(8).map(cellValue)).toEqual(FIGURES.map((f) => expected[f]));
    }
    expect(total[0]).toBe('Total');
    expect(total.slice(8).map(cellValue)).toEqual(FIGURES.map((f) => api.totals[f]));
    // By hand: Launch 10 h x 80.25 = 802.50; =SUM 4 h x 80.25 = 321.00; Docs 2 h = 160.50 -> 1284 + fixed 100.
    expect(Number(rest[0]?.[10])).toBe(1284);
    // A negative variance is a number, not defused text.
    expect(rest[3]?.[15]).toBe('-160.5');
  });

  it('applies billable_filter and parent_task_id like the list', async () => {
    const res = await h.api.get(`/api/project-finance/project/${projectId}/export?format=csv&billable_filter=billable&parent_task_id=${ids.launch}`).expect(200);
    const [, ...rest] = parseCsv(res.text);
    const total = rest.pop() as string[];
    // Level and parent: the starting level's parent is the task asked for.
    expect(rest.map((r) => [r[1], r[2], r[3]])).toEqual([
      [ids.formula, '0', 'Launch, "phase 1"'],
      [ids.docs, '1', "'=SUM(A1)"],
    ]);
    const child = (await h.api.get(`/api/project-finance/project/${projectId}/tasks?billable_filter=billable&parent_task_id=${ids.launch}`).expect(200)).body.body;
    expect(total.slice(8).map(cellValue)).toEqual(FIGURES.map((f) => child.totals[f]));
    expect(rest[0]?.slice(8).map(cellValue)).toEqual(FIGURES.map((f) => child.tasks[0][f]));
  });

  it('streams both formats (chunked, no Content-Length), so a big export is never held whole in memory', async () => {
    for (const format of ['csv', 'xlsx']) {
      const res = await h.api.get(`/api/project-finance/project/${projectId}/export?format=${format}`).buffer(true).expect(200);
      expect({ format, length: res.headers['content-length'], encoding: res.headers['transfer-encoding'] }).toEqual({ format, length: undefined, encoding: 'chunked' });
    }
  });

  it('writes XLSX with numeric money cells in the currency format, indented subtasks and the totals', async () => {
    const res = await h.api
      .get(`/api/project-finance/project/${projectId}/export?format=xlsx`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toMatch(/filename="Export-quoted-\d+-finance-\d{4}-\d{2}-\d{2}\.xlsx"$/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as unknown as ExcelJS.Buffer);
    const sheet = workbook.getWorksheet('Finance') as ExcelJS.Worksheet;
    expect(sheet.rowCount).toBe(6);
    expect(sheet.getRow(1).getCell(11).value).toBe('Estimated labor cost');
    const api = await listRows();
    for (let r = 2; r <= 5; r++) {
      const row = sheet.getRow(r);
      const expected = api.rows.get(row.getCell(2).value as string) as Record<string, number>;
      FIGURES.forEach((f, i) => {
        const cell = row.getCell(9 + i);
        if (f === 'has_missing_rates') expect(cell.value).toBe(expected[f] ? 'yes' : 'no');
        else {
          expect(typeof cell.value).toBe('number');
          expect(cell.value).toBe(expected[f]);
        }
      });
      expect(row.getCell(11).numFmt).toContain('"EUR"');
      expect(row.getCell(9).numFmt).toBe('#,##0.00');
      expect(row.getCell(1).alignment?.indent ?? 0).toBe(Number(row.getCell(3).value));
    }
    expect(sheet.getRow(3).getCell(1).value).toBe('=SUM(A1)');
    expect(sheet.getRow(3).getCell(1).formula).toBeUndefined();
    const total = sheet.getRow(6);
    expect(total.getCell(1).value).toBe('Total');
    FIGURES.forEach((f, i) => expect(total.getCell(9 + i).value).toBe(f === 'has_missing_rates' ? (api.totals[f] ? 'yes' : 'no') : api.totals[f]));
  });

  it('answers 400 for an unknown format or parameter and 404 for an unknown project', async () => {
    await h.api.get(`/api/project-finance/project/${projectId}/export?format=pdf`).expect(400);
    await h.api.get(`/api/project-finance/project/${projectId}/export?group_by=status`).expect(400);
    await h.api.get('/api/project-finance/project/3f1c1b8e-1111-4222-8333-944455556666/export').expect(404);
  });
});

/*
 * Cost lines in the exports (docs/finance-rules.md R15.3): Dev at 50.00, 60.00 from 2026-07-01.
 *   Build (Ann: 3 h on 10 June, 2 h on 2 July; Zed, in no project role: 0.5 h on 1 August)
 *     └ Docs (Ann: 1 h on 5 July)
 */
describe('cost lines in the exports', () => {
  let linesProject: string;
  let build: string;
  let docs: string;
  let ann: string;
  let zed: string;
  let dev: { id: string; name: string };
  beforeAll(async () => {
    dev = await createJobRole(h.api);
    const project = await createProject(h.api, { name: `Lines ${Date.now()}` });
    linesProject = project.id;
    await setRateCard(h.api, linesProject, [{ job_role_id: dev.id, hourly_rate: 50 }]);
    await setRateCard(h.api, linesProject, [{ job_role_id: dev.id, hourly_rate: 60 }], '2026-07-01');
    ann = (await createMember(h.api, { name: 'Ann' })).id;
    zed = (await createMember(h.api, { name: 'Zed' })).id;
    await addToProject(h.api, linesProject, ann, dev.id);
    build = (await createTask(h.api, linesProject, { name: 'Build', estimated_hours: 8, assignee_ids: [ann] })).id;
    docs = (await createTask(h.api, linesProject, { name: 'Docs', parent_task_id: build, assignee_ids: [ann] })).id;
    await logTime(h.api, build, ann, { hours: 3, logged_at: '2026-06-10T09:00:00Z' });
    await logTime(h.api, build, ann, { hours: 2, logged_at: '2026-07-02T09:00:00Z' });
    await logTime(h.api, build, zed, { hours: 0.5, logged_at: '2026-08-01T09:00:00Z' });
    await logTime(h.api, docs, ann, { hours: 1, logged_at: '2026-07-05T09:00:00Z' });
  });

  const header = [
    'Task', 'Task id', 'Member', 'Member id', 'Job role', 'Hourly rate (USD)', 'Logged hours', 'Actual cost (USD)', 'First day', 'Last day',
    'Bill rate (USD)', 'Actual revenue (USD)',
  ];

  it('writes each task\'s own cost lines per member as CSV (sheet=cost_lines), and a range cuts them', async () => {
    const res = await h.api.get(`/api/project-finance/project/${linesProject}/export?format=csv&sheet=cost_lines`).expect(200);
    expect(res.headers['content-disposition']).toMatch(/filename="Lines-\d+-cost-lines-\d{4}-\d{2}-\d{2}\.csv"$/);
    // 3 h x 50 = 150; 2 h x 60 = 120; Zed 0.5 h at 0 ("Unassigned"); Docs: 1 h x 60 = 60.
    expect(parseCsv(res.text)).toEqual([
      header,
      ['Build', build, 'Ann', ann, dev.name, '50', '3', '150', '2026-06-10', '2026-06-10', '0', '0'],
      ['Build', build, 'Ann', ann, dev.name, '60', '2', '120', '2026-07-02', '2026-07-02', '0', '0'],
      ['Build', build, 'Zed', zed, 'Unassigned', '0', '0.5', '0', '2026-08-01', '2026-08-01', '0', '0'],
      ['Docs', docs, 'Ann', ann, dev.name, '60', '1', '60', '2026-07-05', '2026-07-05', '0', '0'],
    ]);
    const ranged = await h.api.get(`/api/project-finance/project/${linesProject}/export?format=csv&sheet=cost_lines&from=2026-07-01&to=2026-07-31`).expect(200);
    expect(parseCsv(ranged.text).map((row) => [row[0], row[2], row[5], row[6], row[7]])).toEqual([
      ['Task', 'Member', 'Hourly rate (USD)', 'Logged hours', 'Actual cost (USD)'],
      ['Build', 'Ann', '60', '2', '120'],
      ['Docs', 'Ann', '60', '1', '60'],
    ]);
    // The tasks sheet over the same range: Build's row holds itself and Docs, 3 h and 180.00 of July.
    const tasks = parseCsv((await h.api.get(`/api/project-finance/project/${linesProject}/export?format=csv&from=2026-07-01&to=2026-07-31`).expect(200)).text);
    const at = (name: string) => (tasks[0] as string[]).findIndex((column) => column.startsWith(name));
    expect([tasks[1]?.[0], tasks[1]?.[at('Logged hours')], tasks[1]?.[at('Actual labor cost')]]).toEqual(['Build', '3', '180']);
    await h.api.get(`/api/project-finance/project/${linesProject}/export?sheet=lines`).expect(400);
  });

  it('adds a "Cost lines" sheet to the XLSX file with sheet=cost_lines, with numeric cells (and none without it)', async () => {
    const plain = await h.api
      .get(`/api/project-finance/project/${linesProject}/export?format=xlsx`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    const plainBook = new ExcelJS.Workbook();
    await plainBook.xlsx.load(plain.body as unknown as ExcelJS.Buffer);
    expect(plainBook.worksheets.map((sheet) => sheet.name)).toEqual(['Finance']);
    const res = await h.api
      .get(`/api/project-finance/project/${linesProject}/export?format=xlsx&sheet=cost_lines`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as unknown as ExcelJS.Buffer);
    const sheet = workbook.getWorksheet('Cost lines') as ExcelJS.Worksheet;
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows).toEqual([
      header.map((h) => h.replace(' (USD)', '')),
      ['Build', build, 'Ann', ann, dev.name, 50, 3, 150, '2026-06-10', '2026-06-10', 0, 0],
      ['Build', build, 'Ann', ann, dev.name, 60, 2, 120, '2026-07-02', '2026-07-02', 0, 0],
      ['Build', build, 'Zed', zed, 'Unassigned', 0, 0.5, 0, '2026-08-01', '2026-08-01', 0, 0],
      ['Docs', docs, 'Ann', ann, dev.name, 60, 1, 60, '2026-07-05', '2026-07-05', 0, 0],
    ]);
    expect(sheet.getRow(2).getCell(8).numFmt).toContain('"USD"');
  });
});

describe('cost lines under a billable filter', () => {
  it('holds only the lines of tasks that pass it, so they add up to the exported actual cost', async () => {
    // The first project's tree: Launch (billable) > =SUM(A1) (non-billable; Ben 1 h x 80.25 = 80.25) >
    // Docs (billable; Zed 0.5 h, in no project role: 0); Ops (non-billable; Ben 2 h x 80.25 = 160.50).
    // Billable: =SUM(A1) is listed for Docs but its own 80.25 is not in the figures, so neither is its line.
    // Non-billable: Launch is listed for =SUM(A1) with no line of its own (nothing logged on it).
    const cases = [
      { filter: 'billable', lines: [['Docs', 'Zed', '0', '0.5', '0']], actual: '0' },
      { filter: 'non-billable', lines: [["'=SUM(A1)", 'Ben', '80.25', '1', '80.25'], ['Ops', 'Ben', '80.25', '2', '160.5']], actual: '240.75' },
    ];
    for (const { filter, lines, actual } of cases) {
      const route = `/api/project-finance/project/${projectId}/export?format=csv&billable_filter=${filter}`;
      const costLines = parseCsv((await h.api.get(`${route}&sheet=cost_lines`).expect(200)).text).slice(1);
      expect({ filter, lines: costLines.map((row) => [row[0], row[2], row[5], row[6], row[7]]) }).toEqual({ filter, lines });
      const tasks = parseCsv((await h.api.get(route).expect(200)).text);
      const total = tasks.at(-1) as string[];
      expect({ filter, total: total[(tasks[0] as string[]).findIndex((column) => column.startsWith('Actual labor cost'))] }).toEqual({ filter, total: actual });
    }
  });
});
