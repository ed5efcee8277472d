import type { Knex } from 'knex';

export type TimeLogRow = {
  id: string;
  task_id: string;
  team_member_id: string;
  seconds: number;
  logged_at: Date;
  note: string | null;
  created_at: Date;
};

const COLUMNS = ['id', 'task_id', 'team_member_id', 'seconds', 'logged_at', 'note', 'created_at'];

/** Adds a new log's seconds to the running total of its task and member. */
async function addToMemberTotal(db: Knex, teamId: string, taskId: string, memberId: string, seconds: number) {
  await db.raw(
    `insert into task_member_time as tmt (team_id, project_id, task_id, team_member_id, total_seconds, log_count)
     select t.team_id, t.project_id, t.id, ?, ?, 1 from tasks t where t.team_id = ? and t.id = ?
     on conflict (team_id, task_id, team_member_id) do update
       set total_seconds = tmt.total_seconds + excluded.total_seconds, log_count = tmt.log_count + 1`,
    [memberId, seconds, teamId, taskId],
  );
}

/** Takes a deleted log's seconds off the running total (which its insert created). */
async function subtractFromMemberTotal(db: Knex, teamId: string, taskId: string, memberId: string, seconds: number) {
  await db('task_member_time')
    .where({ team_id: teamId, task_id: taskId, team_member_id: memberId })
    .update({ total_seconds: db.raw('total_seconds - ?', [seconds]), log_count: db.raw('log_count - 1') });
}

export async function insertTimeLog(
  db: Knex,
  teamId: string,
  log: { task_id: string; team_member_id: string; seconds: number; logged_at?: string; note?: string | null },
): Promise<TimeLogRow> {
  const [row] = await db('time_logs').insert({ team_id: teamId, ...log }).returning(COLUMNS);
  await addToMemberTotal(db, teamId, log.task_id, log.team_member_id, log.seconds);
  return row;
}

export async function findTimeLog(db: Knex, teamId: string, id: string): Promise<TimeLogRow | undefined> {
  return db('time_logs').where({ team_id: teamId, id }).first(COLUMNS);
}

export async function deleteTimeLog(db: Knex, teamId: string, id: string): Promise<TimeLogRow | undefined> {
  const [row]: TimeLogRow[] = await db('time_logs').where({ team_id: teamId, id }).delete().returning(COLUMNS);
  if (row) await subtractFromMemberTotal(db, teamId, row.task_id, row.team_member_id, row.seconds);
  return row;
}

export async function listTimeLogs(db: Knex, teamId: string, taskId: string): Promise<TimeLogRow[]> {
  return db('time_logs')
    .where({ team_id: teamId, task_id: taskId })
    .select(COLUMNS)
    .orderBy([{ column: 'logged_at', order: 'desc' }, { column: 'id' }])
    .limit(10_000);
}

/** The project of a task, archived or not (tasks never move between projects). */
export async function projectOfTask(db: Knex, teamId: string, taskId: string): Promise<string> {
  const row: { project_id: string } = await db('tasks').where({ team_id: teamId, id: taskId }).first('project_id');
  return row.project_id;
}
