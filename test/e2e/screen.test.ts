import ExcelJS from 'exceljs';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BrowserContext, Locator, Page, chromium } from 'playwright-core';
import { scratchDir } from '../support/backend';
import { describeIf } from '../support/skip';
import { ROOT, RunningService, kill, startService } from '../support/processes';

/*
 * The finance screen in a real browser (Debian's Chromium driven by playwright-core) against a real
 * service on a fresh data directory with the demo data. Every figure checked on the page is compared
 * with what the API answers for the same question. A failing step leaves a screenshot in test-results/.
 */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RESULTS = path.join(ROOT, 'test-results');
const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`Skipping the finance screen's end-to-end tests: ${CHROMIUM} is missing (apt-get install -y chromium; CI installs it).`);
}
const describeInBrowser = describeIf(haveChromium, `skipped: ${CHROMIUM} is missing`);

jest.setTimeout(10 * 60_000);

type Figures = Record<string, number>;
type ListTask = Figures & { id: string; name: string; billable: boolean; parent_task_id: string | null; sub_tasks_count: number; status: string | null };
type TaskList = { project: { id: string; name: string; currency: string }; tasks: ListTask[]; totals: Figures; groups?: (Figures & { group_name: string; task_ids: string[] })[] };

const HOURS = ['estimated_hours', 'logged_hours'];
const MONEY = ['estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost', 'variance'];
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const hours = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
/** What the page should show for a figure: the API's number, formatted independently here. */
const shown = (key: string, value: number) => (HOURS.includes(key) ? hours.format(value) : usd.format(value));

let service: RunningService;
let token: string;
let context: BrowserContext;
let page: Page;
let project: TaskList['project'];
const consoleErrors: string[] = [];

async function api<T>(route: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(`${service.baseUrl}/api${route}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${token}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${route}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { body: T }).body;
}
const list = (query = '') => api<TaskList>(`/project-finance/project/${project.id}/tasks${query ? `?${query}` : ''}`);

/** Runs one step of the scenario; when it fails, the page as it was is kept in test-results/. */
async function step(name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, `screen-${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
    throw err;
  }
}

async function figuresOfRow(rowId: string, keys = [...HOURS, ...MONEY]): Promise<Record<string, string>> {
  const row = page.locator(`tr[data-row-id="${rowId}"]`);
  const out: Record<string, string> = {};
  for (const key of keys) out[key] = (await row.locator(`td[data-col="${key}"]`).innerText()).replace(/\s*over estimate\s*$/, '').replace(/\s*✎\s*$/, '').trim();
  return out;
}
const expected = (figures: Figures, keys = [...HOURS, ...MONEY]) => Object.fromEntries(keys.map((k) => [k, shown(k, figures[k] as number)]));

async function totalsShown(): Promise<Record<string, string>> {
  const row = page.locator('tfoot tr');
  const out: Record<string, string> = {};
  for (const key of [...HOURS, ...MONEY]) out[key] = (await row.locator(`td[data-col="${key}"]`).innerText()).replace(/\s*over estimate\s*$/, '').trim();
  return out;
}

type Box = { x: number; y: number; width: number; height: number };

/** Every element the locator finds lies inside the box (the window, a panel), with nothing cut off at either side. */
async function expectInside(what: string, elements: Locator, box: Box): Promise<void> {
  const boxes = await elements.evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { text: (el.textContent ?? '').trim().slice(0, 40), left: r.left, right: r.right };
    }),
  );
  expect(boxes.length).toBeGreaterThan(0);
  const outside = boxes.filter((b) => b.left < box.x - 0.5 || b.right > box.x + box.width + 0.5);
  expect({ what, outside }).toEqual({ what, outside: [] });
}

/** Whether an element's content is wider than its box (what a scrolling table wrapper hides). */
const scrollsSideways = (element: Locator) => element.evaluate((el) => el.scrollWidth > el.clientWidth + 1);

/** At 1280 px the breakdown panel shows every column of its table: each cell inside the panel and the window, none scrolled away. */
async function expectWholePanel(panel: Locator): Promise<void> {
  const viewport = page.viewportSize() as { width: number; height: number };
  expect(viewport.width).toBe(1280);
  const panelBox = (await panel.boundingBox()) as Box;
  expect(panelBox.x + panelBox.width).toBeLessThanOrEqual(viewport.width + 0.5);
  const table = panel.locator('table.roles');
  expect(await table.locator('thead th').allInnerTexts()).toEqual(['Role / member', 'Rate', 'Est. hours', 'Logged', 'Est. cost', 'Actual cost']);
  expect(await scrollsSideways(table.locator('xpath=..'))).toBe(false);
  await expectInside('the breakdown table at 1280 px', table.locator('th, td'), panelBox);
}

async function expectRowsToMatch(data: TaskList): Promise<void> {
  await page.locator('tbody tr.task-row').first().waitFor();
  const ids = await page.locator('tbody tr.task-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row-id')));
  expect(ids.sort()).toEqual(data.tasks.map((t) => t.id).sort());
  for (const task of data.tasks) {
    expect({ task: task.name, ...(await figuresOfRow(task.id)) }).toEqual({ task: task.name, ...expected(task) });
    const marked = await page.locator(`tr[data-row-id="${task.id}"]`).evaluate((tr) => tr.classList.contains('over-budget'));
    expect({ task: task.name, overBudget: marked }).toEqual({ task: task.name, overBudget: (task.variance as number) < 0 });
    // A task that cost more than its estimate says so in words (its variance, not the project's budget).
    const variance = await page.locator(`tr[data-row-id="${task.id}"] td[data-col="variance"]`).innerText();
    expect({ task: task.name, saysOver: /over estimate$/.test(variance.trim()) }).toEqual({ task: task.name, saysOver: (task.variance as number) < 0 });
  }
  expect(await totalsShown()).toEqual(expected(data.totals));
}

describeInBrowser('the finance screen in Chromium', () => {
  beforeAll(async () => {
    const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', 'web'], { cwd: ROOT, stdio: 'inherit' });
    expect(build.status).toBe(0);
    const dataDir = path.join(scratchDir('pfs-e2e-'), 'data');
    service = await startService({ DATA_DIR: dataDir, SEED_DEMO: 'true', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' });
    // The token is printed right after the URL, once the service is listening: read as the output comes
    // (however slow the machine; jest's bound stops a hang), or the service's exit is the failure.
    const running = service;
    token = await new Promise<string>((resolve, reject) => {
      const seen = () => {
        const match = /export TOKEN=(pft_\S+)/.exec(running.output());
        if (!match) return;
        running.child.stdout?.off('data', seen);
        running.child.stderr?.off('data', seen);
        resolve(match[1] as string);
      };
      running.child.stdout?.on('data', seen);
      running.child.stderr?.on('data', seen);
      void running.exited.then((code) => reject(new Error(`the service exited (${code}) before printing its token:\n${running.output()}`)));
      seen();
    });
    expect(service.output()).toContain(`Finance screen: ${service.baseUrl}/`);
    const projects = await api<TaskList['project'][]>('/projects');
    project = projects[0] as TaskList['project'];

    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      args: FLAGS,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    // Every wait is on a condition of the page; none gives up on its own (0), jest's bound stops a hang.
    page.setDefaultTimeout(0);
    page.on('console', (message) => {
      // The 401 (a wrong token) and the 412 are part of the scenario; the browser logs every non-2xx fetch.
      if (message.type() !== 'error' || /status of (401|412)/.test(message.text())) return;
      // A service without the budget route answers it 404 and the screen hides the panel.
      if (/status of 404/.test(message.text()) && /\/api\/projects\/[^/]+\/budget/.test(message.location().url)) return;
      consoleErrors.push(message.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await context?.close();
    if (service) await kill(service);
  });

  it('signs in with the printed token, lists the demo project as the API does, filters, groups and expands', async () => {
    await step('sign-in', async () => {
      await page.goto(`${service.baseUrl}/`);
      await page.getByLabel('API token').fill('pft_not_a_real_token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('role').filter({ hasText: 'admin' }).waitFor();
      await page.getByLabel('Project', { exact: true }).selectOption(project.id);
    });

    await step('all tasks', async () => expectRowsToMatch(await list()));

    await step('billable filter', async () => {
      await page.getByLabel('Billable', { exact: true }).selectOption('non-billable');
      const nonBillable = await list('billable_filter=non-billable');
      expect(nonBillable.tasks.length).toBeGreaterThan(0);
      const billable = (await list()).tasks.find((t) => t.billable) as ListTask;
      await page.locator(`tr[data-row-id="${billable.id}"]`).waitFor({ state: 'detached' });
      await expectRowsToMatch(nonBillable);
      await page.getByLabel('Billable', { exact: true }).selectOption('all');
    });

    await step('group by status', async () => {
      await page.getByLabel('Group by', { exact: true }).selectOption('status');
      const grouped = await list('group_by=status');
      const groups = grouped.groups ?? [];
      expect(groups.length).toBeGreaterThan(1);
      for (const group of groups) {
        await page.locator(`tr[data-row-id="group:${group.group_name}"]`).waitFor();
        expect({ group: group.group_name, ...(await figuresOfRow(`group:${group.group_name}`)) }).toEqual({ group: group.group_name, ...expected(group) });
      }
      const first = groups[0] as (typeof groups)[number];
      const firstTask = first.task_ids[0] as string;
      await page.locator(`tr[data-row-id="${firstTask}"]`).waitFor();
      await page.getByRole('button', { name: `Collapse group ${first.group_name}` }).click();
      await page.locator(`tr[data-row-id="${firstTask}"]`).waitFor({ state: 'detached' });
      await page.getByRole('button', { name: `Expand group ${first.group_name}` }).click();
      await page.locator(`tr[data-row-id="${firstTask}"]`).waitFor();
      await page.getByLabel('Group by', { exact: true }).selectOption('');
      await page.locator('tr.group-row').first().waitFor({ state: 'detached' });
    });

    await step('expand a parent', async () => {
      const parent = (await list()).tasks.find((t) => t.sub_tasks_count > 0) as ListTask;
      const children = await list(`parent_task_id=${parent.id}`);
      await page.getByRole('button', { name: `Expand subtasks of ${parent.name}` }).click();
      for (const child of children.tasks) {
        await page.locator(`tr[data-row-id="${child.id}"]`).waitFor();
        expect({ task: child.name, ...(await figuresOfRow(child.id)) }).toEqual({ task: child.name, ...expected(child) });
      }
    });
  });

  it('shows a task\'s breakdown: summary, role groups with members, and the chart', async () => {
    await step('breakdown', async () => {
      const parent = (await list()).tasks.find((t) => t.sub_tasks_count > 0) as ListTask;
      const leaf = (await list(`parent_task_id=${parent.id}`)).tasks.find((t) => t.sub_tasks_count === 0) as ListTask;
      type Breakdown = { task: Figures & { name: string }; grouped_members: (Figures & { jobRole: string; members: (Figures & { name: string })[] })[] };
      const breakdown = await api<Breakdown>(`/project-finance/task/${leaf.id}/breakdown`);
      await page.getByRole('button', { name: `Breakdown of ${leaf.name}` }).click();
      const panel = page.getByRole('complementary', { name: leaf.name });
      await panel.locator('dl').waitFor();
      const summary = await panel.locator('dd').allInnerTexts();
      const keys = ['estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost'];
      // A service with revenue and margin (section 8) shows them after the costs.
      if (breakdown.task.actual_revenue !== undefined) keys.push('estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin');
      expect(summary).toEqual(keys.map((k) => shown(k, breakdown.task[k] as number)));
      expect(breakdown.grouped_members.length).toBeGreaterThan(0);
      const groupRows: string[][] = [];
      for (const row of await panel.locator('tr.group-row').all()) groupRows.push((await row.locator('th, td').allInnerTexts()).map((t) => t.trim()));
      expect(groupRows).toEqual(
        breakdown.grouped_members.map((g) => [g.jobRole, '', hours.format(g.estimated_hours as number), hours.format(g.logged_hours as number), usd.format(g.estimated_cost as number), usd.format(g.actual_cost as number)]),
      );
      const memberNames = await panel.locator('tr.member-row th').allInnerTexts();
      expect(memberNames).toEqual(breakdown.grouped_members.flatMap((g) => g.members.map((m) => m.name)));
      await expectWholePanel(panel);
      await panel.locator('canvas[role="img"]').waitFor();
      await panel.getByRole('button', { name: 'Close the breakdown' }).click();
      await panel.waitFor({ state: 'detached' });
    });
  });

  it('shows how a member\'s actual cost is made up (cost lines), and previews a rate change before saving it', async () => {
    await step('cost lines', async () => {
      // The demo's Bob Smith worked on the regression suite before the engineers' raise, after it, and after his promotion.
      const qa = (await list()).tasks.find((t) => t.name === 'Quality assurance') as ListTask;
      const suite = (await list(`parent_task_id=${qa.id}`)).tasks.find((t) => t.name === 'Regression suite') as ListTask;
      type Line = { job_role: string; hourly_rate: number; logged_hours: number; actual_cost: number; first_day: string; last_day: string };
      type Member = { name: string; cost_lines: Line[] };
      const breakdown = await api<{ members: Member[] }>(`/project-finance/task/${suite.id}/breakdown`);
      const bob = breakdown.members.find((m) => m.name === 'Bob Smith') as Member;
      expect(bob.cost_lines.length).toBeGreaterThan(1);
      const toggle = page.getByRole('button', { name: `Expand subtasks of ${qa.name}` });
      if (await toggle.count()) await toggle.click();
      await page.getByRole('button', { name: `Breakdown of ${suite.name}` }).click();
      const panel = page.getByRole('complementary', { name: suite.name });
      await panel.locator('tr.cost-line').first().waitFor();
      const shownLines: string[][] = [];
      for (const row of await panel.locator('tr.cost-line').all()) shownLines.push((await row.locator('th, td').allInnerTexts()).map((t) => t.trim()));
      // Every member with more than one line shows them all; Bob's are among them, as the API gives them.
      const expectedLines = bob.cost_lines.map((l) => [
        `${l.job_role}, ${l.first_day === l.last_day ? l.first_day : `${l.first_day} to ${l.last_day}`}`,
        usd.format(l.hourly_rate),
        '',
        hours.format(l.logged_hours),
        '',
        usd.format(l.actual_cost),
      ]);
      for (const line of expectedLines) expect(shownLines).toContainEqual(line);
      // The longest labels of the demo (cost lines of a promotion) still leave every column in view.
      await expectWholePanel(panel);
      await panel.getByRole('button', { name: 'Close the breakdown' }).click();
      await panel.waitFor({ state: 'detached' });
    });

    await step('rate preview', async () => {
      type Card = { roles: { job_role_id: string; job_role_name: string; hourly_rate: number }[] };
      const card = await api<Card>(`/projects/${project.id}/rate-card`);
      const engineer = card.roles.find((r) => r.job_role_name === 'Engineer') as Card['roles'][number];
      const body = { effective_from: '2026-10-20', roles: card.roles.map((r) => ({ job_role_id: r.job_role_id, hourly_rate: r.job_role_id === engineer.job_role_id ? 130 : r.hourly_rate })) };
      type Totals = { total_estimated_cost: number; total_actual_cost: number };
      const expectedPreview = await api<{ project_totals: { before: Totals; after: Totals }; tasks: unknown[] }>(`/projects/${project.id}/rate-card/preview`, { method: 'POST', body });
      const section = page.locator('section.rate-card');
      await section.getByRole('button', { name: 'Edit rates' }).click();
      await section.getByLabel('Hourly rate of Engineer', { exact: true }).fill('130');
      await section.getByLabel('Effective from').fill('2026-10-20');
      await section.getByRole('button', { name: 'Preview' }).click();
      const totals = section.getByRole('table', { name: 'Project totals' });
      await totals.waitFor();
      const cells = (await totals.locator('tbody tr').first().locator('td').allInnerTexts()).map((t) => t.trim());
      expect(cells).toEqual([usd.format(expectedPreview.project_totals.before.total_estimated_cost), usd.format(expectedPreview.project_totals.after.total_estimated_cost)]);
      const actual = (await totals.locator('tbody tr').nth(1).locator('td').allInnerTexts()).map((t) => t.trim());
      expect(actual).toEqual([usd.format(expectedPreview.project_totals.before.total_actual_cost), usd.format(expectedPreview.project_totals.after.total_actual_cost)]);
      await section.getByText(`${expectedPreview.tasks.length} tasks change:`).waitFor();
      // Nothing was written by the preview; cancelling leaves the card as it was.
      await section.getByRole('button', { name: 'Cancel' }).click();
      expect((await api<Card>(`/projects/${project.id}/rate-card`)).roles).toEqual(card.roles);
    });
  });

  it('edits a fixed cost in place, resolves a 412, and refreshes the roll-ups', async () => {
    const parent = (await list()).tasks.find((t) => t.sub_tasks_count > 0) as ListTask;
    const leaf = (await list(`parent_task_id=${parent.id}`)).tasks.find((t) => t.sub_tasks_count === 0) as ListTask;
    const cell = page.locator(`tr[data-row-id="${leaf.id}"] td[data-col="fixed_cost"]`);
    const input = page.getByLabel(`Fixed cost of ${leaf.name} (USD)`);

    await step('validation', async () => {
      await page.getByRole('button', { name: `Edit fixed cost of ${leaf.name}` }).click();
      await input.fill('-5');
      await cell.getByRole('button', { name: 'Save' }).click();
      await cell.getByRole('alert').filter({ hasText: '0 or more' }).waitFor();
      expect(await input.getAttribute('aria-invalid')).toBe('true');
      await cell.getByRole('button', { name: 'Cancel' }).click();
    });

    await step('save', async () => {
      await page.getByRole('button', { name: `Edit fixed cost of ${leaf.name}` }).click();
      await input.fill('123.45');
      await cell.getByRole('button', { name: 'Save' }).click();
      await cell.filter({ hasText: '$123.45' }).waitFor();
      const after = await list();
      const parentAfter = after.tasks.find((t) => t.id === parent.id) as ListTask;
      expect(parentAfter.fixed_cost).toBeGreaterThan(parent.fixed_cost as number);
      await page.locator(`tr[data-row-id="${parent.id}"] td[data-col="fixed_cost"]`).filter({ hasText: usd.format(parentAfter.fixed_cost as number) }).waitFor();
      await page.locator('tfoot td[data-col="fixed_cost"]').filter({ hasText: usd.format(after.totals.fixed_cost as number) }).waitFor();
      expect(await totalsShown()).toEqual(expected(after.totals));
    });

    await step('412', async () => {
      await page.getByRole('button', { name: `Edit fixed cost of ${leaf.name}` }).click();
      await input.waitFor();
      // Behind the page's back: someone else sets the fixed cost after the page read the version.
      await api(`/project-finance/task/${leaf.id}/fixed-cost`, { method: 'PUT', body: { fixed_cost: 200 } });
      await input.fill('150');
      await cell.getByRole('button', { name: 'Save' }).click();
      await cell.getByRole('alert').filter({ hasText: 'changed this fixed cost meanwhile' }).filter({ hasText: '$200.00' }).waitFor();
      await cell.getByRole('button', { name: 'Save anyway' }).click();
      await cell.filter({ hasText: '$150.00' }).waitFor();
      const breakdown = await api<{ task: Figures }>(`/project-finance/task/${leaf.id}/breakdown`);
      expect(breakdown.task.fixed_cost).toBe(150);
      const after = await list();
      await page.locator('tfoot td[data-col="fixed_cost"]').filter({ hasText: usd.format(after.totals.fixed_cost as number) }).waitFor();
    });
  });

  it('downloads CSV and XLSX exports whose figures are the API\'s', async () => {
    const now = await list();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-downloads-'));
    const download = async (label: string) => {
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: label }).click()]);
      const target = path.join(dir, file.suggestedFilename());
      await file.saveAs(target);
      return target;
    };
    await step('csv', async () => {
      const file = await download('Export CSV');
      expect(path.basename(file)).toMatch(/\.csv$/);
      const rows = fs.readFileSync(file, 'utf8').trim().split(/\r?\n/).map((line) => line.split(','));
      const header = rows[0] as string[];
      const at = (name: string) => header.findIndex((h) => h.startsWith(name));
      const total = rows.find((r) => r[0] === 'Total') as string[];
      expect(Number(total[at('Fixed cost')])).toBe(now.totals.fixed_cost);
      expect(Number(total[at('Variance')])).toBe(now.totals.variance);
      for (const task of now.tasks) {
        const row = rows.find((r) => r[1] === task.id) as string[];
        expect({ task: task.name, fixed: Number(row[at('Fixed cost')]), variance: Number(row[at('Variance')]) }).toEqual({ task: task.name, fixed: task.fixed_cost, variance: task.variance });
      }
    });
    await step('xlsx', async () => {
      const file = await download('Export XLSX');
      expect(path.basename(file)).toMatch(/\.xlsx$/);
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(file);
      const sheet = book.worksheets[0] as ExcelJS.Worksheet;
      const values: unknown[][] = [];
      sheet.eachRow((row) => values.push((row.values as unknown[]).slice(1)));
      const header = (values[0] as string[]).map(String);
      const col = (name: string) => header.findIndex((h) => h.startsWith(name));
      const total = values.find((r) => r[0] === 'Total') as unknown[];
      expect(Number(total[col('Fixed cost')])).toBe(now.totals.fixed_cost);
      expect(Number(total[col('Total actual cost')])).toBe(now.totals.total_actual_cost);
      for (const task of now.tasks) {
        const row = values.find((r) => r[1] === task.id) as unknown[];
        expect({ task: task.name, fixed: Number(row[col('Fixed cost')]), actual: Number(row[col('Total actual cost')]) }).toEqual({ task: task.name, fixed: task.fixed_cost, actual: task.total_actual_cost });
      }
    });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows revenue and margin (a toggle, margin % in the totals), missing rates, a member\'s rates explained, and an admin\'s own rates after a preview', async () => {
    /*
     * A project of its own, by hand: Dev costs $80.00 and bills $120.00 an hour, Ops costs $50.00 and
     * bills nothing (since 2020). Ann (Dev) is assigned "Build" (billable, 10 h estimated) and "Admin"
     * (non-billable, 5 h); she logs 4 h on Build and 1 h on Admin; Oscar (Ops) logs 2 h on Build.
     *   Build: est. cost 10 x 80 = 800.00, est. revenue 10 x 120 = 1,200.00, est. margin 400.00;
     *          actual cost 4 x 80 + 2 x 50 = 420.00, actual revenue 4 x 120 + 2 x 0 = 480.00, margin 60.00.
     *   Admin: est. cost 400.00, actual cost 80.00, no revenue: margins -400.00 and -80.00.
     *   Totals: est. revenue 1,200.00, actual revenue 480.00, est. margin 0.00, actual margin -20.00:
     *           -20 / 480 = -4.1666...% of revenue, shown "-4.2%".
     * Oscar has no bill rate on a billable task of a project that bills: Build and the totals say
     * "missing rates", Build's breakdown warns MISSING_BILL_RATE for him.
     */
    // A service without the figures of section 8 fails here, at once, rather than waiting for cells that never come.
    expect(Object.keys((await list()).totals)).toEqual(expect.arrayContaining(['estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'has_missing_rates']));
    const dev = await api<{ id: string }>('/job-roles', { method: 'POST', body: { name: 'Dev (revenue check)' } });
    const ops = await api<{ id: string }>('/job-roles', { method: 'POST', body: { name: 'Ops (revenue check)' } });
    const ann = await api<{ id: string }>('/team-members', { method: 'POST', body: { name: 'Ann Revenue' } });
    const oscar = await api<{ id: string }>('/team-members', { method: 'POST', body: { name: 'Oscar Ops' } });
    const own = await api<TaskList['project']>('/projects', { method: 'POST', body: { name: 'Revenue check', currency: 'USD', time_zone: 'UTC' } });
    await api(`/projects/${own.id}/members/${ann.id}`, { method: 'PUT', body: { job_role_id: dev.id, effective_from: '2020-01-01' } });
    await api(`/projects/${own.id}/members/${oscar.id}`, { method: 'PUT', body: { job_role_id: ops.id, effective_from: '2020-01-01' } });
    const costsOnly = { effective_from: '2020-01-01', roles: [{ job_role_id: dev.id, hourly_rate: 80 }, { job_role_id: ops.id, hourly_rate: 50 }] };
    await api(`/projects/${own.id}/rate-card`, { method: 'PUT', body: costsOnly });
    const build = await api<{ id: string; name: string }>(`/projects/${own.id}/tasks`, { method: 'POST', body: { name: 'Build', estimated_hours: 10, billable: true, assignee_ids: [ann.id] } });
    const admin = await api<{ id: string; name: string }>(`/projects/${own.id}/tasks`, { method: 'POST', body: { name: 'Admin', estimated_hours: 5, billable: false, assignee_ids: [ann.id] } });
    const log = (task: string, member: string, hoursLogged: number) =>
      api(`/tasks/${task}/time-logs`, { method: 'POST', body: { team_member_id: member, hours: hoursLogged, logged_at: '2026-06-01T10:00:00Z' } });
    await log(build.id, ann.id, 4);
    await log(admin.id, ann.id, 1);
    await log(build.id, oscar.id, 2);

    const toggle = page.getByLabel('Revenue and margin');
    const cell = (row: string, key: string) => page.locator(`tr[data-row-id="${row}"] td[data-col="${key}"]`);
    const REVENUE = ['estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin'];
    const rowShown = async (row: string) => Object.fromEntries(await Promise.all(REVENUE.map(async (k) => [k, (await cell(row, k).innerText()).trim()])));
    const totalsCell = (key: string) => page.locator(`tfoot td[data-col="${key}"]`);

    await step('a project that bills nothing', async () => {
      await page.reload();
      await page.getByLabel('Project', { exact: true }).selectOption(own.id);
      await page.locator(`tr[data-row-id="${build.id}"]`).waitFor();
      await page.getByText('This project bills nothing').waitFor();
      expect(await toggle.isChecked()).toBe(false);
      expect(await page.locator('td[data-col="actual_revenue"]').count()).toBe(0);
      await toggle.check();
      await cell(build.id, 'actual_revenue').waitFor();
      // Nothing billed: no revenue, the margins are minus the costs.
      expect(await rowShown(build.id)).toEqual({ estimated_revenue: '$0.00', actual_revenue: '$0.00', estimated_margin: '-$800.00', actual_margin: '-$420.00' });
      expect((await totalsCell('actual_margin').locator('.margin-percent').innerText()).trim()).toBe('no revenue');
      expect(await page.locator('.missing-rates').count()).toBe(0);
    });

    await step('revenue, margin and margin %', async () => {
      await api(`/projects/${own.id}/rate-card`, { method: 'PUT', body: { effective_from: '2020-01-01', roles: [{ job_role_id: dev.id, hourly_rate: 80, bill_rate: 120 }, { job_role_id: ops.id, hourly_rate: 50 }] } });
      // Read afresh: the project bills now, so the columns are on without touching the toggle.
      await page.reload();
      await page.getByLabel('Project', { exact: true }).selectOption(own.id);
      await cell(build.id, 'actual_revenue').waitFor();
      expect(await toggle.isChecked()).toBe(true);
      expect(await page.getByText('This project bills nothing').count()).toBe(0);
      expect(await rowShown(build.id)).toEqual({ estimated_revenue: '$1,200.00', actual_revenue: '$480.00', estimated_margin: '$400.00', actual_margin: '$60.00' });
      expect(await rowShown(admin.id)).toEqual({ estimated_revenue: '$0.00', actual_revenue: '$0.00', estimated_margin: '-$400.00', actual_margin: '-$80.00' });
      const totals = Object.fromEntries(await Promise.all(REVENUE.map(async (k) => [k, (await totalsCell(k).innerText()).split('\n')[0]?.trim()])));
      expect(totals).toEqual({ estimated_revenue: '$1,200.00', actual_revenue: '$480.00', estimated_margin: '$0.00', actual_margin: '-$20.00' });
      expect((await totalsCell('actual_margin').locator('.margin-percent').innerText()).trim()).toBe('-4.2% of revenue');
      // Missing rates: Build (Oscar bills nothing there) and the totals say so, Admin (non-billable) does not.
      expect(await page.locator(`tr[data-row-id="${build.id}"] .missing-rates`).count()).toBe(1);
      expect(await page.locator(`tr[data-row-id="${admin.id}"] .missing-rates`).count()).toBe(0);
      expect(await page.locator('tfoot .missing-rates').count()).toBe(1);
      // The toggle hides them again.
      await toggle.uncheck();
      await cell(build.id, 'actual_revenue').waitFor({ state: 'detached' });
      await toggle.check();
      await cell(build.id, 'actual_revenue').waitFor();
    });

    const panel = page.getByRole('complementary', { name: build.name });
    const rates = panel.locator('section.member-rates');
    await step('warnings and a member\'s rates explained', async () => {
      await page.getByRole('button', { name: `Breakdown of ${build.name}` }).click();
      await panel.locator('dl').waitFor();
      const warnings = panel.locator('.warnings li');
      expect(await warnings.evaluateAll((items) => items.map((li) => [li.getAttribute('data-code'), li.getAttribute('data-member')]))).toEqual([['MISSING_BILL_RATE', oscar.id]]);
      expect((await warnings.first().innerText()).trim()).toBe('Oscar Ops has no bill rate on some day that counts (billed at 0)');
      const summary = await panel.locator('dl.summary').first().locator('dd').allInnerTexts();
      expect(summary.slice(-4)).toEqual(['$1,200.00', '$480.00', '$400.00', '$60.00']);
      await panel.getByRole('button', { name: 'Rates of Oscar Ops' }).click();
      await rates.locator('dd[data-rate="bill_rate"]').waitFor();
      expect((await rates.locator('dd[data-rate="role"]').innerText()).trim()).toBe('Ops (revenue check)');
      expect((await rates.locator('dd[data-rate="hourly_rate"]').innerText()).trim()).toBe('$50.00 per hour: Ops (revenue check)\'s rate, since 2020-01-01');
      expect((await rates.locator('dd[data-rate="bill_rate"]').innerText()).trim()).toBe('$0.00 per hour: no rate: counts as 0');
      await rates.getByText('No own rates: the role\'s rates apply.').waitFor();
    });

    await step('own rates with a preview', async () => {
      await rates.getByRole('button', { name: 'Set own rates' }).click();
      await rates.getByLabel('Bill rate', { exact: true }).fill('90');
      await rates.getByLabel('Effective from').fill('2020-01-01');
      await rates.getByRole('button', { name: 'Preview' }).click();
      const preview = rates.locator('table.rate-preview');
      await preview.waitFor();
      const row = async (key: string) => (await preview.locator(`tr[data-rate="${key}"] td`).allInnerTexts()).map((t) => t.trim());
      expect(await row('hourly_rate')).toEqual(['$50.00 (role)', '$50.00 (role)']);
      expect(await row('bill_rate')).toEqual(['$0.00 (none)', '$90.00 (member)']);
      // Nothing written by the preview.
      type Explanation = { bill_rate: { amount: number; source: string; effective_from: string | null }; overrides: unknown[] };
      expect((await api<Explanation>(`/projects/${own.id}/members/${oscar.id}/rates`)).overrides).toEqual([]);

      await rates.getByRole('button', { name: 'Save own rates' }).click();
      await rates.getByRole('status').filter({ hasText: 'Rates of Oscar Ops saved from 2020-01-01 on' }).waitFor();
      expect((await api<Explanation>(`/projects/${own.id}/members/${oscar.id}/rates`)).bill_rate).toEqual({ amount: 90, source: 'member', effective_from: '2020-01-01' });
      // Oscar's 2 h now bill 2 x 90 = 180.00: Build earns 660.00 (margin 240.00); the totals 660.00 and
      // 160.00, 160 / 660 = 24.24...% of revenue; no rate is missing any more.
      await cell(build.id, 'actual_revenue').filter({ hasText: '$660.00' }).waitFor();
      expect(await rowShown(build.id)).toEqual({ estimated_revenue: '$1,200.00', actual_revenue: '$660.00', estimated_margin: '$400.00', actual_margin: '$240.00' });
      await totalsCell('actual_margin').locator('.margin-percent').filter({ hasText: '24.2% of revenue' }).waitFor();
      expect((await totalsCell('actual_margin').innerText()).split('\n')[0]?.trim()).toBe('$160.00');
      await page.locator('.missing-rates').first().waitFor({ state: 'detached' });
      await rates.locator('dd[data-rate="bill_rate"]').filter({ hasText: '$90.00 per hour: the member\'s own rate, since 2020-01-01' }).waitFor();
      expect((await rates.locator('table.overrides tbody tr').first().locator('th, td').allInnerTexts()).slice(0, 3).map((t) => t.trim())).toEqual(['2020-01-01', 'role\'s', '$90.00']);
      await panel.locator('.warnings').waitFor({ state: 'detached' });
      // The write is the project's latest event, said in words.
      await page.locator('.event-list li').first().filter({ hasText: 'Own rates of Oscar Ops from 2020-01-01: cost the role\'s, bill $90.00' }).waitFor();
      await panel.getByRole('button', { name: 'Close the breakdown' }).click();
      await panel.waitFor({ state: 'detached' });
    });

    await step('a viewer reads the rates and cannot set them', async () => {
      const viewer = await api<{ token: string }>('/tokens', { method: 'POST', body: { name: 'screen viewer', role: 'viewer' } });
      const other = await context.newPage();
      try {
        await other.goto(`${service.baseUrl}/`);
        await other.getByLabel('API token').fill(viewer.token);
        await other.getByRole('button', { name: 'Sign in' }).click();
        await other.getByTestId('role').filter({ hasText: 'viewer' }).waitFor();
        await other.getByLabel('Project', { exact: true }).selectOption(own.id);
        await other.getByRole('button', { name: `Breakdown of ${build.name}` }).click();
        await other.getByRole('button', { name: 'Rates of Oscar Ops' }).click();
        const viewerRates = other.getByRole('complementary', { name: build.name }).locator('section.member-rates');
        await viewerRates.locator('dd[data-rate="bill_rate"]').filter({ hasText: '$90.00 per hour: the member\'s own rate' }).waitFor();
        await viewerRates.getByText('Only admins set a member\'s own rates.').waitFor();
        expect(await viewerRates.getByRole('button', { name: 'Set own rates' }).count()).toBe(0);
      } finally {
        await other.close();
      }
    });

    await step('revenue at 390 px', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator('table.tasks').waitFor();
      expect(Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'))).toBeLessThanOrEqual(0);
      expect(await scrollsSideways(page.locator('table.tasks').locator('xpath=..'))).toBe(false);
      const phone = { x: 0, y: 0, width: 390, height: 844 };
      for (const key of REVENUE) await expectInside(`${key} at 390 px`, page.locator(`table.tasks td[data-col="${key}"]`), phone);
      await expectInside('the margin % at 390 px', page.locator('tfoot .margin-percent'), phone);
      await expectInside('the revenue toggle at 390 px', page.locator('.toggle label'), phone);
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.getByLabel('Project', { exact: true }).selectOption(project.id);
      await page.locator('table.tasks tbody tr.task-row').first().waitFor();
    });
  });

  it('shows the budget (bars, thresholds, crossings, a monthly budget\'s months) and the project\'s latest events', async () => {
    /*
     * A project of its own with hand-computable figures: one member at $100.00 an hour (since 2020),
     * a budget of $1,000.00 and 10 hours, alerts at 50, 80 and 100%.
     */
    const role = await api<{ id: string }>('/job-roles', { method: 'POST', body: { name: 'Budget checker' } });
    const member = await api<{ id: string }>('/team-members', { method: 'POST', body: { name: 'Bea Budget' } });
    const own = await api<TaskList['project']>('/projects', { method: 'POST', body: { name: 'Budget check', currency: 'USD', time_zone: 'UTC' } });
    await api(`/projects/${own.id}/members/${member.id}`, { method: 'PUT', body: { job_role_id: role.id, effective_from: '2020-01-01' } });
    await api(`/projects/${own.id}/rate-card`, { method: 'PUT', body: { roles: [{ job_role_id: role.id, hourly_rate: 100 }], effective_from: '2020-01-01' } });
    const task = await api<{ id: string; name: string }>(`/projects/${own.id}/tasks`, { method: 'POST', body: { name: 'Build the thing', estimated_hours: 20, billable: true, assignee_ids: [member.id] } });
    await api(`/projects/${own.id}`, { method: 'PATCH', body: { budget: 1000, hours_budget: 10, budget_alerts: [50, 80, 100] } });
    const log = (hours: number, loggedAt?: string) => api(`/tasks/${task.id}/time-logs`, { method: 'POST', body: { team_member_id: member.id, hours, ...(loggedAt ? { logged_at: loggedAt } : {}) } });
    await log(6);

    const panel = page.locator('section.budget');
    const item = (kind: string) => panel.locator(`.budget-item[data-kind="${kind}"]`);
    const figuresOf = async (kind: string) => (await item(kind).locator('.budget-figures').innerText()).replace(/\s+/g, ' ').trim();
    const crossedShown = async (kind: string) =>
      item(kind).locator('li.threshold').evaluateAll((items) => items.map((li) => [Number(li.getAttribute('data-percent')), li.classList.contains('crossed')]));
    const marksShown = async (kind: string) =>
      item(kind).locator('.mark[data-percent]').evaluateAll((marks) => marks.map((m) => [Number(m.getAttribute('data-percent')), m.classList.contains('crossed')]));
    type Status = { period: { kind: string; from: string | null; to: string | null }; alerts: { kind: string; percent: number; crossed: boolean }[] };
    const status = (month?: string) => api<Status>(`/projects/${own.id}/budget${month ? `?month=${month}` : ''}`);
    const crossedOf = (s: Status, kind: string) => s.alerts.filter((a) => a.kind === kind).map((a) => [a.percent, a.crossed]);

    type FeedEvent = { id: string; seq: number; type: string; data: Record<string, unknown> };
    /** The project's latest events as the feed gives them (every page, filtered here), newest first. */
    const latestEvents = async (): Promise<FeedEvent[]> => {
      const mine: FeedEvent[] = [];
      for (let after = 0; ; ) {
        const feedPage = await api<{ events: FeedEvent[]; next_after: number }>(`/events?after=${after}&limit=1000`);
        mine.push(...feedPage.events.filter((e) => e.data.project_id === own.id));
        if (feedPage.events.length < 1000) break;
        after = feedPage.next_after;
      }
      return mine.reverse().slice(0, 10);
    };
    /** The events list shows the feed's latest events of the project, newest first, once it caught up. */
    const expectEventsOfFeed = async () => {
      const latest = await latestEvents();
      await page.locator(`.event-list li[data-seq="${(latest[0] as FeedEvent).seq}"]`).waitFor();
      const shownEvents = await page.locator('.event-list li').evaluateAll((items) => items.map((li) => [Number(li.getAttribute('data-seq')), li.getAttribute('data-type')]));
      expect(shownEvents).toEqual(latest.map((e) => [e.seq, e.type]));
      return latest;
    };
    const crossingsShown = () => page.locator('.event-list li.crossing .event-summary').allInnerTexts();

    await step('total budget', async () => {
      await page.reload();
      await page.getByLabel('Project', { exact: true }).selectOption(own.id);
      await panel.getByRole('heading', { name: 'Budget (whole project)' }).waitFor();
      // 6 h at $100.00: $600.00 of $1,000.00 (60%), and 6 of 10 hours (60%): the 50% thresholds crossed.
      expect(await figuresOf('money')).toBe('$600.00 of $1,000.00 (60%); $400.00 left');
      expect(await figuresOf('hours')).toBe('6.00 h of 10.00 h (60%); 4.00 h left');
      expect(await item('money').getByRole('meter').getAttribute('aria-valuenow')).toBe('60');
      const expectedCrossed = [[50, true], [80, false], [100, false]];
      expect(crossedOf(await status(), 'money')).toEqual(expectedCrossed);
      expect(await crossedShown('money')).toEqual(expectedCrossed);
      expect(await crossedShown('hours')).toEqual(expectedCrossed);
      expect(await marksShown('money')).toEqual(expectedCrossed);
      // The marks stand where their percentages are on the bar (a scale of 0 to 100% here), the fill ends at 60%.
      const bar = (await item('money').locator('.bar').boundingBox()) as Box;
      for (const percent of [50, 80, 100]) {
        const mark = (await item('money').locator(`.mark[data-percent="${percent}"]`).boundingBox()) as Box;
        expect(Math.abs(mark.x + mark.width / 2 - (bar.x + (bar.width * percent) / 100))).toBeLessThanOrEqual(2);
      }
      const fill = (await item('money').locator('.fill').boundingBox()) as Box;
      expect(Math.abs(fill.width - bar.width * 0.6)).toBeLessThanOrEqual(2);
      const latest = await expectEventsOfFeed();
      expect(latest.filter((e) => e.type === 'budget.threshold_crossed').map((e) => [e.data.kind, e.data.percent]).sort()).toEqual([['hours', 50], ['money', 50]]);
      expect((await crossingsShown()).sort()).toEqual(['Hours budget: 50% reached (6.00 h of 10.00 h)', 'Money budget: 50% reached ($600.00 of $1,000.00)']);
      await page.locator('.event-list li[data-type="time_log.created"]').filter({ hasText: '6.00 h logged by Bea Budget on Build the thing' }).waitFor();
    });

    await step('a crossing after a write elsewhere, then one the screen makes', async () => {
      // 3 more hours: $900.00 and 9 hours (90%), the 80% thresholds crossed; Refresh reads everything again.
      await log(3);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await item('money').locator('li.threshold.crossed[data-percent="80"]').waitFor();
      expect(await figuresOf('money')).toBe('$900.00 of $1,000.00 (90%); $100.00 left');
      expect(await crossedShown('hours')).toEqual([[50, true], [80, true], [100, false]]);
      expect(await marksShown('money')).toEqual([[50, true], [80, true], [100, false]]);
      await page.locator('.event-list li.crossing').filter({ hasText: 'Money budget: 80% reached ($900.00 of $1,000.00)' }).waitFor();
      await expectEventsOfFeed();
      // A fixed cost of $200.00 saved on the screen: $1,100.00 (110%) of the total budget, over it; the
      // panel and the events follow the save without a Refresh.
      await page.getByRole('button', { name: `Edit fixed cost of ${task.name}` }).click();
      await page.getByLabel(`Fixed cost of ${task.name} (USD)`).fill('200');
      await page.locator(`tr[data-row-id="${task.id}"] td[data-col="fixed_cost"]`).getByRole('button', { name: 'Save' }).click();
      await item('money').locator('li.threshold.crossed[data-percent="100"]').waitFor();
      expect(await figuresOf('money')).toBe('$1,100.00 of $1,000.00 (110%); $100.00 over');
      expect(await item('money').locator('.fill.over').count()).toBe(1);
      await page.locator('.event-list li.crossing').filter({ hasText: 'Money budget: 100% reached ($1,100.00 of $1,000.00)' }).waitFor();
      // The scale grows to hold the 110%: the 100% mark stands at 100/110 of the bar, the fill reaches its end.
      const bar = (await item('money').locator('.bar').boundingBox()) as Box;
      const mark = (await item('money').locator('.mark[data-percent="100"]').boundingBox()) as Box;
      expect(Math.abs(mark.x + mark.width / 2 - (bar.x + (bar.width * 100) / 110))).toBeLessThanOrEqual(2);
      await expectEventsOfFeed();
    });

    await step('monthly budget and its months', async () => {
      // Monthly from now on, months in the project's zone (UTC). Two months of the past, fixed days:
      // 4 h in September 2025 ($400.00, 40%) and 2 h in October 2025 ($200.00, 20%), nothing crossed
      // there. The current month is whatever the service says it is: its figures are compared with the API's.
      await api(`/projects/${own.id}`, { method: 'PATCH', body: { budget_period: 'month' } });
      await log(4, '2025-09-10T12:00:00Z');
      await log(2, '2025-10-15T12:00:00Z');
      const monthName = (m: string) => new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${m}-01T00:00:00Z`));
      type Figures = { budget: number | null; spent: number; remaining: number | null; percent_used: number | null };
      const current = await api<Status & { money: Figures; hours: Figures }>(`/projects/${own.id}/budget`);
      expect(current.period.kind).toBe('month');
      const thisMonth = (current.period.from as string).slice(0, 7);

      await page.getByRole('button', { name: 'Refresh' }).click();
      await panel.getByRole('heading', { name: `Budget, ${monthName(thisMonth)}` }).waitFor();
      expect(await panel.getByLabel('Month', { exact: true }).inputValue()).toBe(thisMonth);
      expect(await item('money').locator('[data-figure="spent"]').innerText()).toBe(usd.format(current.money.spent));
      expect(await item('hours').locator('[data-figure="spent"]').innerText()).toBe(`${hours.format(current.hours.spent)} h`);
      expect(await crossedShown('money')).toEqual(crossedOf(current, 'money'));

      const nothingCrossed = [[50, false], [80, false], [100, false]];
      await panel.getByLabel('Month', { exact: true }).fill('2025-10');
      await panel.getByRole('heading', { name: 'Budget, October 2025' }).waitFor();
      expect(await figuresOf('money')).toBe('$200.00 of $1,000.00 (20%); $800.00 left');
      expect(await figuresOf('hours')).toBe('2.00 h of 10.00 h (20%); 8.00 h left');
      expect(crossedOf(await status('2025-10'), 'money')).toEqual(nothingCrossed);
      expect(await crossedShown('money')).toEqual(nothingCrossed);

      await panel.getByRole('button', { name: 'Previous month' }).click();
      await panel.getByRole('heading', { name: 'Budget, September 2025' }).waitFor();
      expect(await panel.getByLabel('Month', { exact: true }).inputValue()).toBe('2025-09');
      expect(await figuresOf('money')).toBe('$400.00 of $1,000.00 (40%); $600.00 left');
      expect(await figuresOf('hours')).toBe('4.00 h of 10.00 h (40%); 6.00 h left');
      expect(await crossedShown('hours')).toEqual(nothingCrossed);
      expect(Number(await item('money').getByRole('meter').getAttribute('aria-valuenow'))).toBe(40);

      await panel.getByRole('button', { name: 'Next month' }).click();
      await panel.getByRole('heading', { name: 'Budget, October 2025' }).waitFor();
      expect(await figuresOf('hours')).toBe('2.00 h of 10.00 h (20%); 8.00 h left');
      await expectEventsOfFeed();
    });

    await step('budget at 390 px', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await panel.getByRole('button', { name: 'Next month' }).waitFor();
      const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
      expect(overflow).toBeLessThanOrEqual(0);
      const phone = { x: 0, y: 0, width: 390, height: 844 };
      await expectInside('the budget panel at 390 px', panel.locator('h2, h3, .budget-figures, .bar, li.threshold, .month-picker, .month-picker input, .month-picker button'), phone);
      await expectInside('the events at 390 px', page.locator('.event-list li, .event-list li > *'), phone);
      await page.setViewportSize({ width: 1280, height: 900 });
      await expectInside('the budget panel at 1280 px', panel.locator('h2, h3, .budget-figures, .bar, li.threshold, .month-picker'), { x: 0, y: 0, width: 1280, height: 900 });
    });

    await step('no budget route: no panel', async () => {
      // A service from before budgets answers the route 404: the screen goes on without the panel.
      await page.route('**/api/projects/*/budget**', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Not found' } }) }));
      await page.reload();
      await page.getByLabel('Project', { exact: true }).selectOption(own.id);
      await page.locator(`tr[data-row-id="${task.id}"]`).waitFor();
      await page.locator('.event-list li').first().waitFor();
      expect(await panel.count()).toBe(0);
      await page.unroute('**/api/projects/*/budget**');
      await page.getByLabel('Project', { exact: true }).selectOption(project.id);
      await page.locator('table.tasks tbody tr.task-row').first().waitFor();
    });
  });

  it('works at phone width and signs out; the page logged no errors', async () => {
    await step('phone', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator('table.tasks').waitFor();
      const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
      expect(overflow).toBeLessThanOrEqual(0);
      // Every task on screen shows its total estimated cost, total actual cost and variance, as the
      // API gives them, inside the 390 px without scrolling sideways (the list has none to offer).
      const now = await list();
      const phone = { x: 0, y: 0, width: 390, height: 844 };
      expect(await scrollsSideways(page.locator('table.tasks').locator('xpath=..'))).toBe(false);
      for (const key of ['total_estimated_cost', 'total_actual_cost', 'variance']) {
        await expectInside(`${key} at 390 px`, page.locator(`table.tasks tbody tr.task-row td[data-col="${key}"]`), phone);
        await expectInside(`${key} of the totals at 390 px`, page.locator(`table.tasks tfoot td[data-col="${key}"]`), phone);
      }
      for (const task of now.tasks) {
        const row = page.locator(`tr[data-row-id="${task.id}"]`);
        await expectInside(`the name of ${task.name}`, row.locator('th'), phone);
        const shownNow = await figuresOfRow(task.id, ['total_estimated_cost', 'total_actual_cost', 'variance']);
        expect({ task: task.name, ...shownNow }).toEqual({ task: task.name, ...expected(task, ['total_estimated_cost', 'total_actual_cost', 'variance']) });
      }
      const over = now.tasks.find((t) => (t.variance as number) < 0) as ListTask;
      expect(over).toBeDefined();
      await expectInside(`"over estimate" of ${over.name}`, page.locator(`tr[data-row-id="${over.id}"] td[data-col="variance"] .badge`), phone);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API token').waitFor();
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
    });
    expect(consoleErrors).toEqual([]);
  });
});
