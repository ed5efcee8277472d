import fc from 'fast-check';
import { jsonArrayInTurns, toJson } from '../../src/http/respond';
import { nextTurn, turns } from '../../src/turns';
import { countingTurns } from '../support/turns';

describe('turns', () => {
  it('is due once its time budget has passed, and taking a turn lets waiting callbacks run first', async () => {
    const pace = turns(0);
    expect(pace.due()).toBe(true);
    let ran = false;
    setImmediate(() => (ran = true));
    await pace.take();
    expect(ran).toBe(true);
    expect(turns(60_000).due()).toBe(false);
  });

  it('nextTurn runs after callbacks queued before it', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('queued first'));
    await nextTurn();
    order.push('after the turn');
    expect(order).toEqual(['queued first', 'after the turn']);
  });
});

describe('jsonArrayInTurns', () => {
  it('writes what JSON.stringify writes for the same array', async () => {
    const items = fc.array(fc.oneof(fc.jsonValue(), fc.constant(undefined)), { maxLength: 50 });
    await fc.assert(
      fc.asyncProperty(items, async (array) => {
        expect(toJson({ tasks: await jsonArrayInTurns(array) })).toBe(JSON.stringify({ tasks: array }));
      }),
    );
  });

  it('renders an array of more items than a call takes arguments (a list of 250,000 tasks)', async () => {
    const array = Array.from({ length: 250_000 }, (_, i) => i % 7);
    expect(toJson(await jsonArrayInTurns(array))).toBe(JSON.stringify(array));
  });

  it('lets other callbacks run while it renders', async () => {
    const array = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `task ${i}`, nested: { a: [i, i + 1] } }));
    // A budget of 0 ms: a turn before every item, so the counter runs once per item (in one go: never).
    const { result: text, turns: turnsSeen } = await countingTurns(() => jsonArrayInTurns(array, 0));
    expect(toJson(text)).toBe(JSON.stringify(array));
    expect(turnsSeen).toBeGreaterThanOrEqual(array.length - 1);
  });
});
