import { Harness, startHarness } from '../../support/harness';
import { ClaimedDelivery, claimDue } from '../../../src/webhooks/webhooks.repository';

/*
 * claimDue with a backlog (webhooks.repository.ts): a webhook whose receiver is slow or hangs has
 * hundreds of due deliveries older than anything another webhook has; the other webhook's deliveries
 * are still claimed, whether the slow one is full in this instance or not, and no webhook gets more
 * than its free slots. Rows are written straight to the tables, due at chosen instants.
 */

let h: Harness;
beforeAll(async () => {
  // A database of its own: a worker of another test file (webhooks.test.ts) claims every due delivery it sees.
  h = await startHarness({ ownDatabase: true });
});
afterAll(() => h.close());

const NOW = new Date('2026-11-20T12:00:00Z');
const LEASE = new Date('2026-11-20T12:01:00Z');

async function webhook(name: string): Promise<string> {
  const [row] = await h.db('webhooks').insert({ team_id: h.teamId, url: `https://hooks.example.com/${name}`, event_types: ['*'], secret: 'whsec_x' }).returning('id');
  return row.id;
}

/** `count` deliveries to `webhookId`, due from `secondsBefore` NOW on, a millisecond apart (each with its event). */
async function queue(webhookId: string, count: number, secondsBefore: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 200) {
    const n = Math.min(200, count - start);
    const events = await h.db('events')
      .insert(Array.from({ length: n }, (_v, i) => ({ team_id: h.teamId, type: 'project.changed', occurred_at: NOW.toISOString(), data: JSON.stringify({ n: start + i }) })))
      .returning('id');
    const rows = events.map((event: { id: string }, i: number) => {
      const due = new Date(NOW.getTime() - secondsBefore * 1000 + (start + i)).toISOString();
      return { team_id: h.teamId, webhook_id: webhookId, event_id: event.id, next_attempt_at: due, created_at: due };
    });
    ids.push(...(await h.db('webhook_deliveries').insert(rows).returning('id')).map((r: { id: string }) => r.id));
  }
  return ids;
}

const byWebhook = (claimed: readonly ClaimedDelivery[], id: string) => claimed.filter((d) => d.webhook_id === id);

it('claims another webhook\'s fresh deliveries behind a backlog of 700, full or not, within each webhook\'s free slots', async () => {
  const slow = await webhook('slow');
  const other = await webhook('other');
  const backlog = await queue(slow, 700, 3600);
  const fresh = await queue(other, 3, 1);

  // The slow webhook full in this instance (4 of 4 in flight): only the other's are claimed.
  const whileFull = await claimDue(h.db, { now: NOW, leaseUntil: LEASE, limit: 64, perWebhook: 4, inFlight: new Map([[slow, 4]]) });
  expect(byWebhook(whileFull, slow)).toEqual([]);
  expect(byWebhook(whileFull, other).map((d) => d.id).sort()).toEqual([...fresh].sort());

  // Three more for the other, and the slow one with a free slot: the slow one's oldest, the other's too.
  const more = await queue(other, 3, 0.5);
  const withRoom = await claimDue(h.db, { now: NOW, leaseUntil: LEASE, limit: 64, perWebhook: 4, inFlight: new Map([[slow, 3], [other, 3]]) });
  expect(byWebhook(withRoom, slow).map((d) => d.id)).toEqual([backlog[0]]);
  expect(byWebhook(withRoom, other).map((d) => d.id)).toEqual([more[0]]);

  // Claimed ones are leased (not due again before LEASE), each attempt counted.
  expect(withRoom.every((d) => d.attempts === 1)).toBe(true);
  const again = await claimDue(h.db, { now: NOW, leaseUntil: LEASE, limit: 64, perWebhook: 4, inFlight: new Map() });
  const claimedBefore = new Set([...whileFull, ...withRoom].map((d) => d.id));
  expect(again.filter((d) => claimedBefore.has(d.id))).toEqual([]);
  // Nothing in flight: four of each webhook at most, the slow one's next oldest first.
  expect(new Set(byWebhook(again, slow).map((d) => d.id))).toEqual(new Set(backlog.slice(1, 5)));
  expect(new Set(byWebhook(again, other).map((d) => d.id))).toEqual(new Set(more.slice(1)));
});
