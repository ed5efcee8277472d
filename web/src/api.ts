/*
 * The service's API as the screen uses it: Bearer token, the JSON envelope, errors as ApiError.
 * Decimal figures stay exact: JSON numbers with a fraction are kept as their source text (JSON.parse's
 * source access), and Intl.NumberFormat formats that text without going through binary floating point.
 */

import type { FigureName, LaborCostFigure, SummaryFigureName } from '../../src/finance/rules/figures';

export type Decimal = number | string;
export type Role = 'viewer' | 'editor' | 'admin';

export type Session = { team: { id: string; name: string }; role: Role; token: { id: string; name: string } };
export type Project = { id: string; name: string; currency: string; budget: Decimal | null; rate_unit?: 'hour' | 'day'; hours_per_day?: Decimal };

/** Revenue and margin (docs/api.md): absent from a service without them, so optional here. */
export type RevenueFigures = {
  estimated_revenue?: Decimal;
  actual_revenue?: Decimal;
  estimated_margin?: Decimal;
  actual_margin?: Decimal;
  /** Whether a member of the row (or of a task summed in it) has a rate that resolves to none. */
  has_missing_rates?: boolean;
};
type AmountName = Exclude<FigureName, keyof RevenueFigures>;

/** Every figure of a list row or a sum, by the names of the service's figure model (type-only import). */
export type Sums = Record<AmountName, Decimal> & RevenueFigures;

export type ListTask = Sums & {
  id: string;
  name: string;
  project_id: string;
  billable: boolean;
  currency: string;
  parent_task_id: string | null;
  sub_tasks_count: number;
  status: string | null;
  priority: string | null;
  phase: string | null;
  assignees: { team_member_id: string; name: string; job_title_name: string; hourly_rate: Decimal }[];
};

export type Group = Sums & { group_name: string; task_ids: string[] };
export type TaskList = { project: Project; tasks: ListTask[]; totals: Sums; groups?: Group[] };

/** How a member's actual cost is made up: its time on the days one (role, rate) was in force. */
export type CostLine = {
  job_role: string;
  hourly_rate: Decimal;
  bill_rate?: Decimal;
  actual_revenue?: Decimal;
  logged_hours: Decimal;
  actual_cost: Decimal;
  first_day: string;
  last_day: string;
};

export type MemberFigures = {
  team_member_id: string;
  name: string;
  hourly_rate: Decimal;
  estimated_hours: Decimal;
  logged_hours: Decimal;
  estimated_cost: Decimal;
  actual_cost: Decimal;
  cost_lines: CostLine[];
  bill_rate?: Decimal;
  estimated_revenue?: Decimal;
  actual_revenue?: Decimal;
  cost_rate_source?: RateSource;
  bill_rate_source?: RateSource;
};
export type RateSource = 'member' | 'role' | 'none';
export type RateWarning = { code: 'MISSING_COST_RATE' | 'MISSING_BILL_RATE'; team_member_id: string; name: string };
export type Breakdown = {
  task: Record<Exclude<SummaryFigureName, keyof RevenueFigures>, Decimal> & RevenueFigures & { id: string; name: string; currency: string; billable: boolean };
  warnings?: RateWarning[];
  grouped_members: {
    jobRole: string;
    estimated_hours: Decimal;
    logged_hours: Decimal;
    estimated_cost: Decimal;
    actual_cost: Decimal;
    members: MemberFigures[];
  }[];
};

export type RateCard = {
  project_id: string;
  currency: string;
  date: string;
  roles: { job_role_id: string; job_role_name: string; hourly_rate: Decimal | null; bill_rate?: Decimal | null; effective_from: string }[];
};
export type RateCardHistory = { entries: { bill_rate?: Decimal | null }[] };

/** GET /api/projects/:id/members/:team_member_id/rates (docs/api.md): a member's rates on a day, and why. */
export type ResolvedRate = { amount: Decimal; source: RateSource; effective_from: string | null };
export type MemberRateEntry = { hourly_rate: Decimal | null; bill_rate: Decimal | null; effective_from: string; written_at: string; written_by: string | null };
export type RateExplanation = {
  project_id: string;
  team_member_id: string;
  date: string;
  rate_unit: 'hour' | 'day';
  job_role: { id: string; name: string } | null;
  hourly_rate: ResolvedRate;
  bill_rate: ResolvedRate;
  overrides: MemberRateEntry[];
};

/** The summary's figures of a project's totals, and a task's costs of labor (the rate-card preview). */
export type PreviewTotals = Record<SummaryFigureName, Decimal>;
export type PreviewCosts = Record<LaborCostFigure['name'], Decimal>;
export type RatePreview = {
  project_id: string;
  currency: string;
  effective_from: string;
  project_totals: { before: PreviewTotals; after: PreviewTotals };
  tasks: { id: string; name: string; before: PreviewCosts; after: PreviewCosts }[];
};

/** GET /api/projects/:id/budget (docs/api.md): one budget's status; null budget: none set. */
export type BudgetFigures = { budget: Decimal | null; spent: Decimal; remaining: Decimal | null; percent_used: Decimal | null };
export type BudgetKind = 'money' | 'hours';
export type BudgetAlert = { kind: BudgetKind; percent: number; crossed: boolean; crossed_at: string | null };
export type BudgetStatus = {
  project_id: string;
  currency: string;
  period: { kind: 'total' | 'month'; from: string | null; to: string | null };
  money: BudgetFigures;
  hours: BudgetFigures;
  alerts: BudgetAlert[];
};

/** One event of the team's feed (GET /api/events); every event's data names its project. */
export type FeedEvent = { id: string; seq: number; type: string; occurred_at: string; data: Record<string, unknown> };
export type FeedPage = { events: FeedEvent[]; next_after: number };

/** A project's member as GET /api/projects/:id/members answers it (names for the events' summaries). */
export type ProjectMember = { team_member_id: string; name: string };

export type BillableFilter = 'all' | 'billable' | 'non-billable';
export type GroupBy = '' | 'status' | 'priority' | 'phase';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path?: string; message: string }[] = [],
  ) {
    super(message);
  }
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const keepDecimals: Reviver = (_key, value, context) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined ? context.source : value;

export function parseJson(text: string): unknown {
  return JSON.parse(text, keepDecimals as (key: string, value: unknown) => unknown);
}

export type Reply<T> = { body: T; etag: string | null };

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const parsed = parseJson(await res.text()) as { error?: { code?: string; message?: string; details?: ApiError['details'] } };
    const e = parsed.error ?? {};
    return new ApiError(res.status, e.code ?? 'ERROR', e.message ?? res.statusText, e.details ?? []);
  } catch {
    return new ApiError(res.status, 'ERROR', `The service answered ${res.status} ${res.statusText}`);
  }
}

export class Api {
  constructor(private readonly token: string) {}

  private async send(path: string, init: { method?: string; body?: unknown; ifMatch?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    if (init.ifMatch) headers['If-Match'] = init.ifMatch;
    let res: Response;
    try {
      res = await fetch(`/api${path}`, {
        method: init.method ?? 'GET',
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    } catch {
      throw new ApiError(0, 'NETWORK', 'The service cannot be reached; check that it is running');
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  async json<T>(path: string, init: { method?: string; body?: unknown; ifMatch?: string } = {}): Promise<Reply<T>> {
    const res = await this.send(path, init);
    const parsed = parseJson(await res.text()) as { body: T };
    return { body: parsed.body, etag: res.headers.get('ETag') };
  }

  async file(path: string): Promise<{ blob: Blob; fileName: string }> {
    const res = await this.send(path);
    const disposition = res.headers.get('Content-Disposition') ?? '';
    const fileName = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'export';
    return { blob: await res.blob(), fileName };
  }
}

export function listQuery(filter: BillableFilter, groupBy: GroupBy, parentTaskId?: string): string {
  const q = new URLSearchParams({ billable_filter: filter });
  if (groupBy) q.set('group_by', groupBy);
  if (parentTaskId) q.set('parent_task_id', parentTaskId);
  return q.toString();
}

/** A message a person can act on, for an error of any route. */
export function explain(err: unknown): string {
  if (!(err instanceof ApiError)) return 'Something went wrong; reload the page.';
  if (err.status === 401) return 'The token is not valid (or was revoked). Sign in with a valid token.';
  if (err.status === 403) return `Not allowed: ${err.message}.`;
  return err.message;
}
