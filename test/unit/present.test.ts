import { MemberFigures } from '../../src/finance/rules/calculator';
import { Decimal } from '../../src/finance/rules/money';
import { renderBreakdownMembers } from '../../src/finance/rules/present';

const d = (text: string) => new Decimal(text);

function member(id: string, name: string, jobRole: string, hours: string, cost: string, perDay: Decimal | null = null): MemberFigures {
  return {
    teamMemberId: id,
    name,
    avatarUrl: null,
    jobRole,
    hourlyRate: d('50'),
    billRate: d('0'),
    costRateSource: 'role',
    billRateSource: 'none',
    perDay,
    estimatedHours: d('0'),
    loggedHours: d(hours),
    estimatedCost: d('0'),
    actualCost: d(cost),
    estimatedRevenue: d('0'),
    actualRevenue: d('0'),
    missingCostRate: false,
    missingBillRate: false,
    costLines: [
      { jobRole, hourlyRate: d('50'), billRate: d('0'), loggedHours: d(hours), actualCost: d(cost), actualRevenue: d('0'), costMissing: false, billMissing: false, firstDay: '2026-01-02', lastDay: '2026-01-03' },
    ],
  };
}

/** A member entry as docs/api.md writes it, by hand. */
const entry = (id: string, name: string, hours: number, cost: number, role: string) =>
  `{"team_member_id":"${id}","name":"${name}","avatar_url":null,"hourly_rate":50,"bill_rate":0,"estimated_hours":0,"logged_hours":${hours},` +
  `"estimated_cost":0,"actual_cost":${cost},"estimated_revenue":0,"actual_revenue":0,"cost_rate_source":"role","bill_rate_source":"none",` +
  `"cost_lines":[{"job_role":"${role}","hourly_rate":50,"bill_rate":0,"logged_hours":${hours},"actual_cost":${cost},"actual_revenue":0,"first_day":"2026-01-02","last_day":"2026-01-03"}]}`;

describe('renderBreakdownMembers', () => {
  it('writes each member once into both lists: members in the order given with its role, groups by role with the entries by name', () => {
    const members = [member('m2', 'Zoe', 'Dev', '1.5', '75'), member('m1', 'Ann', 'QA', '0.25', '12.5'), member('m3', 'Bob', 'Dev', '2', '100')];
    const { members: flat, groupedMembers } = renderBreakdownMembers(members);
    const zoe = entry('m2', 'Zoe', 1.5, 75, 'Dev');
    const ann = entry('m1', 'Ann', 0.25, 12.5, 'QA');
    const bob = entry('m3', 'Bob', 2, 100, 'Dev');
    const withRole = (text: string, role: string) => `${text.slice(0, -1)},"job_title_name":"${role}"}`;
    expect(flat).toBe(`[${withRole(zoe, 'Dev')},${withRole(ann, 'QA')},${withRole(bob, 'Dev')}]`);
    expect(groupedMembers).toBe(
      '[{"jobRole":"Dev","estimated_hours":0,"logged_hours":3.5,"estimated_cost":0,"actual_cost":175,"estimated_revenue":0,"actual_revenue":0,' +
        `"members":[${bob},${zoe}]},` +
        `{"jobRole":"QA","estimated_hours":0,"logged_hours":0.25,"estimated_cost":0,"actual_cost":12.5,"estimated_revenue":0,"actual_revenue":0,"members":[${ann}]}]`,
    );
  });

  it('writes no members as two empty lists', () => {
    expect(renderBreakdownMembers([])).toEqual({ members: '[]', groupedMembers: '[]' });
  });

  it('escapes names and roles as JSON.stringify does', () => {
    const odd = member('m"1', 'A "quoted" \\ name\n', 'R\u00f4le "x"', '1', '50');
    const { members: flat } = renderBreakdownMembers([odd]);
    const parsed = JSON.parse(flat) as { name: string; job_title_name: string; team_member_id: string }[];
    expect(parsed[0]).toMatchObject({ team_member_id: 'm"1', name: 'A "quoted" \\ name\n', job_title_name: 'R\u00f4le "x"' });
  });
});
