import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody } from '../http/validate';
import { createJobRoleBody } from './job-roles.schemas';
import { JOB_ROLES_ORDER } from './job-roles.repository';
import * as service from './job-roles.service';

export function jobRolesRouter(db: Knex): Router {
  const router = Router();
  router.post('/job-roles', async (req, res) => {
    const body = parseBody(createJobRoleBody, req.body);
    sendSuccess(res, await service.createJobRole(db, actorOf(req).teamId, body.name), 201);
  });
  router.get('/job-roles', async (req, res) => {
    sendPage(req, res, await service.listJobRoles(db, actorOf(req).teamId, pageOf(req, JOB_ROLES_ORDER)));
  });
  return router;
}
