import { Writable } from 'node:stream';
import { ExportTree, toXlsx } from '../../src/finance/http/finance.export';

/*
 * An XLSX export to a client that takes nothing stops writing rows (exceljs's zip stream is piped
 * into the response, and rows committed meanwhile would pile up in memory), and ends when the client
 * is cut off. Before, it went on through every row.
 */
const ROWS = 20_000;

/** Rows whose figures count how many rows the writer has turned into cells (text columns are read up front). */
function countingTree(written: { rows: number }): ExportTree {
  const figures = { estimated_hours: '1.00', logged_hours: '0.00', estimated_labor_cost: '10.00', actual_labor_cost: '0.00', fixed_cost: '0.00', total_estimated_cost: '10.00', total_actual_cost: '0.00', estimated_revenue: '0', actual_revenue: '0', estimated_margin: '-10.00', actual_margin: '0', has_missing_rates: '0' };
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    depth: 0,
    // Random names: the zip cannot shrink them to nothing, so the stalled client's buffer fills.
    row: {
      id: `t${i}`,
      name: `Task ${i} ${Math.random().toString(36)}${Math.random().toString(36)}`,
      parent_task_id: null,
      status: null,
      priority: null,
      phase: null,
      billable: true,
      ...figures,
      get variance() {
        written.rows++;
        return '10.00';
      },
    },
  }));
  return { project: { id: 'p', name: 'Big', currency: 'EUR' }, parent: null, rows: rows as unknown as ExportTree['rows'], totals: { ...figures, variance: '10.00' } };
}

describe('XLSX export to a client that reads nothing', () => {
  it('stops writing rows while the client takes nothing, and ends when it is cut off', async () => {
    const written = { rows: 0 };
    // Never calls back: a client that took the first chunk and nothing more.
    const out = new Writable({ highWaterMark: 16 * 1024, write: () => undefined });
    const writing = toXlsx(countingTree(written)).write(out);
    const outcome = writing.then(() => 'finished', (err: Error) => err.message);
    // Many turns of the event loop, each enough for the writer's next batch of rows.
    for (let turn = 0; turn < 5_000 && written.rows < ROWS; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(written.rows).toBeLessThan(ROWS);
    out.destroy();
    await expect(outcome).resolves.toBe('the client went away during an export');
  });
});
