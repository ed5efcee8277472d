import type { Knex } from 'knex';
import { prepared } from '../../db/prepared';
import { LABOR_FIGURES, LaborFigureName } from '../rules/figures';
import { ROLLED_FIGURES, TASK_FIGURES, listRowJson, ownFigure } from './columns';

/*
 * Writes of the stored figures: each task's own (computed by the calculator) and its subtree's
 * roll-ups (SQL sums of the own figures), with the list row rendered from them.
 */

/** A task's figures of its logged time as stored (exact text): what re-costing its estimate keeps. */
export type StoredActuals = { logged_hours: string; actual_labor_cost: string; actual_revenue: string; has_missing_rates: string };

/** Some tasks' logged hours and actual labor cost as stored, by task (tasks without stored figures left out). */
export async function storedActuals(db: Knex, teamId: string, taskIds: readonly string[]): Promise<Map<string, StoredActuals>> {
  const actuals = await db.raw(
    `select task_id, logged_hours::text as logged_hours, actual_labor_cost::text as actual_labor_cost,
            actual_revenue::text as actual_revenue, has_missing_rates::text as has_missing_rates from task_labor
     where team_id = :teamId and task_id = any(string_to_array(:taskIds, ',')::uuid[])`,
    { teamId, taskIds: taskIds.join(',') },
  );
  return new Map((actuals.rows as (StoredActuals & { task_id: string })[]).map((row) => [row.task_id, row]));
}

/** A task's own stored figures (exact text, every figure the calculator computes: figures.ts) and breakdown parts. */
export type TaskLaborRow = { task_id: string } & Record<LaborFigureName, string> & {
  /** Null: not stored by this refresh (computed and stored by the task's next breakdown read). */
  members_json: string | null;
  grouped_members_json: string | null;
  warnings_json: string | null;
  assignees_json: string;
};

/** The columns of a TaskLaborRow with their SQL types, as stored. */
const LABOR_COLUMNS: readonly [keyof TaskLaborRow, string][] = [
  ['task_id', 'uuid'],
  ...LABOR_FIGURES.map((figure): [LaborFigureName, string] => [figure.name, 'numeric']),
  ['members_json', 'text'],
  ['grouped_members_json', 'text'],
  ['warnings_json', 'text'],
  ['assignees_json', 'text'],
];

const UPSERT_LABOR_SQL = `insert into task_labor (team_id, project_id, parts_version, ${LABOR_COLUMNS.map(([column]) => column).join(', ')})
     select :teamId, :projectId,
            (select coalesce(max(f.parts_version), 0) from project_figures f where f.team_id = :teamId and f.project_id = :projectId),
            ${LABOR_COLUMNS.map(([column]) => `r.${column}`).join(', ')}
     from json_to_recordset(cast(:rows as json)) as r (${LABOR_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')})
     on conflict (team_id, task_id) do update set parts_version = excluded.parts_version,
       ${LABOR_COLUMNS.filter(([column]) => column !== 'task_id')
         .map(([column]) => `${column} = excluded.${column}`)
         .join(', ')}`;

/** A task's labor figures without its breakdown parts (TaskLaborRow's other columns). */
export type TaskFiguresRow = Omit<TaskLaborRow, 'members_json' | 'grouped_members_json' | 'warnings_json'>;

const FIGURE_COLUMNS = LABOR_COLUMNS.filter(([column]) => column !== 'members_json' && column !== 'grouped_members_json' && column !== 'warnings_json');

/** FIGURE_COLUMNS' names but the key (task_id): what updateTaskFigures writes of each task. */
const FIGURE_VALUES = FIGURE_COLUMNS.map(([column]) => column).filter((column) => column !== 'task_id');

/** A stored row's parts version that no project's is (they start at 0 and grow): its parts are out of date. */
const PARTS_OUT_OF_DATE = -1;

/**
 * SQL: the task `taskId` (t) and its project's currency (p) of a labor row being rewritten with its
 * list row (listRowJson); each an index lookup, kept apart by `offset 0` (see refreshRollups).
 */
const TASK_AND_CURRENCY = (taskId: string) => `cross join lateral (select * from tasks t where t.team_id = :teamId and t.id = ${taskId} offset 0) t
     cross join lateral (select p.currency from projects p where p.team_id = :teamId and p.id = :projectId offset 0) p`;

/** The figures a task's labor row stores (the others are the task's own columns: TASK_FIGURES). */
const LABOR_ROLLED: readonly LaborFigureName[] = LABOR_FIGURES.map((figure) => figure.name);

/** `<kind>_<figure>` columns of each kind's change of every labor figure (updateTaskFigures' climb). */
const KIND_DELTAS = (['billable', 'non_billable'] as const).flatMap((kind) => LABOR_ROLLED.map((figure) => `${kind}_${figure}`));

/*
 * Stores some tasks' new labor figures (r) and, in the same statement, adds what changed in them to
 * the stored roll-ups of each of those tasks and of their ancestors: a roll-up is its subtree's sum, so
 * its new value is its old one plus the change of each task of the subtree whose figures changed. The
 * subtree is refreshRollups' walk (non-archived children down from the task): a task's change counts
 * in its own roll-up if it is not archived, and climbs from a task to its parent while the task is not
 * archived. Each row is written once, with its list row: storing the figures and then summing every
 * subtree again would write the tasks twice and read every subtree.
 * Ancestors whose figures no change moved (a rename) are left alone. Counts the tasks of r it stored.
 */
const UPDATE_FIGURES_SQL = `with recursive
     r as (select * from json_to_recordset(cast(:rows as json)) as r (${FIGURE_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')})),
     changed as (
       select r.task_id, ${LABOR_ROLLED.map((figure) => `r.${figure} - l.${figure} as ${figure}`).join(', ')}
       from r join task_labor l on l.team_id = :teamId and l.project_id = :projectId and l.task_id = r.task_id
     ),
     climb (id, billable, ${LABOR_ROLLED.join(', ')}) as (
       select t.id, t.billable, ${LABOR_ROLLED.map((figure) => `c.${figure}`).join(', ')}
       from changed c join tasks t on t.team_id = :teamId and t.id = c.task_id and t.archived_at is null
       where ${LABOR_ROLLED.map((figure) => `c.${figure} <> 0`).join(' or ')}
       union all
       select t.parent_task_id, u.billable, ${LABOR_ROLLED.map((figure) => `u.${figure}`).join(', ')}
       from climb u join tasks t on t.team_id = :teamId and t.id = u.id and t.archived_at is null
       where t.parent_task_id is not null
     ),
     deltas as (
       select id, ${LABOR_ROLLED.flatMap((figure) => [
         `coalesce(sum(${figure}) filter (where billable), 0) as billable_${figure}`,
         `coalesce(sum(${figure}) filter (where not billable), 0) as non_billable_${figure}`,
       ]).join(', ')}
       from climb group by id
     ),
     changes as (
       select coalesce(r.task_id, d.id) as task_id, r.task_id is not null as own,
              ${FIGURE_VALUES.map((column) => `r.${column}`).join(', ')},
              ${KIND_DELTAS.map((column) => `coalesce(d.${column}, 0) as ${column}`).join(', ')}
       from r full join deltas d on d.id = r.task_id
     ),
     updated as (
       update task_labor l
       set parts_version = case when u.own then ${PARTS_OUT_OF_DATE} else l.parts_version end,
           ${FIGURE_VALUES.map((column) => `${column} = case when u.own then u.${column} else l.${column} end`).join(', ')},
           ${KIND_DELTAS.map((column) => `tree_${column} = l.tree_${column} + u.${column}`).join(', ')},
           list_row_json = ${listRowJson(
             (figure) =>
               TASK_FIGURES.has(figure)
                 ? `(l.tree_billable_${figure} + l.tree_non_billable_${figure})`
                 : `(l.tree_billable_${figure} + u.billable_${figure} + l.tree_non_billable_${figure} + u.non_billable_${figure})`,
             'l.children',
             'to_json(p.currency)::text',
             'case when u.own then u.assignees_json else l.assignees_json end',
           )}
       from changes u
       ${TASK_AND_CURRENCY('u.task_id')}
       where l.team_id = :teamId and l.project_id = :projectId and l.task_id = u.task_id
       returning u.own
     )
     select count(*) filter (where own) as stored from updated`;

/** Rows per statement of a batched write: thousands of rows are one JSON value to send and parse, not ten bound parameters each. */
const WRITE_BATCH = 2000;

/**
 * Stores tasks' labor figures and breakdown parts (of the project's current parts version), replacing
 * what was there, one JSON parameter per batch.
 */
export async function upsertTaskLabor(db: Knex, teamId: string, projectId: string, rows: readonly TaskLaborRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += WRITE_BATCH) {
    await prepared(db.raw(UPSERT_LABOR_SQL, { teamId, projectId, rows: JSON.stringify(rows.slice(from, from + WRITE_BATCH)) }), 'finance_upsert_labor');
  }
}

/**
 * Stores stored tasks' new labor figures, with what they changed added to their own and their
 * ancestors' stored roll-ups (UPDATE_FIGURES_SQL: their stored roll-ups must be their subtrees' sums
 * before), and marks their breakdown parts out of date (a parts version no project has) without
 * emptying them: emptying deleted each row's compressed parts from TOAST on the spot, 115 ms for 600
 * tasks after a rename on the benchmark's largest project; the parts filler or the task's next
 * breakdown read overwrites them later, off the request that refreshed.
 */
export async function updateTaskFigures(db: Knex, teamId: string, projectId: string, rows: readonly TaskFiguresRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += WRITE_BATCH) {
    const batch = rows.slice(from, from + WRITE_BATCH);
    const result = await prepared(db.raw(UPDATE_FIGURES_SQL, { teamId, projectId, rows: JSON.stringify(batch) }), 'finance_update_figures');
    // Never silently short: every task given has a stored row of this project (the caller read its actuals).
    const updated = Number(result.rows[0]?.stored ?? 0);
    if (updated !== batch.length) throw new Error(`Stored figures of ${updated} of ${batch.length} tasks: the others have no stored row in project ${projectId}`);
  }
}

const KIND_FILTER = { billable: 't.billable', non_billable: 'not t.billable' } as const;

/** `sum(...) filter (...) as tree_<kind>_<figure>` for every kind and figure, from the tasks' own stored figures (t). */
const ROLLUP_SUMS = Object.entries(KIND_FILTER)
  .flatMap(([kind, condition]) => [
    `count(*) filter (where ${condition}) as tree_${kind}_tasks`,
    `count(distinct w.branch) filter (where ${condition}) as children_${kind}`,
    ...ROLLED_FIGURES.map((figure) => `coalesce(sum(t.${figure}) filter (where ${condition}), 0) as tree_${kind}_${figure}`),
  ])
  .join(',\n            ');

const ROLLED_COLUMNS = Object.keys(KIND_FILTER).flatMap((kind) => [`tree_${kind}_tasks`, `children_${kind}`, ...ROLLED_FIGURES.map((figure) => `tree_${kind}_${figure}`)]);

/** The row a list shows under billable_filter=all, from the roll-up being stored (r) and the task (t). */
const STORED_LIST_ROW_JSON = listRowJson(
  (figure) => `(r.tree_billable_${figure} + r.tree_non_billable_${figure})`,
  'r.children',
  'to_json(p.currency)::text',
);

/** The tasks whose roll-ups a refresh recomputes: a `target (id)` CTE (recursive when it climbs to ancestors). */
const ROLLUP_TARGETS_OF = {
  all: `target (id) as (
       select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null
     )`,
  tasks: `target (id) as (
       select id from tasks
       where team_id = :teamId and project_id = :projectId and archived_at is null
         and id = any(string_to_array(:ids, ',')::uuid[])
       union
       select t.parent_task_id from tasks t join target x on t.team_id = :teamId and t.id = x.id
       where t.parent_task_id is not null
     )`,
};

function rollupSql(targets: string): string {
  return `with recursive
     ${targets},
     walk (root, branch, id) as (
       select id, null::uuid, id from target
       union all
       select w.root, coalesce(w.branch, c.id), c.id
       from walk w
       cross join lateral (
         select c.id from tasks c where c.team_id = :teamId and c.parent_task_id = w.id and c.archived_at is null offset 0
       ) c
     ),
     rolled as (
       select w.root, count(distinct w.branch) as children,
            ${ROLLUP_SUMS}
       from walk w
       cross join lateral (
         select t.billable, ${ROLLED_FIGURES.map((figure) => `${ownFigure(figure)} as ${figure}`).join(', ')}
         from tasks t left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
         where t.team_id = :teamId and t.id = w.id offset 0
       ) t
       group by w.root
     )
     update task_labor l
     set children = r.children, ${ROLLED_COLUMNS.map((column) => `${column} = r.${column}`).join(', ')},
         list_row_json = ${STORED_LIST_ROW_JSON}
     from rolled r
     ${TASK_AND_CURRENCY('r.root')}
     where l.team_id = :teamId and l.task_id = any(array(select root from rolled)) and l.task_id = r.root`;
}

/** SQL: refreshRollups' statement, for every task of the project or for some tasks and their ancestors. */
const ROLLUP_SQL = { all: rollupSql(ROLLUP_TARGETS_OF.all), tasks: rollupSql(ROLLUP_TARGETS_OF.tasks) };

/**
 * Recomputes the stored roll-ups (see migrations/..._002_stored_breakdowns.ts) of the given tasks and
 * all their ancestors, or of every task of the project, from the tasks' own stored figures: each from
 * its whole non-archived subtree, in one statement. Refreshes of a project are serialised (freshness.ts);
 * a write that changes a subtree while it is summed leaves its marks (and a newer revision), so the
 * roll-ups it touches are summed again by the next refresh before any read answers them. The lateral
 * subqueries (kept apart by `offset 0`) and the array of roots make each step an index lookup
 * whatever the statistics say: planned as joins, the recursive walk's size is guessed so high (and a
 * freshly loaded task_labor's so low) that one task's refresh scanned every task or labor row of the
 * team.
 */
export async function refreshRollups(db: Knex, teamId: string, projectId: string, taskIds: readonly string[] | 'all'): Promise<void> {
  if (taskIds === 'all') {
    await prepared(db.raw(ROLLUP_SQL.all, { teamId, projectId }), 'finance_refresh_rollups_all');
  } else if (taskIds.length > 0) {
    await prepared(db.raw(ROLLUP_SQL.tasks, { teamId, projectId, ids: taskIds.join(',') }), 'finance_refresh_rollups_tasks');
  }
}

/** Every statement that writes the stored figures, by name (test/unit/sql-golden.test.ts). */
export const ROLLUP_STATEMENTS: Readonly<Record<string, string>> = {
  finance_upsert_labor: UPSERT_LABOR_SQL,
  finance_update_figures: UPDATE_FIGURES_SQL,
  finance_refresh_rollups_all: ROLLUP_SQL.all,
  finance_refresh_rollups_tasks: ROLLUP_SQL.tasks,
};
