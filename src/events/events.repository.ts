import type { Knex } from 'knex';
import { nowIso } from '../clock';
import { toJson } from '../json';
import type { EventType } from './event-types';

/** An event as stored; `data` is its JSON text, passed on as it is (exact numbers). */
export type EventRow = { id: string; seq: string; type: EventType; occurred_at: Date; data: string };

/**
 * Records an event in the team's feed, in the caller's transaction (the write's own: the event
 * commits or rolls back with it), and queues its delivery to each of the team's webhooks that
 * follows its type (webhooks/webhooks.worker.ts delivers them). One statement, one round trip.
 * The event has no `seq` yet: sequenceEvents gives it one once it is committed. No data: the write
 * changed nothing the feed follows (a rename), and nothing is recorded.
 */
export async function recordEvent(trx: Knex, teamId: string, type: EventType, data: Record<string, unknown> | undefined): Promise<void> {
  if (data === undefined) return;
  await trx.raw(
    `with ${eventCtes('(select 1) one', 'cast(:data as jsonb)')}
     select 1 from queued`,
    { teamId, type, now: nowIso(), data: toJson(data) },
  );
}

/**
 * SQL: the CTEs `event` and `queued` that record one event per row of `source` with `dataSql` (jsonb)
 * and queue its deliveries, as recordEvent does; for a write that records its event in its own
 * statement (a time log: one round trip, no transaction). Bindings :teamId, :type and :now.
 */
export function eventCtes(source: string, dataSql: string): string {
  return `event as (
       insert into events (team_id, type, occurred_at, data)
       select :teamId, :type, cast(:now as timestamptz), ${dataSql} from ${source}
       returning id
     ),
     queued as (
       insert into webhook_deliveries (team_id, webhook_id, event_id, next_attempt_at, created_at)
       select :teamId, w.id, event.id, cast(:now as timestamptz), cast(:now as timestamptz)
       from event cross join webhooks w
       where w.team_id = :teamId and (w.event_types @> array[cast(:type as text)] or w.event_types @> array['*'])
       returning 1
     )`;
}

/*
 * Why a sequencer. A sequence number taken at insert (a bigserial) is not enough for a reader paging
 * by seq: two writers take 7 and 8, the one with 8 commits first, a reader answers 8 and next_after=8,
 * then 7 commits and is never seen. So an event is numbered only once committed, by the team's
 * sequencer: under the lock of the team's event_feeds row, every committed event still without a seq
 * gets the next numbers, in the order they were inserted. The lock is taken by the first statement
 * and the numbering is a later statement (READ COMMITTED: a new snapshot, taken once the lock is held),
 * so it sees everything the previous holder numbered; an event committed after it is numbered by a
 * later run with higher numbers. Readers only hand out numbered events, so `seq` only grows and a
 * page never skips one. Writers never wait for the lock: they only insert. (PGlite has one connection:
 * transactions run one at a time, and the same reasoning holds trivially.)
 */
async function sequenceEvents(trx: Knex, teamId: string): Promise<void> {
  const locked = await trx.raw(
    `insert into event_feeds (team_id) values (:teamId)
     on conflict (team_id) do update set last_seq = event_feeds.last_seq
     returning last_seq`,
    { teamId },
  );
  const top = String(locked.rows[0].last_seq);
  await trx.raw(
    `with pending as (
       select id, row_number() over (order by recorded) as n from events where team_id = :teamId and seq is null
     ),
     numbered as (
       update events e set seq = cast(:top as bigint) + pending.n
       from pending where e.team_id = :teamId and e.id = pending.id
       returning e.seq
     )
     update event_feeds set last_seq = (select max(seq) from numbered)
     where team_id = :teamId and exists (select 1 from numbered)`,
    { teamId, top },
  );
}

/** A page of the team's feed: numbered events after `after`, of one type or all, in seq order. */
export async function readFeed(
  db: Knex,
  teamId: string,
  page: { after: string; limit: number; type?: EventType },
): Promise<EventRow[]> {
  return db.transaction(async (trx) => {
    await sequenceEvents(trx, teamId);
    const query = trx('events')
      .where({ team_id: teamId })
      .andWhere('seq', '>', page.after)
      .orderBy('events.seq')
      .limit(page.limit)
      .select('id', trx.raw('seq::text as seq'), 'type', 'occurred_at', trx.raw('data::text as data'));
    if (page.type) query.andWhere({ type: page.type });
    return query;
  });
}
