import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { generator } from '../../support/random';

/*
 * The precedence of rates (docs/finance-rules.md R22.2) is applied in two places: by SQL where the
 * breakdown's inputs are read (src/finance/inputs/participants.ts: each log day's cost line, and a
 * member's rates today), and by rules/rate-resolution.ts where the explanation route says which rate
 * holds on a day. Here they must agree on random histories: a project's card, a member's roles and
 * its own rates, each dated at random with some rates null, and an hour logged on each of twelve
 * days. Each day's cost line in the breakdown must carry the role, cost rate and bill rate the
 * explanation gives for that day, and the member's entry today the explanation's rates and sources.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const DAYS = Array.from({ length: 12 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`);

type Explained = {
  job_role: { name: string } | null;
  hourly_rate: { amount: number; source: string };
  bill_rate: { amount: number; source: string };
};

for (const seed of [3, 17, 29]) {
  it(`cost lines and today's rates agree with the explanation of each day (seed ${seed})`, async () => {
    const random = generator(seed);
    const rate = () => (random.int(4) === 0 ? null : 20 + random.int(80) + random.int(4) / 4);
    const day = () => random.pick(DAYS);
    const roles = [await createJobRole(h.api), await createJobRole(h.api)];
    const project = (await createProject(h.api, { time_zone: 'UTC' })).id;
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project, ann.id, (roles[0] as { id: string }).id);
    const task = await createTask(h.api, project, { estimated_hours: 8, assignee_ids: [ann.id] });

    // Dated histories, in random order: cards (every role, some rates null), role changes, own rates.
    for (let step = 0; step < 8; step++) {
      const kind = random.int(3);
      if (kind === 0) {
        await h.api
          .put(`/api/projects/${project}/rate-card`, { roles: roles.map((role) => ({ job_role_id: role.id, hourly_rate: rate(), bill_rate: rate() })), effective_from: day() })
          .expect(200);
      } else if (kind === 1) {
        const role = random.int(3) === 0 ? null : random.pick(roles).id;
        await h.api.put(`/api/projects/${project}/members/${ann.id}`, { job_role_id: role, effective_from: day() }).expect(200);
      } else {
        await h.api.put(`/api/projects/${project}/members/${ann.id}/rates`, { hourly_rate: rate(), bill_rate: rate(), effective_from: day() }).expect(200);
      }
    }
    if (random.int(2) === 0) await setRateCard(h.api, project, [{ job_role_id: (roles[1] as { id: string }).id, hourly_rate: rate() }], '2026-03-06');
    for (const logDay of DAYS) await logTime(h.api, task.id, ann.id, { seconds: 3600, logged_at: `${logDay}T10:00:00Z` });

    const explain = async (date?: string) =>
      (await h.api.get(`/api/projects/${project}/members/${ann.id}/rates${date ? `?date=${date}` : ''}`).expect(200)).body.body as Explained;
    // Expected lines: the log days grouped by what the explanation says holds on each.
    const expected = new Map<string, { job_role: string | null; hourly_rate: number; bill_rate: number; logged_hours: number; first_day: string; last_day: string }>();
    for (const logDay of DAYS) {
      const on = await explain(logDay);
      // A cost line without a role is shown under "Unassigned" (R15.3).
      const role = on.job_role?.name ?? 'Unassigned';
      const key = JSON.stringify([role, on.hourly_rate.amount, on.bill_rate.amount]);
      const line = expected.get(key);
      if (line) {
        line.logged_hours += 1;
        line.last_day = logDay;
      } else {
        expected.set(key, { job_role: role, hourly_rate: on.hourly_rate.amount, bill_rate: on.bill_rate.amount, logged_hours: 1, first_day: logDay, last_day: logDay });
      }
    }
    const member = (await breakdown(h.api, task.id)).members.find((entry) => entry.team_member_id === ann.id) as unknown as {
      hourly_rate: number;
      bill_rate: number;
      cost_rate_source: string;
      bill_rate_source: string;
      cost_lines: { job_role: string | null; hourly_rate: number; bill_rate: number; logged_hours: number; first_day: string; last_day: string }[];
    };
    const byKey = (line: { job_role: string | null; hourly_rate: number; bill_rate: number }) => JSON.stringify([line.job_role, line.hourly_rate, line.bill_rate]);
    const lines = member.cost_lines.map(({ job_role, hourly_rate, bill_rate, logged_hours, first_day, last_day }) => ({ job_role, hourly_rate, bill_rate, logged_hours, first_day, last_day }));
    expect(lines.sort((a, b) => byKey(a).localeCompare(byKey(b)))).toEqual([...expected.values()].sort((a, b) => byKey(a).localeCompare(byKey(b))));

    const today = await explain();
    expect({ hourly_rate: member.hourly_rate, bill_rate: member.bill_rate, cost_rate_source: member.cost_rate_source, bill_rate_source: member.bill_rate_source }).toEqual({
      hourly_rate: today.hourly_rate.amount,
      bill_rate: today.bill_rate.amount,
      cost_rate_source: today.hourly_rate.source,
      bill_rate_source: today.bill_rate.source,
    });
  });
}
