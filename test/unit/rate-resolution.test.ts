import { entryInForce, resolveRate, resolveRates, roleOn } from '../../src/finance/rules/rate-resolution';

/*
 * docs/finance-rules.md R22 (precedence) and R26 (explanation): a member's own entry, else its role's,
 * else none, each rate on its own; by hand.
 */

const entry = (effective_from: string, hourly_rate: string | null, bill_rate: string | null) => ({ effective_from, hourly_rate, bill_rate });

// Dev's card: 50 / 80 from the beginning, 60 / no bill rate from 2026-07-01.
const card = [entry('1970-01-01', '50', '80'), entry('2026-07-01', '60', null)];
// Ann's own: cost 70 from 2026-03-01, then only a bill rate of 95 from 2026-06-01 (its cost defers to the role).
const own = [entry('2026-06-01', null, '95'), entry('2026-03-01', '70', null)];

describe('entryInForce', () => {
  it('takes the latest entry on or before the day, whatever the order', () => {
    expect(entryInForce(own, '2026-02-28')).toBeUndefined();
    expect(entryInForce(own, '2026-03-01')?.effective_from).toBe('2026-03-01');
    expect(entryInForce(own, '2026-05-31')?.effective_from).toBe('2026-03-01');
    expect(entryInForce(own, '2026-06-01')?.effective_from).toBe('2026-06-01');
    expect(entryInForce([], '2026-06-01')).toBeUndefined();
  });
});

describe('roleOn', () => {
  const roles = [
    { job_role_id: 'qa', effective_from: '2026-05-01' },
    { job_role_id: null, effective_from: '2026-09-01' },
  ];
  it('counts the first role from the beginning of time, and a null role as none', () => {
    expect(roleOn(roles, '2020-01-01')?.job_role_id).toBe('qa');
    expect(roleOn(roles, '2026-05-01')?.job_role_id).toBe('qa');
    expect(roleOn(roles, '2026-09-01')?.job_role_id).toBeNull();
    expect(roleOn([], '2026-09-01')).toBeUndefined();
  });
});

describe('resolveRate', () => {
  it('takes the member\'s non-null entry, else the role\'s, else none, each rate on its own', () => {
    // Before any own entry: both from the card's first entry.
    expect(resolveRates(own, card, '2026-02-01')).toEqual({
      hourly_rate: { amount: '50', source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: '80', source: 'role', effective_from: '1970-01-01' },
    });
    // The own cost rate of 70 beats the role's 50; the bill rate still the role's.
    expect(resolveRates(own, card, '2026-03-01')).toEqual({
      hourly_rate: { amount: '70', source: 'member', effective_from: '2026-03-01' },
      bill_rate: { amount: '80', source: 'role', effective_from: '1970-01-01' },
    });
    // From 2026-06-01 the own entry has a null cost rate: the role's decides; its bill rate of 95 is its own.
    expect(resolveRates(own, card, '2026-06-15')).toEqual({
      hourly_rate: { amount: '50', source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: '95', source: 'member', effective_from: '2026-06-01' },
    });
    // From 2026-07-01 the role costs 60.
    expect(resolveRate('hourly_rate', own, card, '2026-07-01')).toEqual({ amount: '60', source: 'role', effective_from: '2026-07-01' });
  });

  it('answers none (0, no entry) when neither the member nor its role has the rate', () => {
    // The card's 2026-07-01 entry has no bill rate, and nothing of the member's on that day has one either.
    expect(resolveRate('bill_rate', [entry('2026-06-01', '70', null)], card, '2026-07-01')).toEqual({ amount: '0', source: 'none', effective_from: null });
    // No role (an empty card) and no own entries.
    expect(resolveRates([], [], '2026-07-01')).toEqual({
      hourly_rate: { amount: '0', source: 'none', effective_from: null },
      bill_rate: { amount: '0', source: 'none', effective_from: null },
    });
  });

  it('takes an own rate of 0 as a rate (not a missing one)', () => {
    expect(resolveRate('hourly_rate', [entry('2026-01-01', '0', null)], card, '2026-02-01')).toEqual({ amount: '0', source: 'member', effective_from: '2026-01-01' });
  });
});
