/*
 * SQL pieces over the stored figures, shared by the statements of the read model.
 */

/**
 * The eight figures of CONTRACT section 4 a task's roll-up sums, in the contract's order: each task's
 * own as stored (its estimated hours and fixed cost are the task's; the others the calculator computed,
 * labor.ts), so no rule of the calculator's is restated here.
 */
export const ROLLED_FIGURES = [
  'estimated_hours',
  'logged_hours',
  'estimated_labor_cost',
  'actual_labor_cost',
  'fixed_cost',
  'total_estimated_cost',
  'total_actual_cost',
  'variance',
] as const;

export type RolledFigure = (typeof ROLLED_FIGURES)[number];

/** The figures that are inputs of the task itself (tasks), not stored with its labor (task_labor). */
export const TASK_FIGURES: ReadonlySet<RolledFigure> = new Set(['estimated_hours', 'fixed_cost']);

/** A task's own figure, from the task (t) or its labor row (l). */
export const ownFigure = (figure: RolledFigure) => (TASK_FIGURES.has(figure) ? `t.${figure}` : `l.${figure}`);

/** The eight summed figures of a listed task, as exact numeric text. */
export type ListedFigures = Record<RolledFigure, string>;

/** The eight figures as exact numeric text columns (`figure` gives each: a stored roll-up, or a sum of them). */
export function figureTexts(figure: (name: RolledFigure) => string): string {
  return ROLLED_FIGURES.map((name) => `trim_scale(${figure(name)}) as ${name}`).join(', ');
}

/** A JSON value of a nullable text column. */
const jsonText = (column: string) => `coalesce(to_json(${column})::text, 'null')`;

/**
 * A list row (CONTRACT section 4) as JSON text, in the contract's field order, rendered by PostgreSQL
 * from a task (t), its labor row (l), its eight rolled-up figures and sub-task count under a filter,
 * and its project's currency as JSON. Figures are exact numeric text; the assignees are the JSON
 * labor.ts stored. The integration tests check every list response against the OpenAPI document.
 */
export function listRowJson(figure: (name: RolledFigure) => string, subTasks: string, currencyJson: string, assigneesJson = 'l.assignees_json'): string {
  const number = (name: RolledFigure) => `',"${name}":' || trim_scale(${figure(name)})`;
  return `'{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || ${currencyJson}
       || ${number('estimated_hours')} || ${number('logged_hours')} || ${number('estimated_labor_cost')} || ${number('actual_labor_cost')}
       || ${number('fixed_cost')} || ${number('total_estimated_cost')} || ${number('total_actual_cost')}
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || ${subTasks}
       || ${number('variance')}
       || ',"status":' || ${jsonText('t.status')} || ',"priority":' || ${jsonText('t.priority')} || ',"phase":' || ${jsonText('t.phase')}
       || ',"assignees":' || coalesce(${assigneesJson}, '[]') || '}'`;
}
