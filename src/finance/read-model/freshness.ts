import type { Knex } from 'knex';
import { nowIso, todayOf } from '../../clock';
import { outsideRequests, stopIfClientLeft } from '../../db/request-queries';
import { ProjectRow, findProject } from '../../projects/projects.repository';
import { CALCULATOR_VERSION } from '../rules/calculator';
import { refreshTaskLabor } from './labor';
import { InputMark, tasksCostedByInputs } from '../inputs/cost-changes';

/*
 * How the stored figures stay current (README, "How the figures stay current").
 *
 * Writes never recompute anything. Every write to a project takes its lock through one helper
 * (projects.repository's lockProject, or lockTeamProjects for a member's name or avatar), which
 * records what the write may change: some tasks (a row per write and task in stale_tasks, told apart
 * by a sequence number), an input that is not a task (a role's rates or a member, from a day on: a row
 * in stale_inputs, worked out into tasks by the refresh that reads it), or every task
 * (projects.reset_revision); a new task is marked by the database, by a trigger on the insert
 * (migration 009), whoever inserts it. Writes that change the tree or the project also bump the
 * project's revision; writes to some tasks' own figures (time logs, fixed costs)
 * only mark them, so no row is updated by every write.
 *
 * A project's stored figures carry a stamp (project_figures): the revision, the day (rates and roles
 * in force) and the calculator version they were computed under; they are current when the stamp
 * matches and no mark is left. Every read checks that in the statement that reads the figures
 * (FIGURES_CURRENT), so the check and the figures come from one snapshot. A read that finds them out
 * of date calls bringCurrent, then reads again; a breakdown computes its one task on the fly instead.
 *
 * bringCurrent runs once per project at a time: concurrent requests of one instance share it, and
 * instances queue on a transaction-scoped advisory lock, then find the stamp current. It never blocks
 * writes: it reads the marks first, stamps with the revision it read first, and removes exactly the
 * marks it read, so a write committing meanwhile leaves its marks (and maybe a newer revision), and
 * the next read refreshes again. Each refresh bumps the stamp's generation, which the list cache keys on.
 */

/**
 * SQL: whether the stamp of project `alias`'s stored figures (a projects row) is of the project's
 * revision, today in its time zone by the service clock's instant :now, and :calculatorVersion; the
 * marks aside (stampCurrentOf).
 */
export const stampOf = (alias: string) => `exists (
       select 1 from project_figures cf
       where cf.team_id = ${alias}.team_id and cf.project_id = ${alias}.id and cf.revision = ${alias}.revision
         and cf.day = ${todayOf(alias)} and cf.calculator_version = cast(:calculatorVersion as integer))`;

/**
 * SQL: whether the stored figures of project `alias` (a projects row) are current: their stamp is of
 * the project's revision, today in its time zone by the service clock's instant :now, and
 * :calculatorVersion, and no mark is left (of any task, or with `taskId` of that task only: a task's
 * own stored figures depend on nothing else a mark without a revision bump records).
 */
export const stampCurrentOf = (alias: string, taskId?: string) => `(${stampOf(alias)}
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = ${alias}.team_id and sm.project_id = ${alias}.id${taskId ? ` and sm.task_id = ${taskId}` : ''})${
       taskId
         ? ''
         : `
     and not exists (select 1 from stale_inputs si where si.team_id = ${alias}.team_id and si.project_id = ${alias}.id)`
     })`;

/** SQL: whether the stamp of :projectId's stored figures is current (see stampCurrentOf). */
export const FIGURES_CURRENT = `exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and ${stampCurrentOf('cp')})`;

/** The bindings FIGURES_CURRENT needs besides :teamId and :projectId. */
export const stampBindings = (now: string) => ({ now, calculatorVersion: CALCULATOR_VERSION });

type Stamp = { revision: number; day: string; calculator_version: number };

/** Whether a rate-card entry or a member's role entry takes effect after one of the days and on or before the other. */
async function ratesChangedBetween(db: Knex, teamId: string, projectId: string, a: string, b: string): Promise<boolean> {
  const between = `effective_from > least(cast(:a as date), cast(:b as date)) and effective_from <= greatest(cast(:a as date), cast(:b as date))`;
  const result = await db.raw(
    `select exists (
       select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId and ${between}
       union all
       select 1 from project_member_roles where team_id = :teamId and project_id = :projectId and ${between}
     ) as changed`,
    { teamId, projectId, a, b },
  );
  return Boolean(result.rows[0]?.changed);
}

/** Whether every task must be recomputed rather than the marked ones. */
async function needsFullRefresh(db: Knex, project: ProjectRow, stamp: Stamp | undefined, today: string, teamId: string): Promise<boolean> {
  if (!stamp || stamp.calculator_version !== CALCULATOR_VERSION) return true;
  if (Number(stamp.revision) < Number(project.reset_revision)) return true;
  return stamp.day !== today && (await ratesChangedBetween(db, teamId, project.id, stamp.day, today));
}

/** The marks committed so far: each mark's sequence number and task. */
async function readMarks(db: Knex, teamId: string, projectId: string): Promise<{ seq: string; task_id: string }[]> {
  const result = await db.raw('select seq::text as seq, task_id from stale_tasks where team_id = :teamId and project_id = :projectId', {
    teamId,
    projectId,
  });
  return result.rows;
}

/** The marks of changed inputs that are not tasks (a member's role or display, a role's rates) committed so far. */
async function readInputMarks(db: Knex, teamId: string, projectId: string): Promise<InputMark[]> {
  const result = await db.raw(
    `select seq::text as seq, team_member_id, job_role_id, from_day::text as from_day
     from stale_inputs where team_id = :teamId and project_id = :projectId`,
    { teamId, projectId },
  );
  return result.rows;
}

/** Removes exactly the marks a refresh read (a write committing meanwhile leaves its own). */
async function removeMarks(db: Knex, table: 'stale_tasks' | 'stale_inputs', teamId: string, projectId: string, marks: readonly { seq: string }[]) {
  if (marks.length === 0) return;
  await db.raw(`delete from ${table} where team_id = :teamId and project_id = :projectId and seq = any(string_to_array(:seqs, ',')::bigint[])`, {
    teamId,
    projectId,
    seqs: marks.map((mark) => mark.seq).join(','),
  });
}

/** Today in the project's time zone at the instant `now`, as PostgreSQL's stamp check takes it. */
async function projectToday(db: Knex, teamId: string, projectId: string, now: string): Promise<string> {
  const result = await db.raw(`select ${todayOf('p')}::text as today from projects p where p.team_id = :teamId and p.id = :projectId`, {
    teamId,
    projectId,
    now,
  });
  return result.rows[0].today;
}

/**
 * Brings one project's stored figures current at the instant `now`, in the caller's transaction;
 * serialised per project. Returns whether it left breakdown parts to compute (see onRefreshed).
 */
async function refreshInTransaction(trx: Knex, teamId: string, projectId: string, now: string): Promise<boolean> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [teamId, projectId]);
  const project = await findProject(trx, teamId, projectId);
  if (!project) return false;
  const today = await projectToday(trx, teamId, projectId, now);
  const stamp: Stamp | undefined = await trx('project_figures')
    .where({ team_id: teamId, project_id: projectId })
    .first('revision', 'day', 'calculator_version');
  const revision = Number(project.revision);
  // The marks first: every mark read has its write's changes committed, so the recomputation below sees them.
  const marks = await readMarks(trx, teamId, projectId);
  const inputMarks = await readInputMarks(trx, teamId, projectId);
  const stampCurrent = stamp && Number(stamp.revision) === revision && stamp.day === today && stamp.calculator_version === CALCULATOR_VERSION;
  if (stampCurrent && marks.length === 0 && inputMarks.length === 0) return false;
  let partsLeft: boolean;
  if (await needsFullRefresh(trx, project, stamp, today, teamId)) {
    partsLeft = await refreshTaskLabor(trx, teamId, project, 'all', now);
  } else {
    // Worked out only now, after the marks were read: what the changed inputs touch as they are now.
    if (inputMarks.length > 0) await bumpPartsVersion(trx, teamId, projectId);
    const costed = await tasksCostedByInputs(trx, teamId, projectId, inputMarks, now);
    // A new task is marked by its insert (migration 009's trigger, whoever inserts it), so the marks
    // name every task without stored figures (but rows of task_labor deleted by hand: a full refresh
    // puts them back, refreshProjectLabor). One created after the marks were read, beside a
    // change read after it (a rename of its assignee), may be among the tasks whose estimates only are
    // costed again: refreshTaskLabor computes it in full, and its mark is left for the next refresh.
    const taskIds = new Set([...marks.map((mark) => mark.task_id), ...costed.logged]);
    // Tasks whose only change is what their estimate costs keep their stored actuals (any change to
    // those left a task mark, or put the task in costed.logged, so it is recomputed in full).
    partsLeft = (await refreshTaskLabor(trx, teamId, project, [...taskIds], now, [...costed.assigned])) || inputMarks.length > 0;
  }
  await removeMarks(trx, 'stale_tasks', teamId, projectId, marks);
  await removeMarks(trx, 'stale_inputs', teamId, projectId, inputMarks);
  await trx('project_figures')
    .insert({ team_id: teamId, project_id: projectId, revision, day: today, calculator_version: CALCULATOR_VERSION, generation: 1 })
    .onConflict(['team_id', 'project_id'])
    .merge({
      revision,
      day: today,
      calculator_version: CALCULATOR_VERSION,
      generation: trx.raw('project_figures.generation + 1'),
    });
  return partsLeft;
}

/** Told of each refresh that committed, and whether it left tasks' breakdown parts to compute. */
export type RefreshListener = (teamId: string, projectId: string, partsLeft: boolean) => void;

/** Per connection pool: who is told when a refresh committed. */
const refreshListeners = new WeakMap<Knex, RefreshListener>();

/**
 * Tells `listener` of every refresh through `db` that committed, and whether it left tasks' breakdown
 * parts to compute (a project-wide refresh, re-costed estimates, a new parts version): the server's
 * parts filler (parts-fill.ts) fills them in behind it, or goes on with a fill a write interrupted.
 */
export function onRefreshed(db: Knex, listener: RefreshListener): void {
  refreshListeners.set(db, listener);
}

/** Refreshes running, per connection pool (an instance; tests run two in one process) and project. */
const inFlightByPool = new WeakMap<Knex, Map<string, Promise<void>>>();

/**
 * Brings a project's stored figures current at the instant `now`: one refresh at a time per project
 * and instance, shared (a request that started after a shared refresh's instant, on a new day, finds
 * the stamp out of date when it reads again, and refreshes again).
 */
export function bringCurrent(db: Knex, teamId: string, projectId: string, now: string): Promise<void> {
  let inFlight = inFlightByPool.get(db);
  if (!inFlight) {
    inFlight = new Map();
    inFlightByPool.set(db, inFlight);
  }
  const running = inFlight.get(`${teamId}|${projectId}`) ?? startRefresh(db, inFlight, teamId, projectId, now);
  // Shared: a request whose client left meanwhile stops here rather than go on for nobody.
  return running.then(stopIfClientLeft);
}

/**
 * The refresh belongs to no request: it serves every request that waits for it, so it runs outside
 * the scope of the one that started it, and that client leaving cancels nobody's refresh.
 */
function startRefresh(db: Knex, inFlight: Map<string, Promise<void>>, teamId: string, projectId: string, now: string): Promise<void> {
  const key = `${teamId}|${projectId}`;
  const refresh = outsideRequests(() =>
    db
      .transaction((trx) => refreshInTransaction(trx, teamId, projectId, now))
      .then((partsLeft) => refreshListeners.get(db)?.(teamId, projectId, partsLeft))
      .finally(() => inFlight.delete(key)),
  );
  inFlight.set(key, refresh);
  return refresh;
}

/** A read that reports whether the stamp was current in the snapshot it read from. */
export type StampedRead<T> = (db: Knex, now: string) => Promise<{ current: boolean; value: T }>;

/**
 * Runs `read` until it reads current figures, bringing them current in between. Writes landing
 * between a refresh and the read (the read then finds a newer revision) are retried twice; after
 * that the read runs in the refresh's own transaction, holding the project's row so no write lands.
 */
export async function readCurrent<T>(db: Knex, teamId: string, projectId: string, read: StampedRead<T>): Promise<T> {
  const now = nowIso();
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await read(db, now);
    if (result.current) return result.value;
    await bringCurrent(db, teamId, projectId, now);
  }
  let partsLeft = false;
  const value = await db.transaction(async (trx) => {
    await trx.raw('select 1 from projects where team_id = ? and id = ? for share', [teamId, projectId]);
    partsLeft = await refreshInTransaction(trx, teamId, projectId, now);
    return (await read(trx, now)).value;
  });
  refreshListeners.get(db)?.(teamId, projectId, partsLeft);
  return value;
}

/**
 * Brings current every project whose stored figures have no stamp or one from another calculator
 * version (after a migration, or a release whose rules changed); run at start-up (src/db/migrate.ts).
 * Returns how many projects it refreshed (0 on an up-to-date database).
 */
export async function refreshStaleProjects(db: Knex): Promise<number> {
  const stale: { team_id: string; id: string }[] = await db('projects as p')
    .leftJoin('project_figures as f', function joinStamp() {
      this.on('f.team_id', 'p.team_id').andOn('f.project_id', 'p.id');
    })
    .where((q) => q.whereNull('f.project_id').orWhereNot('f.calculator_version', CALCULATOR_VERSION))
    .select('p.team_id', 'p.id')
    .orderBy(['p.team_id', 'p.id']);
  const now = nowIso();
  for (const { team_id: teamId, id } of stale) await bringCurrent(db, teamId, id, now);
  return stale.length;
}

/** Recomputes every task of one project, whatever its stamp says (for stored rows changed by hand). */
export async function refreshProjectLabor(db: Knex, teamId: string, projectId: string): Promise<void> {
  // The stamp is kept (with its parts version) and made out of date: every task is recomputed.
  await db('project_figures').where({ team_id: teamId, project_id: projectId }).update({ calculator_version: -1 });
  await bringCurrent(db, teamId, projectId, nowIso());
}

/**
 * Makes every stored breakdown part of the project out of date at once (finance.service's getBreakdown
 * computes a task's again at its next read): for changes that show in the parts of many tasks (a
 * member's name, avatar, role or rate today), where rewriting each took 250 ms on the benchmark's
 * largest project. Parts a refresh stores afterwards carry the new version (upsertTaskLabor).
 */
export async function bumpPartsVersion(db: Knex, teamId: string, projectId: string): Promise<void> {
  await db.raw('update project_figures set parts_version = parts_version + 1 where team_id = :teamId and project_id = :projectId', { teamId, projectId });
}
