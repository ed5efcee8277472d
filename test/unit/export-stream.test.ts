import { Writable } from 'node:stream';
import { ExportTree, toCsv } from '../../src/finance/http/finance.export';

const figures = (n: number) => ({
  estimated_hours: `${n}.00`,
  logged_hours: '0.00',
  estimated_labor_cost: `${n * 10}.00`,
  actual_labor_cost: '0.00',
  fixed_cost: '0.00',
  estimated_revenue: '0',
  actual_revenue: '0',
  estimated_margin: `-${n * 10}.00`,
  actual_margin: '0',
  has_missing_rates: '0',
  total_estimated_cost: `${n * 10}.00`,
  total_actual_cost: '0.00',
  variance: `${n * 10}.00`,
});

function tree(rows: number): ExportTree {
  return {
    project: { id: 'p', name: 'Big', currency: 'EUR' },
    parent: null,
    rows: Array.from({ length: rows }, (_, i) => ({
      depth: 0,
      row: { id: `t${i}`, name: `Task ${i}`, parent_task_id: null, status: 'todo', priority: null, phase: null, billable: true, ...figures(i) },
    })) as unknown as ExportTree['rows'],
    totals: figures(rows),
  };
}

/** A client that reads slowly: a tiny buffer, each chunk taken in on a later turn of the event loop. */
function slowClient(): Writable & { received: string[] } {
  const received: string[] = [];
  const out = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk.toString('utf8'));
      setImmediate(callback);
    },
  });
  return Object.assign(out, { received });
}

describe('CSV export streaming', () => {
  it('writes every row, in batches, waiting for a slow client', async () => {
    const out = slowClient();
    await toCsv(tree(1000)).write(out);
    const lines = out.received.join('').split('\r\n');
    expect(lines).toHaveLength(1 + 1000 + 1 + 1); // header, rows, totals, and the empty text after the last CRLF
    expect(lines[1]).toMatch(/^Task 0,t0,0,,todo,,,yes,0\.00,0\.00,0\.00,/);
    expect(lines[1000]).toMatch(/^Task 999,t999,0,/);
    expect(lines[1001]).toMatch(/^Total,,,,,,,,1000\.00,/);
    expect(out.received.length).toBeGreaterThan(3);
  });

  it('stops when the client goes away', async () => {
    const out = slowClient();
    const writing = toCsv(tree(5000)).write(out);
    out.destroy();
    await expect(writing).rejects.toThrow('the client went away during an export');
  });
});
