/*
 * The figure model: every figure a task has, declared once. The SQL column lists of the stored
 * figures, the list row, the presenters, the export's columns, the zod schemas (and so the OpenAPI
 * document) and the screen's types (web/src/api.ts) are derived from this list. Adding a figure is an
 * entry here, its rule in the calculator (calculator.ts's TaskTotals and figuresOf), and a migration
 * for its stored columns (task_labor's own column and its tree_billable_/tree_non_billable_ roll-ups).
 *
 * Each entry: `name`, the API's name (and the stored column's); `key`, the calculator's name; `unit`,
 * hours, money or flag (a count of tasks stored and summed like the others, answered as a boolean: more
 * than 0); `source`, where a task's own value is stored: 'task' for an input of the task
 * (tasks), 'labor' for a figure the calculator computes (task_labor); `summary`, whether a task's
 * summary (a breakdown's `task`, a rate preview's totals) shows it, or only list rows and sums do; how
 * it rolls up: every figure is summed over a subtree (docs/finance-rules.md, "Subtasks roll-up").
 * The order is the exports' column order: a figure added later goes at the end, so existing columns
 * keep their places.
 */

export type FigureUnit = 'hours' | 'money' | 'flag';
export type FigureSource = 'task' | 'labor';

type FigureSpec = {
  name: string;
  key: string;
  unit: FigureUnit;
  source: FigureSource;
  summary: boolean;
  rollUp: 'sum';
  /** The export's column header. */
  header: string;
  /** What it is, for the OpenAPI document. */
  meaning: string;
};

export const FIGURES = [
  {
    name: 'estimated_hours',
    key: 'estimatedHours',
    unit: 'hours',
    source: 'task',
    summary: true,
    rollUp: 'sum',
    header: 'Estimated hours',
    meaning: 'The task estimate (with subtasks: the sum of the subtree)',
  },
  {
    name: 'logged_hours',
    key: 'loggedHours',
    unit: 'hours',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Logged hours',
    meaning: "Sum of the members' logged hours",
  },
  {
    name: 'estimated_labor_cost',
    key: 'estimatedLaborCost',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Estimated labor cost',
    meaning: "Sum of the members' estimated costs",
  },
  {
    name: 'actual_labor_cost',
    key: 'actualLaborCost',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Actual labor cost',
    meaning: "Sum of the members' actual costs",
  },
  { name: 'fixed_cost', key: 'fixedCost', unit: 'money', source: 'task', summary: true, rollUp: 'sum', header: 'Fixed cost', meaning: 'Fixed cost' },
  {
    name: 'total_estimated_cost',
    key: 'totalEstimatedCost',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Total estimated cost',
    meaning: 'estimated_labor_cost + fixed_cost',
  },
  {
    name: 'total_actual_cost',
    key: 'totalActualCost',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Total actual cost',
    meaning: 'actual_labor_cost + fixed_cost',
  },
  {
    name: 'variance',
    key: 'variance',
    unit: 'money',
    source: 'labor',
    summary: false,
    rollUp: 'sum',
    header: 'Variance',
    meaning: 'total_estimated_cost - total_actual_cost; negative when over the estimate',
  },
  {
    name: 'estimated_revenue',
    key: 'estimatedRevenue',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Estimated revenue',
    meaning: "Sum of the members' estimated revenues (0 on a non-billable task)",
  },
  {
    name: 'actual_revenue',
    key: 'actualRevenue',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Actual revenue',
    meaning: "Sum of the members' actual revenues (0 on a non-billable task)",
  },
  {
    name: 'estimated_margin',
    key: 'estimatedMargin',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Estimated margin',
    meaning: 'estimated_revenue - total_estimated_cost',
  },
  {
    name: 'actual_margin',
    key: 'actualMargin',
    unit: 'money',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Actual margin',
    meaning: 'actual_revenue - total_actual_cost',
  },
  {
    name: 'has_missing_rates',
    key: 'missingRates',
    unit: 'flag',
    source: 'labor',
    summary: true,
    rollUp: 'sum',
    header: 'Missing rates',
    meaning: 'Whether a member of the task (or of a task summed here) has a rate that resolves to none on a day that counts (the breakdown\'s warnings)',
  },
] as const satisfies readonly FigureSpec[];

export type Figure = (typeof FIGURES)[number];
export type FigureName = Figure['name'];
export type FigureKey = Figure['key'];

/** The figures of a task's summary (a breakdown's `task`): all but those only lists show. */
export type SummaryFigure = Extract<Figure, { summary: true }>;
export type SummaryFigureName = SummaryFigure['name'];
export type SummaryFigureKey = SummaryFigure['key'];

/** Figures the calculator computes and task_labor stores (the others are inputs of the task). */
export type LaborFigure = Extract<Figure, { source: 'labor' }>;
export type LaborFigureName = LaborFigure['name'];

/** Figures of a task summary that are amounts computed from its labor (a rate preview's per-task entry). */
export type LaborCostFigure = Extract<Figure, { source: 'labor'; unit: 'money'; summary: true }>;

/** The summary's figures that are amounts or hours (not flags): a rate preview's totals. */
export type AmountFigure = Extract<SummaryFigure, { unit: 'hours' | 'money' }>;

export const FIGURE_NAMES: readonly FigureName[] = FIGURES.map((figure) => figure.name);
export const SUMMARY_FIGURES = FIGURES.filter((figure): figure is SummaryFigure => figure.summary);
export const LABOR_FIGURES = FIGURES.filter((figure): figure is LaborFigure => figure.source === 'labor');
export const LABOR_COST_FIGURES = LABOR_FIGURES.filter((figure): figure is LaborCostFigure => figure.unit === 'money' && figure.summary);
export const AMOUNT_FIGURES = SUMMARY_FIGURES.filter((figure): figure is AmountFigure => figure.unit !== 'flag');

/** Whether a figure is a flag (stored as a count, answered as a boolean). */
export const isFlag = (name: FigureName): boolean => FIGURES.some((figure) => figure.name === name && figure.unit === 'flag');

/** Whether a figure is an input of the task itself (stored in tasks, not task_labor). */
export const isTaskInput = (name: FigureName): boolean => FIGURES.some((figure) => figure.name === name && figure.source === 'task');

/** Every figure of a task or a sum, as exact decimal text, by API name. */
export type FigureTexts = Record<FigureName, string>;
