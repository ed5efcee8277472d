import { ListOrder, parsePage, pageSql, takePage } from '../../src/http/paging';

/* The paging module's pure parts: the keyset SQL (its text, as a golden string) and cursors. */

const LOGS: ListOrder = {
  list: 'logs',
  keys: [
    { sql: 'logged_at', type: 'timestamptz', descending: true },
    { sql: 'id', type: 'uuid' },
  ],
};
const ID = '3f1c1b8e-1111-4222-8333-944455556666';
const cursorOf = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');

describe('pageSql', () => {
  it('orders and bounds the first page only by its limit', () => {
    expect(pageSql(LOGS, { limit: 10, after: null })).toEqual({
      keys: 'cast(logged_at as text) as page_key_0, cast(id as text) as page_key_1',
      after: 'true',
      orderBy: 'logged_at desc, id asc',
      limit: ':page_limit',
      bindings: { page_limit: 11 },
    });
  });

  it('selects the rows after the cursor in the list order, each direction its own', () => {
    const sql = pageSql(LOGS, { limit: 2, after: ['2026-11-20 09:00:00.000001+00', ID] });
    expect(sql.after).toBe(
      'logged_at <= cast(:page_after_0 as timestamptz) and ((logged_at < cast(:page_after_0 as timestamptz)) or ' +
        '(logged_at = cast(:page_after_0 as timestamptz) and id > cast(:page_after_1 as uuid)))',
    );
    expect(sql.bindings).toEqual({ page_limit: 3, page_after_0: '2026-11-20 09:00:00.000001+00', page_after_1: ID });
  });
});

describe('cursors', () => {
  it('carry the last row\'s keys to the next page, and none after the last page', () => {
    const rows = [1, 2, 3].map((n) => ({ n, page_key_0: `2026-11-2${n} 09:00:00+00`, page_key_1: ID }));
    const page = takePage(rows, LOGS, { limit: 2, after: null });
    expect(page.rows).toEqual([{ n: 1 }, { n: 2 }]);
    expect(parsePage({ after: page.next as string }, LOGS)).toEqual({ limit: 1000, after: ['2026-11-22 09:00:00+00', ID] });
    expect(takePage(rows, LOGS, { limit: 3, after: null }).next).toBeNull();
  });

  it.each([
    ['another list\'s', cursorOf(['projects', '2026-11-20 09:00:00+00', ID])],
    ['too few keys', cursorOf(['logs', '2026-11-20 09:00:00+00'])],
    ['a key of the wrong type', cursorOf(['logs', '2026-11-20 09:00:00+00', 42])],
    ['a bad uuid', cursorOf(['logs', '2026-11-20 09:00:00+00', 'x'])],
    ['a date that does not exist', cursorOf(['logs', '2026-02-30 09:00:00+00', ID])],
    ['an hour that does not exist', cursorOf(['logs', '2026-11-20 24:00:00+00', ID])],
    ['not JSON', Buffer.from('[logs').toString('base64url')],
    ['not base64url', 'a+b/c='],
  ])('refuses %s (400 naming after)', (_what, after) => {
    expect(() => parsePage({ after }, LOGS)).toThrow(expect.objectContaining({ status: 400, details: [expect.objectContaining({ path: 'after' })] }));
  });
});
