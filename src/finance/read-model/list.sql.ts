import type { Knex } from 'knex';
import { prepared } from '../../db/prepared';
import { readInBatches } from '../../db/cursor';
import type { ProjectRow } from '../../projects/projects.repository';
import { manyTasks, readRows } from '../inputs/scope';
import { FIGURES_CURRENT, figuresVersionOf, stampBindings, stampCurrentOf } from './freshness';
import { ListedFigures, ROLLED_FIGURES, figureTexts, listRowJson, ownFigure } from './columns';

/*
 * The project list's and the export's reads of the stored figures (the read model): each statement
 * checks the stamp in the same snapshot (freshness.ts).
 */

/** SQL: a project with the version of its stored figures (findListedProject). */
const LISTED_PROJECT_SQL = `select p.id, p.name, p.currency, p.budget, p.time_zone, p.rate_unit, p.hours_per_day, p.created_at, p.updated_at, p.revision, p.reset_revision,
            case when ${stampCurrentOf('p')} then
              ${figuresVersionOf('p')}
            end as figures_version
     from projects p where p.team_id = :teamId and p.id = :projectId`;

/** A project as a list shows it (with how it prices: docs/finance-rules.md R21). */
export type ListedProject = ProjectRow;

/**
 * A project with the version of its stored figures the list cache keys on: its revision and the
 * stamp's generation while its figures are current at `now` (freshness.ts), else null (a list read now
 * brings them current first, and is not cached under an older version).
 */
export async function findListedProject(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
): Promise<(ListedProject & { figures_version: string | null }) | undefined> {
  const statement = db.raw(
    LISTED_PROJECT_SQL,
    { teamId, projectId, ...stampBindings(now) },
  );
  const result = await prepared(statement, 'finance_listed_project');
  return result.rows[0];
}

/** SQL: the unfiltered list's totals from the stored roll-ups (storedProjectSums). */
const PROJECT_SUMS_SQL = `select ${ROLLED_FIGURES.map(
      (figure) => `trim_scale(coalesce(sum(l.tree_billable_${figure} + l.tree_non_billable_${figure}), 0))::text as ${figure}`,
    ).join(', ')}, ${FIGURES_CURRENT} as current
     from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     where t.team_id = :teamId and t.project_id = :projectId and t.parent_task_id is null and t.archived_at is null`;

/**
 * The unfiltered project list's totals (the sums of its top-level rows' stored roll-ups), and whether
 * the stored figures are current at `now` (freshness.ts).
 */
export async function storedProjectSums(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
): Promise<ListedFigures & { current: boolean }> {
  const result = await db.raw(
    PROJECT_SUMS_SQL,
    { teamId, projectId, ...stampBindings(now) },
  );
  return result.rows[0];
}

/** A task's own stored figures (exact numeric text), as the calculator computed them. */
export type StoredOwnFigures = { task_id: string } & ListedFigures;

/** SQL: some tasks' own stored figures (storedOwnFigures). */
const OWN_FIGURES_SQL = `select ${FIGURES_CURRENT} as current, own.* from (select 1) one
     left join (
       select t.id as task_id, ${ROLLED_FIGURES.map((figure) => `${ownFigure(figure)}::text as ${figure}`).join(', ')}
       from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
         and t.id = any(string_to_array(:taskIds, ',')::uuid[])
     ) own on true`;

/**
 * The own stored figures of some tasks of a project (non-archived, with stored figures), and whether
 * the project's stored figures are current at `now` (freshness.ts) in the same snapshot.
 */
export async function storedOwnFigures(
  db: Knex,
  teamId: string,
  projectId: string,
  taskIds: readonly string[],
  now: string,
): Promise<{ current: boolean; rows: StoredOwnFigures[] }> {
  const rows = await readRows<StoredOwnFigures & { current: boolean }>(
    db,
    OWN_FIGURES_SQL,
    { teamId, projectId, taskIds: taskIds.join(','), ...stampBindings(now) },
    manyTasks(taskIds.length),
  );
  return { current: Boolean(rows[0]?.current), rows: rows.filter((row) => row.task_id !== null) };
}

/** Row shape: a listed task with its rolled-up figures under the filter, as exact numeric text. */
export type ListedRow = ListedFigures & {
  id: string;
  name: string;
  parent_task_id: string | null;
  billable: boolean;
  status: string | null;
  priority: string | null;
  phase: string | null;
  sub_tasks_count: number;
};

/** A stored roll-up column under the billable_filter: one kind's, or both kinds added. */
function rolled(column: string): string {
  return `case :filter when 'billable' then l.tree_billable_${column} when 'non-billable' then l.tree_non_billable_${column}
              else l.tree_billable_${column} + l.tree_non_billable_${column} end`;
}

/**
 * The listed tasks of a project (a task is listed when it or a descendant passes the filter) with their
 * stored roll-ups under the filter (f): the children of :parentId (null: the top level), or with
 * :allLevels every listed task.
 */
const LISTED_TASKS = `from tasks t
     join task_labor l on l.team_id = t.team_id and l.project_id = t.project_id and l.task_id = t.id
     cross join lateral (
       select ${rolled('tasks')} as tasks,
              ${ROLLED_FIGURES.map((figure) => `${rolled(figure)} as ${figure}`).join(',\n              ')},
              case :filter when 'billable' then l.children_billable when 'non-billable' then l.children_non_billable
                else l.children end as sub_tasks
     ) f
     where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
       and (cast(:allLevels as boolean) or t.parent_task_id is not distinct from cast(:parentId as uuid))
       and f.tasks > 0`;

type ListScope = { teamId: string; projectId: string; filter: 'all' | 'billable' | 'non-billable'; parentId: string | null };

/** SQL: every listed task under the filter, after a first row with the stamp check (treeRows). */
const TREE_ROWS_SQL = `select ${FIGURES_CURRENT} as current, 0 as position, null as id, null as name, null as parent_task_id, null as billable,
            null as status, null as priority, null as phase, null as sub_tasks_count,
            ${ROLLED_FIGURES.map((figure) => `null as ${figure}`).join(', ')}
     union all
     select null, row_number() over (order by t.created_at, t.id), t.id, t.name, t.parent_task_id, t.billable, t.status, t.priority, t.phase,
            f.sub_tasks, ${figureTexts((figure) => `f.${figure}`)}
       ${LISTED_TASKS}
     order by position`;

/**
 * Every listed task of a project under the filter, in creation order (what an export arranges into a
 * tree), and whether the stored figures were current for `today` (freshness.ts) in the snapshot read.
 */
export async function treeRows(db: Knex, scope: Omit<ListScope, 'parentId'>, now: string): Promise<{ current: boolean; rows: ListedRow[] }> {
  // The stamp's answer comes once, as its own first row (position 0); the tasks follow in creation
  // order (no timestamps to parse: a whole project's rows are read here), fetched in batches.
  const rows = await readInBatches<ListedRow & { current: boolean | null; position: string }>(
    db,
    TREE_ROWS_SQL,
    { ...scope, parentId: null, allLevels: true, ...stampBindings(now) },
  );
  const [stamp, ...listed] = rows;
  return { current: Boolean(stamp?.current), rows: listed };
}

/**
 * A listed row's JSON: under billable_filter=all the one refreshRollups stored (l.list_row_json), else
 * (or while a migration has left it empty) rendered here. Rendering in PostgreSQL keeps the service's
 * single thread free: each connection's statement runs in its own process.
 */
const LIST_ROW_JSON = `case when :filter = 'all' and l.list_row_json is not null then l.list_row_json
       else ${listRowJson((figure) => `f.${figure}`, 'f.sub_tasks', 'to_json(cast(:currency as text))::text')} end`;

export type ListGroupField = 'status' | 'priority' | 'phase';

/** The group a list row falls in: its field's value, tasks with none in "None" (docs/finance-rules.md R14.2). */
export const NONE_GROUP = 'None';

/** A project list in one row, or with groups one row for the whole list (group_name null) and one per group. */
export type ListSummaryRow = ListedFigures & {
  group_name: string | null;
  /** The listed rows as a JSON array's items (whole list only). */
  rows_json: string | null;
  /** The group's task ids as a JSON array's items (groups only). */
  ids_json: string | null;
  /** Whether the project's stored figures were current for the day asked (freshness.ts) in the snapshot read. */
  current: boolean;
};

function listSql(groupBy: ListGroupField | undefined): string {
  const sums = figureTexts((figure) => `coalesce(sum(${figure}), 0)`);
  if (!groupBy) {
    return `select null as group_name, string_agg(row_json, ',' order by created_at, id) as rows_json, null as ids_json, ${sums},
            ${FIGURES_CURRENT} as current
     from (select t.created_at, t.id, f.*, ${LIST_ROW_JSON} as row_json ${LISTED_TASKS}) listed`;
  }
  // grouping sets: the whole list (grouping() = 1) and each group, from one pass over the rows.
  return `select case when grouping(group_name) = 0 then group_name end as group_name,
            case when grouping(group_name) = 1 then string_agg(row_json, ',' order by created_at, id) end as rows_json,
            case when grouping(group_name) = 0 then string_agg('"' || id || '"', ',' order by created_at, id) end as ids_json,
            ${sums}, ${FIGURES_CURRENT} as current
     from (select t.created_at, t.id, coalesce(t.${groupBy}, '${NONE_GROUP}') as group_name, f.*, ${LIST_ROW_JSON} as row_json
           ${LISTED_TASKS}) listed
     group by grouping sets ((), (group_name))`;
}

/** SQL of a project list: the whole list, or grouped by a field (listSql). */
const LIST_SQL = { rows: listSql(undefined), status: listSql('status'), priority: listSql('priority'), phase: listSql('phase') };

/**
 * A project list under the filter, read and added up by one statement: the rows as JSON text in
 * creation order with the list's sums and, with groupBy, each group's task ids and sums (exact
 * numerics), and whether the stored figures were current for `today` in that statement's snapshot.
 */
export async function listSummary(
  db: Knex,
  scope: ListScope & { currency: string; groupBy?: ListGroupField },
  now: string,
): Promise<ListSummaryRow[]> {
  const { groupBy, ...bindings } = scope;
  const statement = db.raw(LIST_SQL[groupBy ?? 'rows'], { ...bindings, allLevels: false, ...stampBindings(now) });
  const result = await prepared(statement, `finance_list_${groupBy ?? 'rows'}`);
  return result.rows;
}

/** Every statement of the list and the export, by the name it is prepared under (test/unit/sql-golden.test.ts). */
export const LIST_STATEMENTS: Readonly<Record<string, string>> = {
  finance_listed_project: LISTED_PROJECT_SQL,
  finance_list_rows: LIST_SQL.rows,
  finance_list_status: LIST_SQL.status,
  finance_list_priority: LIST_SQL.priority,
  finance_list_phase: LIST_SQL.phase,
  finance_tree_rows: TREE_ROWS_SQL,
  finance_project_sums: PROJECT_SUMS_SQL,
  finance_own_figures: OWN_FIGURES_SQL,
};
