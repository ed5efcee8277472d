import type { Knex } from 'knex';
import { JsonText } from '../json';
import type { EventType } from './event-types';
import * as repo from './events.repository';
import { settlePending } from '../finance/read-model/budget-watch';

/**
 * GET /api/events: a page of the team's feed in seq order, and where the next page starts. Budgets
 * left pending (a big project's, or a settle that failed) are settled first, so the feed holds every
 * crossing its writes made (docs/finance-rules.md R28.5).
 */
export async function listEvents(db: Knex, teamId: string, query: { after?: string; limit?: number; type?: EventType }) {
  await settlePending(db, teamId);
  const after = query.after ?? '0';
  const rows = await repo.readFeed(db, teamId, { after, limit: query.limit ?? 100, type: query.type });
  const events = rows.map((row) => ({ id: row.id, seq: Number(row.seq), type: row.type, occurred_at: row.occurred_at, data: new JsonText(row.data) }));
  return { events, next_after: events.at(-1)?.seq ?? Number(after) };
}
