import request from 'supertest';
import { Harness, startHarness } from '../../support/harness';
import { checkResponseAgainstDocument } from '../../support/openapi-responses';

type OperationDoc = {
  parameters?: { example?: unknown }[];
  requestBody?: { content?: Record<string, { example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { example?: unknown }> }>;
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('OpenAPI document', () => {
  // Its validity against the OpenAPI 3.1 schema is checked by `npm run openapi:check` (run by CI).
  it('is served without a token', async () => {
    const res = await request(h.app).get('/openapi.json').expect(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'Project finance service' } });
  });

  it('documents every route of the contract', async () => {
    const doc = (await request(h.app).get('/openapi.json').expect(200)).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /api/project-finance/task/{id}/breakdown',
        'GET /api/project-finance/project/{project_id}/tasks',
        'GET /api/project-finance/project/{project_id}/export',
        'GET /metrics',
        'PUT /api/project-finance/task/{task_id}/fixed-cost',
        'GET /api/project-finance/task/{task_id}/fixed-cost/history',
        'POST /api/job-roles', 'GET /api/job-roles',
        'POST /api/team-members', 'GET /api/team-members/{id}', 'PATCH /api/team-members/{id}',
        'POST /api/projects', 'GET /api/projects/{id}', 'PATCH /api/projects/{id}',
        'PUT /api/projects/{id}/rate-card', 'GET /api/projects/{id}/rate-card',
        'PUT /api/projects/{id}/members/{team_member_id}', 'DELETE /api/projects/{id}/members/{team_member_id}',
        'POST /api/projects/{id}/tasks', 'GET /api/tasks/{id}', 'PATCH /api/tasks/{id}', 'DELETE /api/tasks/{id}',
        'POST /api/tasks/{id}/time-logs', 'GET /api/tasks/{id}/time-logs', 'DELETE /api/time-logs/{id}',
        'POST /api/tokens', 'GET /api/tokens', 'DELETE /api/tokens/{id}', 'POST /api/teams',
        'GET /healthz', 'GET /readyz',
      ]),
    );
    // The fixed-cost body is the validating schema itself: a number, at most 1e9, no other fields.
    const body = doc.paths['/api/project-finance/task/{task_id}/fixed-cost'].put.requestBody.content['application/json'].schema;
    expect(body).toMatchObject({ type: 'object', required: ['fixed_cost'], additionalProperties: false, properties: { fixed_cost: { type: 'number', minimum: 0, maximum: 1000000000 } } });
  });

  it('has examples that match their own schemas, and one per operation', async () => {
    const doc = (await request(h.app).get('/openapi.json').expect(200)).body;
    let responseExamples = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, OperationDoc>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const hasExample =
          op.parameters?.some((p) => p.example !== undefined) ||
          op.requestBody?.content?.['application/json']?.example !== undefined ||
          Object.values(op.responses ?? {}).some((r) => Object.values(r.content ?? {}).some((c) => c.example !== undefined));
        if (!path.startsWith('/api/')) continue;
        expect({ operation: `${method} ${path}`, hasExample }).toEqual({ operation: `${method} ${path}`, hasExample: true });
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const example = response.content?.['application/json']?.example;
          if (example === undefined) continue;
          responseExamples++;
          checkResponseAgainstDocument(method.toUpperCase(), path.replace(/\{\w+\}/g, '3f1c1b8e-1111-4222-8333-944455556666'), Number(status), 'application/json', example);
        }
      }
    }
    expect(responseExamples).toBeGreaterThanOrEqual(4);
  });

  it('serves the interactive reference at /docs', async () => {
    const page = await request(h.app).get('/docs').expect(200);
    expect(page.text).toContain('swagger-ui');
    await request(h.app).get('/docs/assets/swagger-ui-bundle.js').expect(200).expect('Content-Type', /javascript/);
    await request(h.app).get('/docs/init.js').expect(200);
  });
});
