import { FIGURE_NAMES, FIGURES, FigureName, isTaskInput } from '../rules/figures';

/*
 * SQL pieces over the stored figures, shared by the statements of the read model.
 */

/**
 * The figures a task's roll-up sums (docs/api.md, the project list), in the contract's order (figures.ts): each
 * task's own as stored (inputs of the task in tasks; the calculator's in task_labor, labor.ts), so no
 * rule of the calculator's is restated here.
 */
export const ROLLED_FIGURES = FIGURE_NAMES;

export type RolledFigure = FigureName;

/** The figures that are inputs of the task itself (tasks), not stored with its labor (task_labor). */
export const TASK_FIGURES: ReadonlySet<RolledFigure> = new Set(FIGURE_NAMES.filter(isTaskInput));

/** A task's own figure, from the task (t) or its labor row (l). */
export const ownFigure = (figure: RolledFigure) => (TASK_FIGURES.has(figure) ? `t.${figure}` : `l.${figure}`);

/** The summed figures of a listed task, as exact numeric text. */
export type ListedFigures = Record<RolledFigure, string>;

/** The figures as exact numeric text columns (`figure` gives each: a stored roll-up, or a sum of them). */
export function figureTexts(figure: (name: RolledFigure) => string): string {
  return ROLLED_FIGURES.map((name) => `trim_scale(${figure(name)}) as ${name}`).join(', ');
}

/** A JSON value of a nullable text column. */
const jsonText = (column: string) => `coalesce(to_json(${column})::text, 'null')`;

/**
 * A list row (docs/api.md, the project list) as JSON text, in the contract's field order, rendered by PostgreSQL
 * from a task (t), its labor row (l), its rolled-up figures and sub-task count under a filter,
 * and its project's currency as JSON. Figures are exact numeric text; the assignees are the JSON
 * labor.ts stored. The integration tests check every list response against the OpenAPI document.
 */
export function listRowJson(figure: (name: RolledFigure) => string, subTasks: string, currencyJson: string, assigneesJson = 'l.assignees_json'): string {
  const numbers = (summary: boolean) =>
    FIGURES.filter((entry) => entry.summary === summary)
      .map((entry) =>
        entry.unit === 'flag'
          ? `',"${entry.name}":' || case when ${figure(entry.name)} > 0 then 'true' else 'false' end`
          : `',"${entry.name}":' || trim_scale(${figure(entry.name)})`,
      )
      .join("\n       || ");
  // The summary's figures, then the tree's fields, then the figures only lists show (docs/api.md's order).
  return `'{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || ${currencyJson}
       || ${numbers(true)}
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || ${subTasks}
       || ${numbers(false)}
       || ',"status":' || ${jsonText('t.status')} || ',"priority":' || ${jsonText('t.priority')} || ',"phase":' || ${jsonText('t.phase')}
       || ',"assignees":' || coalesce(${assigneesJson}, '[]') || '}'`;
}
