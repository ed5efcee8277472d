import { Harness, startHarness } from '../../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('GET /api/session', () => {
  it('answers the token\'s team and role, for every role', async () => {
    const team = (await h.db('teams').where({ id: h.teamId }).first('name')) as { name: string };
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const created = await h.api.post('/api/tokens', { name: `screen ${role}`, role }).expect(201);
      const res = await h.api.as(created.body.body.token).get('/api/session').expect(200);
      expect(res.body.body).toEqual({
        team: { id: h.teamId, name: team.name },
        role,
        token: { id: created.body.body.id, name: `screen ${role}` },
      });
    }
  });

  it('answers 401 without a token, and for a revoked one', async () => {
    await h.api.as(undefined).get('/api/session').expect(401);
    const created = await h.api.post('/api/tokens', { name: 'soon revoked', role: 'viewer' }).expect(201);
    await h.api.delete(`/api/tokens/${created.body.body.id}`).expect(200);
    const res = await h.api.as(created.body.body.token).get('/api/session').expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });
});
