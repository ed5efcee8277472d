import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId } from '../http/validate';
import { createTimeLogBody } from './time-logs.schemas';
import { TIME_LOGS_ORDER } from './time-logs.repository';
import * as service from './time-logs.service';

export function timeLogsRouter(db: Knex): Router {
  const router = Router();
  router.post('/tasks/:id/time-logs', async (req, res) => {
    const taskId = parseId(req.params.id);
    const body = parseBody(createTimeLogBody, req.body);
    sendSuccess(res, await service.createTimeLog(db, actorOf(req).teamId, taskId, body), 201);
  });
  router.get('/tasks/:id/time-logs', async (req, res) => {
    const taskId = parseId(req.params.id);
    sendPage(req, res, await service.listTimeLogs(db, actorOf(req).teamId, taskId, pageOf(req, TIME_LOGS_ORDER)));
  });
  router.delete('/time-logs/:id', async (req, res) => {
    sendSuccess(res, await service.deleteTimeLog(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  return router;
}
