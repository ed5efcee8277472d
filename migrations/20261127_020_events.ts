import type { Knex } from 'knex';

/*
 * The event feed (an outbox: every write records its events in its own transaction) and webhooks
 * (docs/webhooks.md; src/events, src/webhooks).
 *
 * An event is inserted without a `seq`: it gets one only once committed, from the team's sequencer
 * (events.repository.ts, sequenceEvents), so a reader paging by seq never skips a row that commits
 * later with a lower number. `recorded` (a sequence) keeps the order of insertion for the sequencer.
 *
 * A webhook's deliveries are a queue (one row per webhook and event, inserted with the event) that
 * instances claim with FOR UPDATE SKIP LOCKED; each attempt is logged in webhook_attempts.
 */
export async function up(knex: Knex): Promise<void> {
  const statements = [
    `create table events (
       team_id uuid not null references teams (id) on delete cascade,
       id uuid not null default gen_random_uuid(),
       recorded bigserial not null,
       seq bigint,
       type text not null,
       occurred_at timestamptz not null,
       data jsonb not null,
       primary key (team_id, id)
    )`,
    `create unique index events_feed on events (team_id, seq)`,
    `create index events_feed_by_type on events (team_id, type, seq)`,
    `create index events_unsequenced on events (team_id, recorded) where seq is null`,
    `create table event_feeds (
       team_id uuid primary key references teams (id) on delete cascade,
       last_seq bigint not null default 0
    )`,
    `create table webhooks (
       team_id uuid not null references teams (id) on delete cascade,
       id uuid not null default gen_random_uuid(),
       url text not null,
       event_types text[] not null,
       description text,
       secret text not null,
       created_at timestamptz not null default now(),
       primary key (team_id, id)
    )`,
    `create table webhook_deliveries (
       team_id uuid not null,
       id uuid not null default gen_random_uuid(),
       webhook_id uuid not null,
       event_id uuid not null,
       status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
       attempts integer not null default 0,
       next_attempt_at timestamptz not null,
       created_at timestamptz not null,
       finished_at timestamptz,
       primary key (team_id, id),
       foreign key (team_id, webhook_id) references webhooks (team_id, id) on delete cascade,
       foreign key (team_id, event_id) references events (team_id, id) on delete cascade
    )`,
    `create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`,
    `create index webhook_deliveries_oldest on webhook_deliveries (created_at) where status = 'pending'`,
    `create index webhook_deliveries_by_webhook on webhook_deliveries (team_id, webhook_id)`,
    `create index webhook_deliveries_by_event on webhook_deliveries (team_id, event_id)`,
    `create table webhook_attempts (
       team_id uuid not null,
       id uuid not null default gen_random_uuid(),
       webhook_id uuid not null,
       delivery_id uuid not null,
       event_id uuid not null,
       event_type text not null,
       status_code integer,
       error text,
       duration_ms integer not null,
       attempted_at timestamptz not null,
       next_attempt_at timestamptz,
       primary key (team_id, id),
       foreign key (team_id, webhook_id) references webhooks (team_id, id) on delete cascade
    )`,
    `create index webhook_attempts_log on webhook_attempts (team_id, webhook_id, attempted_at desc, id)`,
  ];
  // One at a time: PGlite takes a single statement per query.
  for (const statement of statements) await knex.raw(statement);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhooks', 'event_feeds', 'events']) await knex.raw(`drop table ${table}`);
}
