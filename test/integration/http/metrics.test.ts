import request from 'supertest';
import { Harness, startHarness } from '../../support/harness';
import { createProject, createTask } from '../../support/fixtures';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('exposes request counts and latencies per route template and status, pool use and process metrics', async () => {
  const project = await createProject(h.api);
  const task = await createTask(h.api, project.id);
  await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
  await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
  await h.api.get('/api/project-finance/task/3f1c1b8e-1111-4222-8333-944455556666/breakdown').expect(404);
  await h.api.as(undefined).get('/api/job-roles').expect(401);

  const res = await request(h.app).get('/metrics').expect(200).expect('Content-Type', /text\/plain/);
  const text = res.text;
  expect(text).toContain('http_requests_total{method="GET",route="/api/project-finance/task/:id/breakdown",status="200"} 2');
  expect(text).toContain('http_requests_total{method="GET",route="/api/project-finance/task/:id/breakdown",status="404"} 1');
  expect(text).toContain('http_requests_total{method="POST",route="/api/projects/:id/tasks",status="201"} 1');
  expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="401"} 1');
  expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/project-finance\/task\/:id\/breakdown",status="200"\} \d+/);
  expect(text).toMatch(/db_pool_connections\{state="max"\} [1-9]\d*/);
  expect(text).toContain('process_cpu_user_seconds_total');
  // The event loop's delay (perf_hooks.monitorEventLoopDelay), worst and p99 since the last scrape.
  expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
  expect(text).toMatch(/^nodejs_eventloop_lag_max_seconds \d/m);
  // Ids never become label values.
  expect(text).not.toContain(task.id);
});
