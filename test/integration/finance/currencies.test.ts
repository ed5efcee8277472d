import { Harness, startHarness } from '../../support/harness';
import { createProject, createTask } from '../../support/fixtures';
import { ISO_4217_MINOR_UNITS, isoMinorUnit } from '../../support/oracle';

/*
 * The service's minor units against the oracle's ISO 4217 table, through the API: for every code the
 * service accepts as a project's currency (among ICU's codes and the table's), a fixed cost with as many
 * decimals as ISO 4217's minor unit is accepted and one with a decimal more is a 400 naming the field.
 * Codes the service refuses (metals, test codes) answer 400 and are left out.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('accepts a fixed cost with exactly the ISO 4217 minor unit of every accepted currency, and refuses one more decimal', async () => {
  const project = await createProject(h.api);
  const task = await createTask(h.api, project.id, { fixed_cost: 0 });
  const candidates = [...new Set([...Intl.supportedValuesOf('currency'), ...ISO_4217_MINOR_UNITS.keys()])].sort();
  const accepted: string[] = [];
  const mismatches: { code: string; digits: number; fits: number; oneMore: number }[] = [];
  for (const code of candidates) {
    const patched = await h.api.patch(`/api/projects/${project.id}`, { currency: code });
    if (patched.status === 400) continue;
    expect({ code, status: patched.status }).toEqual({ code, status: 200 });
    accepted.push(code);
    const digits = isoMinorUnit(code);
    // 1 + 10^-digits fits (1.01 for USD, 2 for JPY); 1 + 10^-(digits + 1) does not (1.001, 1.1).
    const fits = await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 1 + 10 ** -digits });
    const oneMore = await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 1 + 10 ** -(digits + 1) });
    if (fits.status !== 200 || oneMore.status !== 400) mismatches.push({ code, digits, fits: fits.status, oneMore: oneMore.status });
    else expect(oneMore.body.error.details).toEqual([expect.objectContaining({ path: 'fixed_cost' })]);
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 0 }).expect(200);
  }
  expect(mismatches).toEqual([]);
  expect(accepted).toEqual(expect.arrayContaining(['JPY', 'USD', 'KWD', 'CLF', 'UYW', 'UYI', 'IQD']));
});
