import type { Knex } from 'knex';
import type { Actor } from '../src/auth/roles';
import { createJobRole } from '../src/job-roles/job-roles.service';
import { createProject, replaceRateCard, setProjectMember } from '../src/projects/projects.service';
import { createTask } from '../src/tasks/tasks.service';
import { DEFAULT_TEAM_ID } from '../src/teams/teams.service';
import { createTeamMember } from '../src/team-members/team-members.service';
import { createTimeLog } from '../src/time-logs/time-logs.service';

export type DemoIds = { projectId: string; parentTaskId: string; leafTaskId: string };

const SEED_ACTOR: Actor = { teamId: DEFAULT_TEAM_ID, role: 'admin', tokenId: DEFAULT_TEAM_ID, tokenName: 'demo seed' };

/** Small deterministic PRNG so every fresh start gets the same demo. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROLES: [string, number | null][] = [
  ['Engineer', 95],
  ['Senior Engineer', 120],
  ['Designer', 80],
  ['Project Manager', 110],
  ['QA Analyst', 65],
  ['Intern', null], // a role with no rate in the card: its members cost 0
];

/** Mid-project, engineers get a raise (docs/finance-rules.md R15): work before it keeps the old rate. */
const RAISE = { from: '2026-10-15', role: 'Engineer', rate: 105 };
/** And one engineer is promoted: costed as a senior from that day on. */
const PROMOTION = { member: 'Bob Smith', role: 'Senior Engineer', from: '2026-10-26' };

const MEMBERS: [string, string | null][] = [
  ['Alice Johnson', 'Engineer'],
  ['Bob Smith', 'Engineer'],
  ['Carla Gomez', 'Designer'],
  ['Deepak Rao', 'Project Manager'],
  ['Eva Müller', 'QA Analyst'],
  ['Farid Haddad', 'Engineer'],
  ['Grace Lee', 'Intern'],
  ['Henry Ito', null], // in the project without a job role: "Unassigned"
];

type DemoTask = {
  name: string;
  hours: number;
  assignees: string[];
  fixed?: number;
  billable?: boolean;
  status: string;
  priority: string;
  phase: string;
  /** People who log time without being assigned. */
  helpers?: string[];
  children?: DemoTask[];
};

const PLAN: DemoTask[] = [
  { name: 'Discovery workshop', hours: 16, assignees: ['Deepak Rao', 'Carla Gomez'], status: 'done', priority: 'high', phase: 'Discovery',
    children: [
      { name: 'Stakeholder interviews', hours: 10, assignees: ['Deepak Rao'], status: 'done', priority: 'high', phase: 'Discovery' },
      { name: 'Competitor review', hours: 6, assignees: ['Carla Gomez', 'Grace Lee'], status: 'done', priority: 'low', phase: 'Discovery' },
    ] },
  { name: 'Design system', hours: 40, assignees: ['Carla Gomez'], fixed: 1200, status: 'in progress', priority: 'high', phase: 'Design',
    children: [
      { name: 'Typography and colour', hours: 12, assignees: ['Carla Gomez'], status: 'done', priority: 'medium', phase: 'Design' },
      { name: 'Component library', hours: 30, assignees: ['Carla Gomez', 'Alice Johnson'], status: 'in progress', priority: 'high', phase: 'Design',
        children: [
          { name: 'Buttons and forms', hours: 10, assignees: ['Alice Johnson'], status: 'done', priority: 'medium', phase: 'Design' },
          { name: 'Navigation patterns', hours: 8, assignees: [], status: 'todo', priority: 'medium', phase: 'Design', helpers: ['Carla Gomez'] },
        ] },
      { name: 'Icon licence', hours: 0, assignees: [], fixed: 450, billable: false, status: 'done', priority: 'low', phase: 'Design' },
    ] },
  { name: 'Backend API', hours: 120, assignees: ['Alice Johnson', 'Bob Smith', 'Farid Haddad'], status: 'in progress', priority: 'urgent', phase: 'Build',
    children: [
      { name: 'Authentication', hours: 24, assignees: ['Bob Smith'], status: 'done', priority: 'urgent', phase: 'Build', helpers: ['Alice Johnson'] },
      { name: 'Product catalogue', hours: 32, assignees: ['Farid Haddad', 'Alice Johnson'], status: 'in progress', priority: 'high', phase: 'Build' },
      { name: 'Checkout', hours: 40, assignees: ['Bob Smith', 'Farid Haddad', 'Alice Johnson'], status: 'todo', priority: 'urgent', phase: 'Build',
        children: [
          { name: 'Payment provider integration', hours: 16, assignees: ['Bob Smith'], fixed: 300, status: 'todo', priority: 'urgent', phase: 'Build' },
          { name: 'Tax calculation', hours: 10, assignees: ['Farid Haddad'], status: 'todo', priority: 'high', phase: 'Build' },
        ] },
    ] },
  { name: 'Frontend', hours: 100, assignees: ['Alice Johnson', 'Farid Haddad'], status: 'in progress', priority: 'high', phase: 'Build',
    children: [
      { name: 'Home page', hours: 20, assignees: ['Alice Johnson'], status: 'done', priority: 'high', phase: 'Build' },
      { name: 'Product pages', hours: 30, assignees: ['Farid Haddad', 'Grace Lee'], status: 'in progress', priority: 'medium', phase: 'Build' },
      { name: 'Accessibility fixes', hours: 10, assignees: [], status: 'todo', priority: 'medium', phase: 'Build', helpers: ['Henry Ito'] },
    ] },
  { name: 'Quality assurance', hours: 60, assignees: ['Eva Müller'], status: 'todo', priority: 'high', phase: 'Test',
    children: [
      { name: 'Test plan', hours: 8, assignees: ['Eva Müller'], status: 'done', priority: 'medium', phase: 'Test' },
      { name: 'Regression suite', hours: 25, assignees: ['Eva Müller', 'Bob Smith'], status: 'in progress', priority: 'high', phase: 'Test' },
      { name: 'Load testing', hours: 12, assignees: ['Farid Haddad'], fixed: 800, status: 'todo', priority: 'medium', phase: 'Test' },
    ] },
  { name: 'Hosting and launch', hours: 10, assignees: ['Deepak Rao'], fixed: 2500, status: 'todo', priority: 'medium', phase: 'Launch',
    children: [
      { name: 'Domain and certificates', hours: 0, assignees: [], fixed: 120, billable: false, status: 'todo', priority: 'low', phase: 'Launch' },
      { name: 'Launch checklist', hours: 4, assignees: ['Deepak Rao', 'Eva Müller', 'Henry Ito'], status: 'todo', priority: 'medium', phase: 'Launch' },
    ] },
  { name: 'Project management', hours: 50, assignees: ['Deepak Rao'], billable: false, status: 'in progress', priority: 'medium', phase: 'Management' },
  { name: 'Internal retrospective', hours: 5, assignees: [], billable: false, status: 'todo', priority: 'low', phase: 'Management', helpers: ['Deepak Rao', 'Bob Smith'] },
];

const DEMO_PROJECT = 'Website Relaunch';
const DEMO_PARENT_TASK = 'Backend API';
const DEMO_LEAF_TASK = 'Authentication';

/** Seeds a realistic demo project when the default team has none; all or nothing. */
export async function seedDemoIfEmpty(db: Knex): Promise<DemoIds | undefined> {
  const existing = await db('projects').where({ team_id: DEFAULT_TEAM_ID }).first('id');
  if (existing) return undefined;
  return db.transaction((trx) => seedDemo(trx));
}

/** The demo's ids on a later start, for the printed examples, while its tasks still exist. */
export async function findDemoIds(db: Knex): Promise<DemoIds | undefined> {
  const project = await db('projects').where({ team_id: DEFAULT_TEAM_ID, name: DEMO_PROJECT }).first('id');
  if (!project) return undefined;
  const tasks: { id: string; name: string }[] = await db('tasks')
    .where({ team_id: DEFAULT_TEAM_ID, project_id: project.id })
    .whereIn('name', [DEMO_PARENT_TASK, DEMO_LEAF_TASK])
    .whereNull('archived_at')
    .select('id', 'name');
  const parent = tasks.find((t) => t.name === DEMO_PARENT_TASK);
  const leaf = tasks.find((t) => t.name === DEMO_LEAF_TASK);
  return parent && leaf ? { projectId: project.id, parentTaskId: parent.id, leafTaskId: leaf.id } : undefined;
}

async function seedDemo(trx: Knex): Promise<DemoIds> {
  const teamId = DEFAULT_TEAM_ID;
  const next = random(20261122);
  const roleIds = new Map<string, string>();
  for (const [name] of ROLES) roleIds.set(name, (await createJobRole(trx, teamId, name)).id);
  const project = await createProject(trx, teamId, { name: DEMO_PROJECT, currency: 'USD', budget: 60000 });
  await replaceRateCard(trx, SEED_ACTOR, project.id, {
    roles: ROLES.flatMap(([name, rate]) => (rate === null ? [] : [{ job_role_id: roleIds.get(name) as string, hourly_rate: rate }])),
    effective_from: '1970-01-01',
  });
  await replaceRateCard(trx, SEED_ACTOR, project.id, {
    roles: ROLES.flatMap(([name, rate]) =>
      rate === null ? [] : [{ job_role_id: roleIds.get(name) as string, hourly_rate: name === RAISE.role ? RAISE.rate : rate }],
    ),
    effective_from: RAISE.from,
  });
  const memberIds = new Map<string, string>();
  for (const [name, role] of MEMBERS) {
    const email = `${name.split(' ')[0]?.toLowerCase()}@example.com`;
    const member = await createTeamMember(trx, teamId, { name, email, avatar_url: role ? `https://avatars.example.com/${email}.png` : null });
    memberIds.set(name, member.id);
    await setProjectMember(trx, SEED_ACTOR, project.id, member.id, { job_role_id: role ? (roleIds.get(role) as string) : null });
  }
  const idOf = (name: string) => memberIds.get(name) as string;
  await setProjectMember(trx, SEED_ACTOR, project.id, idOf(PROMOTION.member), {
    job_role_id: roleIds.get(PROMOTION.role) as string,
    effective_from: PROMOTION.from,
  });

  const created: { id: string; name: string }[] = [];
  const start = Date.UTC(2026, 8, 7); // logs spread over the ten weeks from 7 September 2026
  const addTasks = async (tasks: DemoTask[], parentId: string | null) => {
    for (const plan of tasks) {
      const task = await createTask(trx, SEED_ACTOR, project.id, {
        name: plan.name,
        estimated_hours: plan.hours,
        billable: plan.billable ?? true,
        fixed_cost: plan.fixed ?? 0,
        parent_task_id: parentId,
        assignee_ids: plan.assignees.map(idOf),
        status: plan.status,
        priority: plan.priority,
        phase: plan.phase,
      });
      created.push({ id: task.id, name: plan.name });
      const share = plan.hours / Math.max(plan.assignees.length, 1);
      const effort = plan.status === 'done' ? 1.1 : plan.status === 'in progress' ? 0.6 : 0.1;
      for (const person of [...plan.assignees, ...(plan.helpers ?? [])]) {
        const isHelper = !plan.assignees.includes(person);
        const logs = isHelper ? 1 : 1 + Math.floor(next() * 4);
        for (let i = 0; i < logs; i++) {
          const hours = isHelper ? 1.5 : (share * effort) / logs;
          const seconds = Math.max(900, Math.round((hours * 3600 * (0.8 + next() * 0.4)) / 60) * 60);
          const loggedAt = new Date(start + Math.floor(next() * 70) * 86_400_000 + 9 * 3_600_000).toISOString();
          await createTimeLog(trx, teamId, task.id, { team_member_id: idOf(person), seconds, logged_at: loggedAt, note: `Work on ${plan.name}` });
        }
      }
      if (plan.children) await addTasks(plan.children, task.id);
    }
  };
  await addTasks(PLAN, null);
  const parent = created.find((t) => t.name === DEMO_PARENT_TASK);
  const leaf = created.find((t) => t.name === DEMO_LEAF_TASK);
  return { projectId: project.id, parentTaskId: parent?.id as string, leafTaskId: leaf?.id as string };
}
