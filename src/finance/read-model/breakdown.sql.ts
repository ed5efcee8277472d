import type { Knex } from 'knex';
import { preparedRaw } from '../../db/prepared';
import { ReadAll, batchedReads } from '../../db/batched-reads';
import { isUuid } from '../../http/validate';
import { nowIso } from '../../clock';
import { SUMMARY_FIGURES, SummaryFigureName } from '../rules/figures';
import { PARTS_CURRENT, PARTS_MISSING, stampBindings, stampCurrentOf, stampOf } from './freshness';

/*
 * A breakdown's read of its stored row (the read model), and the stored breakdown parts: which are
 * missing, and storing them once computed.
 */

/** The summary's figures as stored (exact text; labor figures 0 without a labor row, whose parts are then null). */
type StoredSummaryFigures = Record<SummaryFigureName, string>;

/** SQL: a task's (t) summary figures as stored, from the task or its labor row (l). */
const SUMMARY_FIGURE_COLUMNS = SUMMARY_FIGURES.map((figure) =>
  figure.source === 'task' ? `trim_scale(t.${figure.name}) as ${figure.name}` : `trim_scale(coalesce(l.${figure.name}, 0)) as ${figure.name}`,
).join(',\n            ');

/** Row shape: a task's summary figures (exact numeric text) and its stored breakdown parts. */
export type StoredBreakdownRow = StoredSummaryFigures & {
  id: string;
  name: string;
  project_id: string;
  billable: boolean;
  finance_version: number;
  currency: string;
  /**
   * Null until the task's figures are first stored, after a refresh that stored figures only (labor.ts),
   * and when they were computed under another version of the project's parts (bumpPartsVersion).
   */
  members_json: string | null;
  grouped_members_json: string | null;
  warnings_json: string | null;
  /** The stored labor row's version (its xmin), for storeBreakdownParts; null without a row. */
  labor_version: string | null;
  /** The project's parts version when read, for storeBreakdownParts. */
  parts_version: string;
  /** The version of everything the answer is rendered from (ANSWER_VERSION). */
  answer_version: string;
  /** Whether answer_version is the one asked with (`known`) and the parts current: the parts were then not read. */
  known: boolean;
  /** Whether this task's stored figures were current (freshness.ts: the project's stamp, and no mark on the task) when read. */
  current: boolean;
  /** The service clock's instant the row was read at, whose day `current` was checked for. */
  read_at: string;
  /**
   * The breakdown's answer, encoded by the first request that answers from this row (finance.service's
   * getBreakdown): the requests that share the row share it, so a large answer is not encoded, and its
   * garbage collected, once per request.
   */
  answer?: Buffer;
};


/** The task a stored breakdown is read for, and the team asking. */
export type StoredBreakdownKey = {
  teamId: string;
  taskId: string;
  /** The answer version of the task's answer this instance holds (answer-cache.ts): its parts are then not read. */
  known?: string;
};

/**
 * SQL: the version of everything a stored breakdown's answer is rendered from: the task's row (its name,
 * billable flag and own figures), its labor row (figures and parts), the project's parts version and
 * currency. A row version (xmin) is its writing transaction's: another version of the row is another
 * transaction's, so equal versions mean the same answer.
 */
const ANSWER_VERSION = `t.xmin::text || '.' || coalesce(l.xmin::text, '-') || '.' || coalesce(pf.parts_version, 0)::text || '.' || p.currency`;

/** SQL: the stored breakdowns of some tasks, each asked for by its team, with the stamp check (readStoredBreakdowns). */
const STORED_BREAKDOWNS_SQL = `select k.key::text as key, t.id, t.name, t.project_id, t.billable, t.finance_version, p.currency, ${stampCurrentOf('p', 't.id')} as current,
            ${SUMMARY_FIGURE_COLUMNS},
            case when ${PARTS_CURRENT} and not v.known then l.members_json end as members_json,
            case when ${PARTS_CURRENT} and not v.known then l.grouped_members_json end as grouped_members_json,
            case when ${PARTS_CURRENT} and not v.known then l.warnings_json end as warnings_json,
            l.xmin::text as labor_version, coalesce(pf.parts_version, 0)::text as parts_version, v.answer_version, v.known
     from unnest(string_to_array(:teamIds, ',')::uuid[], string_to_array(:taskIds, ',')::uuid[], string_to_array(:known, ',')) with ordinality as k (team_id, task_id, known, key)
     join tasks t on t.team_id = k.team_id and t.id = k.task_id and t.archived_at is null
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
     cross join lateral (select ${ANSWER_VERSION} as answer_version) a
     cross join lateral (select a.answer_version, coalesce(a.answer_version = k.known and ${PARTS_CURRENT}, false) as known) v`;

/**
 * The stored breakdowns of non-archived tasks, each asked for by its own team: one indexed read per
 * task, whatever its size, all in one statement. The stamp is checked for today by the service clock
 * at the read, whose instant each row carries (`read_at`).
 */
const readStoredBreakdowns: ReadAll<StoredBreakdownKey, StoredBreakdownRow> = async (db, keys) => {
  const now = nowIso();
  const result = await preparedRaw<StoredBreakdownRow & { key: string }>(
    db,
    'finance_stored_breakdowns',
    STORED_BREAKDOWNS_SQL,
    {
      teamIds: keys.map((key) => key.teamId).join(','),
      taskIds: keys.map((key) => key.taskId).join(','),
      known: keys.map((key) => key.known ?? '-').join(','),
      ...stampBindings(now),
    },
  );
  // Rows are completed in place: copying their eighteen fields cost as much as the rest of this function.
  const byKey = new Map<number, StoredBreakdownRow>();
  for (const row of result.rows) {
    row.read_at = now;
    byKey.set(Number(row.key), row);
  }
  // Ordinality counts from 1.
  return keys.map((_, i) => byKey.get(i + 1));
};

/**
 * A non-archived task's breakdown from its stored labor row, read together with the others asked for
 * in the same turn of the event loop (db/batched-reads.ts): random breakdowns under load share their
 * round trips to the database, and requests for one task in one turn share its row (read-only but for
 * its `answer`, which they share too).
 */
const readStoredBreakdown = batchedReads(readStoredBreakdowns, { identify: (key) => `${key.teamId} ${key.taskId} ${key.known ?? '-'}` });
export function storedBreakdown(db: Knex, key: StoredBreakdownKey): Promise<StoredBreakdownRow | undefined> {
  // The keys go into comma-separated lists: only UUIDs (which hold no comma) may, and no other id names a task.
  if (!isUuid(key.teamId) || !isUuid(key.taskId)) return Promise.resolve(undefined);
  return readStoredBreakdown(db, key);
}

/** SQL: the next tasks without current breakdown parts, with the stamp check (tasksWithoutParts). */
const TASKS_WITHOUT_PARTS_SQL = `select p.currency, ${stampOf('p')} as current, d.task_id, d.version, d.parts_version
     from projects p
     left join lateral (
       select t.id as task_id, l.xmin::text as version, coalesce(pf.parts_version, 0)::text as parts_version
       from tasks t
       join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
       where t.team_id = p.team_id and t.project_id = p.id and t.archived_at is null and t.id > cast(:after as uuid)
         and ${PARTS_MISSING}
         and ${stampCurrentOf('p', 't.id')}
       order by t.id
       limit :limit
     ) d on true
     where p.team_id = :teamId and p.id = :projectId`;

/**
 * Whether the project's stamp is current at the instant :now (freshness.ts; marks of single tasks aside),
 * its currency, and the next `limit` live tasks, by id after `after`, that carry no mark and whose labor
 * rows hold no breakdown parts of the project's parts version, with the versions storeBreakdownParts
 * needs (none when the figures are not current: a refresh comes first). One statement, one snapshot:
 * the currency is the one the versions were stored under.
 */
export async function tasksWithoutParts(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
  after: string,
  limit: number,
): Promise<{ current: boolean; currency: string | undefined; tasks: { task_id: string; version: string; parts_version: string }[] }> {
  const result = await db.raw(
    TASKS_WITHOUT_PARTS_SQL,
    { teamId, projectId, after, limit, ...stampBindings(now) },
  );
  const rows: { currency: string; current: boolean; task_id: string | null; version: string; parts_version: string }[] = result.rows;
  return {
    current: Boolean(rows[0]?.current),
    currency: rows[0]?.currency,
    tasks: rows.flatMap((row) => (row.task_id === null ? [] : [{ task_id: row.task_id, version: row.version, parts_version: row.parts_version }])),
  };
}

/** SQL: the projects with tasks without current breakdown parts (projectsWithoutParts). */
const PROJECTS_WITHOUT_PARTS_SQL = `select p.team_id, p.id as project_id from projects p
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
     where exists (
       select 1 from task_labor l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = p.team_id and l.project_id = p.id and t.archived_at is null
         and ${PARTS_MISSING})
     order by p.team_id, p.id`;

/** The projects some of whose live tasks have stored figures without current breakdown parts. */
export async function projectsWithoutParts(db: Knex): Promise<{ team_id: string; project_id: string }[]> {
  const result = await db.raw(
    PROJECTS_WITHOUT_PARTS_SQL,
  );
  return result.rows;
}

/** The parts of a task's breakdown that are stored (members, role groups, warnings), as JSON text. */
export type BreakdownParts = { members_json: string; grouped_members_json: string; warnings_json: string };

/** A task's breakdown parts to store, with the labor row version and the project's parts version they were computed against. */
export type PartsToStore = BreakdownParts & {
  task_id: string;
  /** The labor row's xmin when its figures were found current. */
  version: string;
  parts_version: string;
};

/** SQL: stores computed breakdown parts into labor rows no refresh rewrote (storeBreakdownParts). */
const STORE_PARTS_SQL = `update task_labor l
     set members_json = s.members_json, grouped_members_json = s.grouped_members_json, warnings_json = s.warnings_json, parts_version = s.parts_version
     from (
       select w.task_id, r.members_json, r.grouped_members_json, r.warnings_json, r.parts_version
       from json_to_recordset(cast(:parts as json)) as r (task_id uuid, version text, parts_version bigint, members_json text, grouped_members_json text, warnings_json text)
       join task_labor w on w.team_id = :teamId and w.task_id = r.task_id
       where w.xmin = cast(r.version as xid) and (w.members_json is null or w.parts_version <> r.parts_version)
       for update of w skip locked
     ) s
     where l.team_id = :teamId and l.task_id = s.task_id`;

/**
 * Stores tasks' breakdown parts computed after their figures were stored (at a breakdown read, or by
 * parts-fill.ts), each with the project's parts version that was found then (`parts_version`), if
 * its labor row is still the version that was found (`version`, its xmin: any refresh since rewrote it)
 * and holds no parts of that parts version. Parts computed from inputs newer than the row are harmless:
 * the write that changed them left a mark, so the row is not current until a refresh rewrites it. A row
 * a refresh is rewriting is skipped, not waited for (the refresh stores its own). Returns how many were stored.
 */
export async function storeBreakdownParts(db: Knex, teamId: string, parts: readonly PartsToStore[]): Promise<number> {
  if (parts.length === 0) return 0;
  const result = await db.raw(
    STORE_PARTS_SQL,
    { teamId, parts: JSON.stringify(parts) },
  );
  return Number(result.rowCount ?? 0);
}

/** Every statement of a breakdown read and of the stored parts, by name (test/unit/sql-golden.test.ts). */
export const BREAKDOWN_STATEMENTS: Readonly<Record<string, string>> = {
  finance_stored_breakdowns: STORED_BREAKDOWNS_SQL,
  finance_store_parts: STORE_PARTS_SQL,
  finance_tasks_without_parts: TASKS_WITHOUT_PARTS_SQL,
  finance_projects_without_parts: PROJECTS_WITHOUT_PARTS_SQL,
};
