import type { Knex } from 'knex';
import { JsonText } from '../json';
import type { EventType } from './event-types';
import * as repo from './events.repository';

/** GET /api/events: a page of the team's feed in seq order, and where the next page starts. */
export async function listEvents(db: Knex, teamId: string, query: { after?: string; limit?: number; type?: EventType }) {
  const after = query.after ?? '0';
  const rows = await repo.readFeed(db, teamId, { after, limit: query.limit ?? 100, type: query.type });
  const events = rows.map((row) => ({ id: row.id, seq: Number(row.seq), type: row.type, occurred_at: row.occurred_at, data: new JsonText(row.data) }));
  return { events, next_after: events.at(-1)?.seq ?? Number(after) };
}
