import type { Knex } from 'knex';
import { ListOrder, Page, PageRequest, pageSql, pagedQuery, takePage } from '../http/paging';

export type WebhookRow = { id: string; url: string; event_types: string[]; description: string | null; created_at: Date };

const COLUMNS = ['id', 'url', 'event_types', 'description', 'created_at'];

export async function insertWebhook(
  db: Knex,
  teamId: string,
  fields: { url: string; event_types: string[]; description: string | null; secret: string },
): Promise<WebhookRow> {
  const [row] = await db('webhooks').insert({ team_id: teamId, ...fields }).returning(COLUMNS);
  return row;
}

/** The webhooks list's order: oldest first. */
export const WEBHOOKS_ORDER: ListOrder = {
  list: 'webhooks',
  keys: [
    { sql: 'created_at', type: 'timestamptz' },
    { sql: 'id', type: 'uuid' },
  ],
};

export async function listWebhooks(db: Knex, teamId: string, page: PageRequest): Promise<Page<WebhookRow>> {
  const rows: WebhookRow[] = await pagedQuery(db, db('webhooks').where({ team_id: teamId }).select(COLUMNS), WEBHOOKS_ORDER, page);
  return takePage(rows, WEBHOOKS_ORDER, page);
}

export async function findWebhook(db: Knex, teamId: string, id: string): Promise<WebhookRow | undefined> {
  return db('webhooks').where({ team_id: teamId, id }).first(COLUMNS);
}

/** Deletes a webhook with its queued deliveries and attempt log. */
export async function deleteWebhook(db: Knex, teamId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await db('webhooks').where({ team_id: teamId, id }).delete().returning(COLUMNS);
  return row;
}

export type AttemptRow = {
  id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
  next_attempt_at: Date | null;
  outcome: 'delivered' | 'retrying' | 'failed';
};

/** A webhook's attempts list's order: newest first (webhook_attempts_log's order). */
export const ATTEMPTS_ORDER: ListOrder = {
  list: 'webhook-deliveries',
  keys: [
    { sql: 'a.attempted_at', type: 'timestamptz', descending: true },
    { sql: 'a.id', type: 'uuid' },
  ],
};

/** A page of a webhook's attempts, newest first. */
export async function listAttempts(db: Knex, teamId: string, webhookId: string, page: PageRequest): Promise<Page<AttemptRow>> {
  const sql = pageSql(ATTEMPTS_ORDER, page);
  const result = await db.raw(
    `select a.id, a.delivery_id, a.event_id, a.event_type, a.status_code, a.error, a.duration_ms, a.attempted_at, a.next_attempt_at,
            case when a.status_code between 200 and 299 and a.error is null then 'delivered'
                 when a.next_attempt_at is null then 'failed' else 'retrying' end as outcome,
            ${sql.keys}
     from webhook_attempts a
     where a.team_id = :teamId and a.webhook_id = :webhookId and ${sql.after}
     order by ${sql.orderBy}
     limit ${sql.limit}`,
    { teamId, webhookId, ...sql.bindings },
  );
  return takePage(result.rows as AttemptRow[], ATTEMPTS_ORDER, page);
}

/* The delivery queue (webhooks.worker.ts). */

/**
 * How many due deliveries a claim of `limit` looks at (claimDue), at the oldest end and at the newest:
 * a few times what it may take, so that webhooks near their cap still leave room for the others,
 * and no more (a claim is made whenever an attempt ends: a busy queue is claimed from hundreds of times
 * a second, a few rows each).
 */
const scanOf = (limit: number) => ({ oldest: Math.min(512, Math.max(32, limit * 8)), newest: Math.min(128, Math.max(16, limit * 2)) });

/** A claimed delivery with what its attempt sends. */
export type ClaimedDelivery = {
  team_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret: string;
  /** The JSON POSTed: {id, type, occurred_at, data}, the data as stored (exact numbers). */
  body: string;
};

/**
 * Claims due deliveries for one attempt each (FOR UPDATE SKIP LOCKED: with several instances, each
 * delivery is claimed by one): of each webhook, at most `perWebhook` less the attempts `inFlight`
 * already has in this instance; `limit` in all, oldest due first. A claim is a lease: its next_attempt_at moves to `leaseUntil`, so a delivery whose
 * instance dies mid-attempt is claimed again then (at least once), and its attempt count grows.
 *
 * What it reads is bounded whatever the backlog: the webhooks already at `perWebhook` in this instance
 * (a receiver that hangs keeps its slots full) are left out of the scan, and only the oldest and
 * newest due deliveries of the others (scanOf) are ranked (along the due index, both ends, no sort
 * of the whole queue). A webhook whose backlog fills the oldest end is full once claimed, so the next
 * claim reaches the others; and while it drains, other webhooks' fresh events are at the newest end.
 *
 * What it locks and leases is found again by its ctid (read by this statement, so still that row's
 * version: one another instance changed meanwhile fails the ctid's recheck and is skipped), and each
 * claimed row's event and webhook by key, one lookup a row (`offset 0` keeps the planner from joining
 * them otherwise). Planned from its estimate of the claim (its limit, hundreds of rows), a join read
 * the whole table instead, every claim, and the table keeps every delivery ever made.
 */
export async function claimDue(
  db: Knex,
  opts: { now: Date; leaseUntil: Date; limit: number; perWebhook: number; inFlight: ReadonlyMap<string, number> },
): Promise<ClaimedDelivery[]> {
  const full = [...opts.inFlight].filter(([, attempts]) => attempts >= opts.perWebhook).map(([id]) => id);
  const result = await db.raw(
    `with busy (webhook_id, attempts) as (select * from unnest(cast(:busyIds as uuid[]), cast(:busyCounts as int[]))),
     oldest as (
       (select d.ctid as tuple, d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at <= cast(:now as timestamptz) and d.webhook_id <> all(cast(:fullIds as uuid[]))
        order by d.next_attempt_at
        limit :scan)
       union
       (select d.ctid as tuple, d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at <= cast(:now as timestamptz) and d.webhook_id <> all(cast(:fullIds as uuid[]))
        order by d.next_attempt_at desc
        limit :scanNewest)
     ),
     candidates as (
       select tuple from (
         select o.tuple, o.id, o.next_attempt_at, coalesce(busy.attempts, 0) as attempts,
                row_number() over (partition by o.webhook_id order by o.next_attempt_at, o.id) as rank
         from oldest o left join busy on busy.webhook_id = o.webhook_id
       ) ranked
       where rank <= :perWebhook - attempts
       order by next_attempt_at, id
       limit :limit
     ),
     locked as (
       select d.ctid as tuple from webhook_deliveries d
       where d.ctid = any(array(select tuple from candidates)) and d.status = 'pending' and d.next_attempt_at <= cast(:now as timestamptz)
       for update of d skip locked
     ),
     claimed as (
       update webhook_deliveries d set next_attempt_at = cast(:leaseUntil as timestamptz), attempts = d.attempts + 1
       where d.ctid = any(array(select tuple from locked))
       returning d.team_id, d.id, d.webhook_id, d.event_id, d.attempts, d.created_at
     )
     select c.team_id, c.id, c.webhook_id, c.event_id, c.attempts, c.created_at, e.type as event_type, w.url, w.secret,
            json_build_object('id', e.id, 'type', e.type,
              'occurred_at', to_char(e.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', e.data)::text as body
     from claimed c
     cross join lateral (select e.* from events e where e.team_id = c.team_id and e.id = c.event_id offset 0) e
     cross join lateral (select w.* from webhooks w where w.team_id = c.team_id and w.id = c.webhook_id offset 0) w`,
    {
      now: opts.now.toISOString(),
      leaseUntil: opts.leaseUntil.toISOString(),
      limit: opts.limit,
      perWebhook: opts.perWebhook,
      scan: scanOf(opts.limit).oldest,
      scanNewest: scanOf(opts.limit).newest,
      fullIds: `{${full.join(',')}}`,
      busyIds: `{${[...opts.inFlight.keys()].join(',')}}`,
      busyCounts: `{${[...opts.inFlight.values()].join(',')}}`,
    },
  );
  return result.rows;
}

export type AttemptRecord = {
  delivery: ClaimedDelivery;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  delivered: boolean;
  nextAttemptAt: Date | undefined;
};

/**
 * Records attempts and their consequences, each delivered, due again at `nextAttemptAt`, or failed (no
 * next attempt), in one statement (atomic; one round trip for a whole batch, so a busy queue costs the
 * database one write per batch, not a transaction per attempt). A delivery deleted meanwhile (its
 * webhook was) records nothing. The batch's size is told to the planner (`limit`): for a function's
 * rows it assumes 100, and for 100 it read the whole table rather than look each delivery up by key.
 */
export async function recordAttempts(db: Knex, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map((r) => {
    const status = r.delivered ? 'delivered' : r.nextAttemptAt ? 'pending' : 'failed';
    return {
      team_id: r.delivery.team_id,
      id: r.delivery.id,
      webhook_id: r.delivery.webhook_id,
      event_id: r.delivery.event_id,
      event_type: r.delivery.event_type,
      status,
      next_attempt_at: r.nextAttemptAt?.toISOString() ?? r.attemptedAt.toISOString(),
      finished_at: status === 'pending' ? null : r.attemptedAt.toISOString(),
      status_code: r.statusCode,
      error: r.error,
      duration_ms: r.durationMs,
      attempted_at: r.attemptedAt.toISOString(),
      retry_at: r.delivered ? null : (r.nextAttemptAt?.toISOString() ?? null),
    };
  });
  await db.raw(
    `with attempt as (
       select * from json_to_recordset(cast(:rows as json)) as r (
         team_id uuid, id uuid, webhook_id uuid, event_id uuid, event_type text, status text, next_attempt_at timestamptz,
         finished_at timestamptz, status_code integer, error text, duration_ms integer, attempted_at timestamptz, retry_at timestamptz)
       limit :count
     ),
     updated as (
       update webhook_deliveries d
       set status = attempt.status, next_attempt_at = attempt.next_attempt_at, finished_at = attempt.finished_at
       from attempt where d.team_id = attempt.team_id and d.id = attempt.id
       returning d.team_id, d.id
     )
     insert into webhook_attempts (team_id, webhook_id, delivery_id, event_id, event_type, status_code, error, duration_ms, attempted_at, next_attempt_at)
     select a.team_id, a.webhook_id, a.id, a.event_id, a.event_type, a.status_code, a.error, a.duration_ms, a.attempted_at, a.retry_at
     from attempt a join updated u on u.team_id = a.team_id and u.id = a.id`,
    { rows: JSON.stringify(rows), count: rows.length },
  );
}

/**
 * Refreshes the planner's statistics of the queue. The claim's plan depends on them (with none, an
 * estimate of a few due rows sorts every due row instead of reading the oldest along the due index:
 * 30 ms a claim at 10,000 due on PGlite, 4 ms with them), and the embedded database has no autovacuum
 * to gather them (nor has a server run without it).
 */
export async function analyzeQueue(db: Knex): Promise<void> {
  await db.raw('analyze webhook_deliveries');
}

/** Gives claimed deliveries back (due at `now`), e.g. when the worker stops before attempting them. */
export async function releaseClaims(db: Knex, deliveries: readonly ClaimedDelivery[], now: Date): Promise<void> {
  for (const delivery of deliveries) {
    await db('webhook_deliveries')
      .where({ team_id: delivery.team_id, id: delivery.id, status: 'pending' })
      .update({ next_attempt_at: now.toISOString(), attempts: db.raw('greatest(attempts - 1, 0)') });
  }
}

/** The age in seconds of the oldest event not yet delivered to a webhook that follows it (0: none). */
export async function oldestUndeliveredAge(db: Knex, now: Date): Promise<number> {
  const result = await db.raw(
    `select extract(epoch from (cast(:now as timestamptz) - min(created_at)))::float8 as age from webhook_deliveries where status = 'pending'`,
    { now: now.toISOString() },
  );
  return Math.max(0, Number(result.rows[0]?.age ?? 0));
}
