import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId } from '../http/validate';
import { createTeamMemberBody, updateTeamMemberBody } from './team-members.schemas';
import { TEAM_MEMBERS_ORDER } from './team-members.repository';
import * as service from './team-members.service';

export function teamMembersRouter(db: Knex): Router {
  const router = Router();
  router.post('/team-members', async (req, res) => {
    const body = parseBody(createTeamMemberBody, req.body);
    sendSuccess(res, await service.createTeamMember(db, actorOf(req).teamId, body), 201);
  });
  router.get('/team-members', async (req, res) => {
    sendPage(req, res, await service.listTeamMembers(db, actorOf(req).teamId, pageOf(req, TEAM_MEMBERS_ORDER)));
  });
  router.get('/team-members/:id', async (req, res) => {
    sendSuccess(res, await service.getTeamMember(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  router.patch('/team-members/:id', async (req, res) => {
    const id = parseId(req.params.id);
    const body = parseBody(updateTeamMemberBody, req.body);
    sendSuccess(res, await service.updateTeamMember(db, actorOf(req).teamId, id, body));
  });
  return router;
}
