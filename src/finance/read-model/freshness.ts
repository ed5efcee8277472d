import type { Knex } from 'knex';
import { nowIso, todayIn, todayOf } from '../../clock';
import { prepared } from '../../db/prepared';
import { outsideRequests, stopIfClientLeft } from '../../db/request-queries';
import { PROJECT_COLUMNS, ProjectRow, findProject } from '../../projects/projects.repository';
import { CALCULATOR_VERSION } from '../rules/calculator';
import { refreshTaskLabor } from './labor';
import { InputMark, tasksCostedByInputs } from '../inputs/cost-changes';
import { PRICING } from '../inputs/scope';
import { hasBudget, markBudget } from './budget-watch';

/*
 * How the stored figures stay current (docs/stored-figures.md, "How the figures stay current").
 *
 * Writes never recompute anything. Every write to a project takes its lock through one helper
 * (lockProject below, or lockTeamProjects for a member's name or avatar), which
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
 * Behind the writes, drainer.ts brings marked tasks current a bounded batch at a time (drainMarks).
 *
 * bringCurrent runs once per project at a time: concurrent requests of one instance share it, and
 * instances queue on a transaction-scoped advisory lock, then find the stamp current. It never blocks
 * writes: it reads the marks first, stamps with the revision it read first, and removes exactly the
 * marks it read, so a write committing meanwhile leaves its marks (and maybe a newer revision), and
 * the next read refreshes again. Each refresh bumps the stamp's generation, which the list cache keys on.
 *
 * This module is the only one that writes marks (stale_tasks, stale_inputs) or stamps (project_figures,
 * the parts version), checks them (the SQL of the check is in stamps.ts), or refreshes: the
 * resources' services call its lock helpers. The
 * versions and stamps are listed in docs/architecture.md's glossary.
 */

/* ---- Marks: what a write may change, recorded under the lock every write takes ---- */

/**
 * What a write may change in a project's derived figures, recorded by lockProject in the write's own
 * transaction (the refresh below reads it back):
 *   - 'task-figures': only those tasks' own figures (a time log, a fixed cost), not the tree: the write
 *     takes the project's lock shared, so such writes to one project run side by side;
 *   - 'tasks': those tasks' own inputs or place (each is marked, with the parent it has now, so a move
 *     or an archive also recomputes the old parent's roll-ups);
 *   - 'member': the member's role in the project from day `from` on (null: from today in the project's
 *     time zone; '-infinity': every day, its role history removed; 'infinity': no day, only how it shows,
 *     its name or avatar): recorded as one mark per project it takes part in (stale_inputs), which a
 *     refresh works out into the tasks it changes (refreshInTransaction);
 *   - 'rates': some roles' rates from a day on (the rate card); which ones is known once the card is
 *     written, and recorded then by recordRateChange, in the same transaction;
 *   - 'all': the inputs of every task (the currency, the time zone);
 *   - 'none': nothing a stored figure depends on, or only tasks that have no stored figures yet (a new
 *     task: with the revision bumped, a refresh computes every task without a stored row).
 */
export type Invalidation =
  | { kind: 'none' }
  | { kind: 'all' }
  | { kind: 'task-figures'; taskIds: readonly string[] }
  | { kind: 'tasks'; taskIds: readonly string[] }
  | { kind: 'member'; memberId: string; from: string | null }
  | { kind: 'rates' };

/**
 * Marks tasks of one project stale (one row per write and task, told apart by a sequence number): the
 * tasks whose ids `ids` (SQL) selects. Run after the locks are taken, so no concurrent change is missed.
 */
async function markStale(db: Knex, teamId: string, projectId: string, ids: string, bindings: Record<string, string>) {
  await db.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select p.team_id, p.id, marked.id, p.revision
     from (${ids}) as marked (id)
     join tasks t on t.team_id = :teamId and t.id = marked.id
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     where p.id = :projectId`,
    { teamId, projectId, ...bindings },
  );
}

/** Marks tasks of one project by id. */
async function markTasks(db: Knex, teamId: string, projectId: string, taskIds: readonly string[]) {
  await db.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select p.team_id, p.id, marked.id, p.revision
     from projects p cross join unnest(string_to_array(:ids, ',')::uuid[]) as marked (id)
     where p.team_id = :teamId and p.id = :projectId`,
    { teamId, projectId, ids: taskIds.join(',') },
  );
}

/**
 * The projects a member takes part in: assigned to one of their tasks, or with time logged on one
 * (ever: the running totals' index by member and project answers it alone).
 */
const PROJECTS_OF_MEMBER = `select t.project_id from task_assignees a join tasks t on t.team_id = a.team_id and t.id = a.task_id
  where a.team_id = :teamId and a.team_member_id = :memberId
  union
  select x.project_id from task_member_time x where x.team_id = :teamId and x.team_member_id = :memberId`;

async function recordInvalidation(db: Knex, teamId: string, projectId: string | 'team', change: Invalidation): Promise<void> {
  if (change.kind === 'task-figures' && change.taskIds.length > 0 && projectId !== 'team') {
    await markTasks(db, teamId, projectId, change.taskIds);
  } else if (change.kind === 'tasks' && change.taskIds.length > 0 && projectId !== 'team') {
    // The tasks, then the parents they have now.
    await markTasks(db, teamId, projectId, change.taskIds);
    await markStale(db, teamId, projectId, `select c.parent_task_id from tasks c
      where c.team_id = :teamId and c.id = any(string_to_array(:ids, ',')::uuid[]) and c.parent_task_id is not null`, {
      ids: change.taskIds.join(','),
    });
  } else if (change.kind === 'member') {
    // A mark per project, not per task: a member of the benchmark's dataset takes part in some 11,000
    // tasks, whose marks cost the write 100 ms. The refresh finds the tasks.
    await db.raw(
      `insert into stale_inputs (team_id, project_id, team_member_id, from_day)
       select p.team_id, p.id, cast(:memberId as uuid), coalesce(cast(:from as date), ${todayOf('p')})
       from projects p
       where p.team_id = :teamId and p.id in (${PROJECTS_OF_MEMBER}) and (cast(:projectId as uuid) is null or p.id = cast(:projectId as uuid))`,
      { teamId, memberId: change.memberId, from: change.from, now: nowIso(), projectId: projectId === 'team' ? null : projectId },
    );
  }
}

/**
 * Records a change to a member's role in a project from day `from` on, found once written (a member
 * new to the project takes its role from the beginning, so time it logged before joining is costed
 * anew). In the write's transaction, under the project's lock (lockProject's 'member').
 */
export async function recordMemberChange(db: Knex, teamId: string, projectId: string, memberId: string, from: string): Promise<void> {
  await recordInvalidation(db, teamId, projectId, { kind: 'member', memberId, from });
}

/**
 * Records a rate-card write's change (lockProject's 'rates'), once the card is written: the roles whose
 * rate on some day from `from` on is not what it was. In the write's transaction, under its lock.
 */
export async function recordRateChange(db: Knex, teamId: string, projectId: string, roleIds: readonly string[], from: string): Promise<void> {
  if (roleIds.length === 0) return;
  await db.raw(
    `insert into stale_inputs (team_id, project_id, job_role_id, from_day)
     select :teamId, :projectId, role.id, cast(:from as date) from unnest(string_to_array(:roles, ',')::uuid[]) as role (id)`,
    { teamId, projectId, roles: roleIds.join(','), from },
  );
}

/**
 * The one helper that takes a project's write lock: every write to a project (its own fields, its
 * tasks and their figures, its rate card and members) calls it first, and it records what the write
 * may change (`change`) in the write's own transaction. A write to some tasks' own figures
 * ('task-figures': time logs, fixed costs) takes the project's row shared and only marks those tasks,
 * so it updates no row every such write must update; every other write takes the row exclusively and
 * bumps the project's revision (its writes are serialised, and figures stamped with an older revision
 * are known out of date). On a project with a budget it also marks the budget pending, to be settled
 * once the write commits (budget-watch.ts).
 */
export async function lockProject(db: Knex, teamId: string, id: string, change: Invalidation): Promise<ProjectRow | undefined> {
  if (change.kind === 'task-figures') {
    const row = await prepared(db('projects').where({ team_id: teamId, id }).forShare().first(PROJECT_COLUMNS), 'lock_project_shared');
    if (row) await recordInvalidation(db, teamId, id, change);
    if (row && hasBudget(row)) await markBudget(db, teamId, id, change.taskIds);
    return row;
  }
  const [row] = await prepared(
    db('projects')
      .where({ team_id: teamId, id })
      .update({
        revision: db.raw('revision + 1'),
        reset_revision: change.kind === 'all' ? db.raw('revision + 1') : db.raw('reset_revision'),
      })
      .returning(PROJECT_COLUMNS),
    change.kind === 'all' ? 'lock_project_for_reset' : 'lock_project_for_write',
  );
  if (row) await recordInvalidation(db, teamId, id, change);
  // A budgeted project's thresholds are settled once the write commits (budget-watch.ts).
  if (row && hasBudget(row)) await markBudget(db, teamId, id);
  return row;
}

/**
 * SQL, the body of a CTE: the given columns of the project of the non-archived task :taskId of
 * :teamId, its row taken shared: the lock of every write to one task's own figures (lockProjectOfTask
 * below; time-logs.repository's logTime).
 */
export const projectOfTaskShared = (columns: readonly string[]) =>
  `select ${columns.map((column) => `p.${column}`).join(', ')}
   from tasks t join projects p on p.team_id = t.team_id and p.id = t.project_id
   where t.team_id = :teamId and t.id = :taskId and t.archived_at is null
   for share of p`;

/**
 * lockProject for a write to one task's own figures ('task-figures'), found by the task: in one
 * statement, the project of the non-archived task `taskId` is taken shared and the task is marked;
 * undefined when there is no such task. (A time log takes the same lock and mark within its own
 * single statement: time-logs.repository's logTime.)
 */
export async function lockProjectOfTask(db: Knex, teamId: string, taskId: string): Promise<ProjectRow | undefined> {
  const result = await prepared(
    db.raw(
      `with locked as (${projectOfTaskShared([...PROJECT_COLUMNS, 'team_id'])}),
       marked as (
         insert into stale_tasks (team_id, project_id, task_id, revision)
         select team_id, id, cast(:taskId as uuid), revision from locked
         returning 1
       )
       select ${PROJECT_COLUMNS.join(', ')} from locked`,
      { teamId, taskId },
    ),
    'lock_project_of_task',
  );
  const row: ProjectRow | undefined = result.rows[0];
  if (row && hasBudget(row)) await markBudget(db, teamId, row.id, [taskId]);
  return row;
}

/**
 * The write lock of every project of the team, for a change to a member that shows in figures (its
 * name or avatar): taken in id order, then the projects the member takes part in are found and marked
 * (a mark per project, worked out into its tasks by the next refresh), so an assignment or time log
 * committed meanwhile is never missed (its write held its project's lock, shared or not).
 */
export async function lockTeamProjects(db: Knex, teamId: string, change: Extract<Invalidation, { kind: 'member' }>): Promise<void> {
  await db.raw(
    `update projects p set revision = p.revision + 1
     from (select id from projects where team_id = :teamId order by id for update) locked
     where p.team_id = :teamId and p.id = locked.id`,
    { teamId },
  );
  await recordInvalidation(db, teamId, 'team', change);
}


/**
 * SQL, the body of a CTE: marks the task :taskId of the project that `locked` (a CTE of
 * projectOfTaskShared, with its id and revision) holds, for each row of `rows` (`locked`, or `locked`
 * joined to what else the write needs): the mark of a write to one task's own figures made in the
 * write's own statement (time-logs.repository's logTime).
 */
export const markLockedTask = (rows: string) => `insert into stale_tasks (team_id, project_id, task_id, revision)
       select :teamId, locked.id, :taskId, locked.revision from ${rows}
       returning 1`;

/**
 * Stamps a new project's stored figures current today: it has no tasks yet, so there is nothing to
 * compute. In the transaction that inserted it.
 */
export async function stampNewProject(db: Knex, teamId: string, project: { id: string; revision: number; time_zone: string }): Promise<void> {
  await db('project_figures').insert({
    team_id: teamId,
    project_id: project.id,
    revision: project.revision,
    day: todayIn(project.time_zone),
    calculator_version: CALCULATOR_VERSION,
  });
}

/* ---- Stamp checks: in stamps.ts (the SQL each read embeds), re-exported here ---- */

export { FIGURES_CURRENT, PARTS_CURRENT, PARTS_MISSING, figuresVersionOf, stampBindings, stampCurrentOf, stampOf } from './stamps';

type Stamp = { revision: number; day: string; calculator_version: number; pricing: string | null };

/** Whether a rate-card entry, a member's rate override or a member's role entry takes effect after one of the days and on or before the other. */
async function ratesChangedBetween(db: Knex, teamId: string, projectId: string, a: string, b: string): Promise<boolean> {
  const between = `effective_from > least(cast(:a as date), cast(:b as date)) and effective_from <= greatest(cast(:a as date), cast(:b as date))`;
  const result = await db.raw(
    `select exists (
       select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId and ${between}
       union all
       select 1 from project_member_rates where team_id = :teamId and project_id = :projectId and ${between}
       union all
       select 1 from project_member_roles where team_id = :teamId and project_id = :projectId and ${between}
     ) as changed`,
    { teamId, projectId, a, b },
  );
  return Boolean(result.rows[0]?.changed);
}

/**
 * How the project prices every task (docs/finance-rules.md R21, R25), as the stamp keeps it: its hours of
 * a day when its rates are per day, and whether it has a bill rate entry (only then is a missing bill
 * rate said, on every billable task). Either changes figures or breakdown parts of tasks no mark names.
 */
async function pricingOf(db: Knex, teamId: string, projectId: string): Promise<string> {
  const result = await db.raw(PRICING, { teamId, projectId });
  const row = result.rows[0] as { per_day: string | null; bills: boolean } | undefined;
  return `${row?.per_day ?? 'hour'}|${row?.bills ? 'bills' : 'no bills'}`;
}

/** Whether every task must be recomputed rather than the marked ones. */
async function needsFullRefresh(db: Knex, project: ProjectRow, stamp: Stamp | undefined, today: string, teamId: string, pricing: string): Promise<boolean> {
  if (!stamp || stamp.calculator_version !== CALCULATOR_VERSION) return true;
  if (stamp.pricing !== pricing) return true;
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
 * Step 1 of the lock order (docs/architecture.md, "Lock order"): the project's refresh lock, taken by
 * every transaction that refreshes or rewrites the project's stored figures before any other lock, so
 * refreshes of a project run one at a time on every instance. Writes never take it. Re-entrant within
 * a transaction; released at its end.
 */
async function lockRefreshes(trx: Knex, teamId: string, projectId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [teamId, projectId]);
}

/**
 * Brings one project's stored figures current at the instant `now`, in the caller's transaction;
 * serialised per project. Returns whether it left breakdown parts to compute (see onRefreshed).
 */
async function refreshInTransaction(trx: Knex, teamId: string, projectId: string, now: string): Promise<boolean> {
  await lockRefreshes(trx, teamId, projectId);
  const project = await findProject(trx, teamId, projectId);
  if (!project) return false;
  const today = await projectToday(trx, teamId, projectId, now);
  const stamp: Stamp | undefined = await trx('project_figures')
    .where({ team_id: teamId, project_id: projectId })
    .first('revision', 'day', 'calculator_version', 'pricing');
  const revision = Number(project.revision);
  // The marks first: every mark read has its write's changes committed, so the recomputation below sees them.
  const marks = await readMarks(trx, teamId, projectId);
  const inputMarks = await readInputMarks(trx, teamId, projectId);
  const stampCurrent = stamp && Number(stamp.revision) === revision && stamp.day === today && stamp.calculator_version === CALCULATOR_VERSION;
  if (stampCurrent && marks.length === 0 && inputMarks.length === 0) return false;
  let partsLeft: boolean;
  const pricing = await pricingOf(trx, teamId, projectId);
  if (await needsFullRefresh(trx, project, stamp, today, teamId, pricing)) {
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
    .insert({ team_id: teamId, project_id: projectId, revision, day: today, calculator_version: CALCULATOR_VERSION, pricing, generation: 1 })
    .onConflict(['team_id', 'project_id'])
    .merge({
      revision,
      day: today,
      calculator_version: CALCULATOR_VERSION,
      pricing,
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
 * Runs a refresh's transaction again when PostgreSQL chose it as a deadlock's victim (40P01) or
 * failed it on a serialisation conflict (40001), at most three times: a refresh is all-or-nothing
 * and serialised per project, so running it again is safe, and no request fails for the service's own
 * bookkeeping. The lock order (docs/architecture.md) is what keeps deadlocks away; this is the backstop.
 */
async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const code = (err as { code?: string })?.code;
      if (attempt >= 3 || (code !== '40P01' && code !== '40001')) throw err;
    }
  }
}

/**
 * The refresh belongs to no request: it serves every request that waits for it, so it runs outside
 * the scope of the one that started it, and that client leaving cancels nobody's refresh.
 */
function startRefresh(db: Knex, inFlight: Map<string, Promise<void>>, teamId: string, projectId: string, now: string): Promise<void> {
  const key = `${teamId}|${projectId}`;
  const refresh = outsideRequests(() =>
    retryingConflicts(() => db.transaction((trx) => refreshInTransaction(trx, teamId, projectId, now)))
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
  const value = await retryingConflicts(() => db.transaction(async (trx) => {
    // The lock order: the refresh lock, then the project's row (shared: no write lands before the read).
    // The other way round, this transaction would hold the row while it waits for a refresh that may
    // wait for a write queued behind the row.
    await lockRefreshes(trx, teamId, projectId);
    await trx.raw('select 1 from projects where team_id = ? and id = ? for share', [teamId, projectId]);
    partsLeft = await refreshInTransaction(trx, teamId, projectId, now);
    return (await read(trx, now)).value;
  }));
  refreshListeners.get(db)?.(teamId, projectId, partsLeft);
  return value;
}

/** What a drain step did: another refresh held the lock; the stamp is out of date (bringCurrent); or drained. */
export type DrainStep = { kind: 'busy' } | { kind: 'whole' } | { kind: 'drained'; tasks: number; more: boolean };

/** SQL: every mark of the tasks named by the project's `:limit` oldest marks. */
const OLDEST_MARKED_TASKS = `select s.seq::text as seq, s.task_id from stale_tasks s
  where s.team_id = :teamId and s.project_id = :projectId and s.task_id in (
    select f.task_id from stale_tasks f where f.team_id = :teamId and f.project_id = :projectId order by f.seq limit :limit)`;

/**
 * One bounded step of the background drain (drainer.ts): while the project's stamp is current and no
 * input is marked (marks of some tasks only: time logs, fixed costs), recomputes the tasks named by its
 * `limit` oldest marks (at most `limit` tasks, so their breakdown parts are stored too), removes exactly
 * the marks it read and bumps the generation. It is a refresh that read fewer marks: those it did not
 * read stay, so their tasks, and the project's lists, stay out of date until a later step. It takes the
 * refresh lock without waiting ('busy' when another refresh holds it): one drain or refresh of a
 * project at a time, on every instance, and no connection held waiting. `more` says that it read a
 * full batch (at least `limit` marks) and marks are left: a backlog, to go on with at once.
 */
export async function drainMarks(db: Knex, teamId: string, projectId: string, limit: number, now: string = nowIso()): Promise<DrainStep> {
  let partsLeft = false;
  const step = await retryingConflicts(() => db.transaction(async (trx): Promise<DrainStep> => {
    const locked = await trx.raw('select pg_try_advisory_xact_lock(hashtext(?), hashtext(?)) as locked', [teamId, projectId]);
    if (!locked.rows[0]?.locked) return { kind: 'busy' };
    const project = await findProject(trx, teamId, projectId);
    if (!project) return { kind: 'drained', tasks: 0, more: false };
    const today = await projectToday(trx, teamId, projectId, now);
    const stamp: Stamp | undefined = await trx('project_figures')
      .where({ team_id: teamId, project_id: projectId })
      .first('revision', 'day', 'calculator_version');
    const stampCurrent = stamp && Number(stamp.revision) === Number(project.revision) && stamp.day === today && stamp.calculator_version === CALCULATOR_VERSION;
    if (!stampCurrent || (await readInputMarks(trx, teamId, projectId)).length > 0) return { kind: 'whole' };
    const marks: { seq: string; task_id: string }[] = (await trx.raw(OLDEST_MARKED_TASKS, { teamId, projectId, limit })).rows;
    if (marks.length === 0) return { kind: 'drained', tasks: 0, more: false };
    const taskIds = [...new Set(marks.map((mark) => mark.task_id))];
    partsLeft = await refreshTaskLabor(trx, teamId, project, taskIds, now);
    await removeMarks(trx, 'stale_tasks', teamId, projectId, marks);
    await trx('project_figures').where({ team_id: teamId, project_id: projectId }).update({ generation: trx.raw('generation + 1') });
    if (marks.length < limit) return { kind: 'drained', tasks: taskIds.length, more: false };
    const left = await trx.raw('select exists (select 1 from stale_tasks where team_id = ? and project_id = ?) as more', [teamId, projectId]);
    return { kind: 'drained', tasks: taskIds.length, more: Boolean(left.rows[0]?.more) };
  }));
  if (step.kind === 'drained' && step.tasks > 0) refreshListeners.get(db)?.(teamId, projectId, partsLeft);
  return step;
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
  await db.transaction(async (trx) => {
    await lockRefreshes(trx, teamId, projectId);
    await trx('project_figures').where({ team_id: teamId, project_id: projectId }).update({ calculator_version: -1 });
  });
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
