import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf, requireRole } from '../http/auth';
import { linkNext, pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId, parseQuery } from '../http/validate';
import { previewRateCard } from '../finance/preview';
import { createProjectBody, projectMemberBody, rateCardBody, rateCardQuery, updateProjectBody } from './projects.schemas';
import { PROJECTS_ORDER, PROJECT_MEMBERS_ORDER, RATE_HISTORY_ORDER } from './projects.repository';
import * as service from './projects.service';
import { memberRatesBody, rateExplanationQuery } from './member-rates.schemas';
import { explainMemberRates, setMemberRates } from './member-rates.service';

export function projectsRouter(db: Knex): Router {
  const router = Router();
  router.post('/projects', async (req, res) => {
    const body = parseBody(createProjectBody, req.body);
    sendSuccess(res, await service.createProject(db, actorOf(req).teamId, body), 201);
  });
  router.get('/projects', async (req, res) => {
    sendPage(req, res, await service.listProjects(db, actorOf(req).teamId, pageOf(req, PROJECTS_ORDER)));
  });
  router.get('/projects/:id', async (req, res) => {
    sendSuccess(res, service.presentProject(await service.getProject(db, actorOf(req).teamId, parseId(req.params.id))));
  });
  router.patch('/projects/:id', async (req, res) => {
    const id = parseId(req.params.id);
    const body = parseBody(updateProjectBody, req.body);
    sendSuccess(res, await service.updateProject(db, actorOf(req).teamId, id, body));
  });

  router.get('/projects/:id/rate-card', async (req, res) => {
    const id = parseId(req.params.id);
    const query = parseQuery(rateCardQuery, req.query);
    sendSuccess(res, await service.getRateCard(db, actorOf(req).teamId, id, query.date));
  });
  router.get('/projects/:id/rate-card/history', async (req, res) => {
    const id = parseId(req.params.id);
    const { body, next } = await service.rateCardHistory(db, actorOf(req).teamId, id, pageOf(req, RATE_HISTORY_ORDER));
    linkNext(req, res, next);
    sendSuccess(res, body);
  });
  router.put('/projects/:id/rate-card', requireRole('admin'), async (req, res) => {
    const id = parseId(req.params.id);
    const body = parseBody(rateCardBody, req.body);
    sendSuccess(res, await service.replaceRateCard(db, actorOf(req), id, body));
  });
  router.post('/projects/:id/rate-card/preview', requireRole('admin'), async (req, res) => {
    const id = parseId(req.params.id);
    const body = parseBody(rateCardBody, req.body);
    sendSuccess(res, await previewRateCard(db, actorOf(req), id, body));
  });

  router.get('/projects/:id/members', async (req, res) => {
    const id = parseId(req.params.id);
    sendPage(req, res, await service.listProjectMembers(db, actorOf(req).teamId, id, pageOf(req, PROJECT_MEMBERS_ORDER)));
  });
  router.put('/projects/:id/members/:team_member_id', requireRole('admin'), async (req, res) => {
    const id = parseId(req.params.id);
    const memberId = parseId(req.params.team_member_id, 'team_member_id');
    const body = parseBody(projectMemberBody, req.body);
    const { added, member } = await service.setProjectMember(db, actorOf(req), id, memberId, body);
    sendSuccess(res, member, added ? 201 : 200);
  });
  router.get('/projects/:id/members/:team_member_id/rates', async (req, res) => {
    const id = parseId(req.params.id);
    const memberId = parseId(req.params.team_member_id, 'team_member_id');
    const query = parseQuery(rateExplanationQuery, req.query);
    sendSuccess(res, await explainMemberRates(db, actorOf(req).teamId, id, memberId, query.date));
  });
  router.put('/projects/:id/members/:team_member_id/rates', requireRole('admin'), async (req, res) => {
    const id = parseId(req.params.id);
    const memberId = parseId(req.params.team_member_id, 'team_member_id');
    const body = parseBody(memberRatesBody, req.body);
    sendSuccess(res, await setMemberRates(db, actorOf(req), id, memberId, body));
  });
  router.delete('/projects/:id/members/:team_member_id', requireRole('admin'), async (req, res) => {
    const id = parseId(req.params.id);
    const memberId = parseId(req.params.team_member_id, 'team_member_id');
    sendSuccess(res, await service.removeProjectMember(db, actorOf(req).teamId, id, memberId));
  });
  return router;
}
