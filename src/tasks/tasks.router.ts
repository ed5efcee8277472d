import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId } from '../http/validate';
import { createTaskBody, updateTaskBody } from './tasks.schemas';
import * as service from './tasks.service';

export function tasksRouter(db: Knex): Router {
  const router = Router();
  router.post('/projects/:id/tasks', async (req, res) => {
    const projectId = parseId(req.params.id);
    const body = parseBody(createTaskBody, req.body);
    sendSuccess(res, await service.createTask(db, actorOf(req), projectId, body), 201);
  });
  router.get('/tasks/:id', async (req, res) => {
    sendSuccess(res, await service.getTask(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  router.patch('/tasks/:id', async (req, res) => {
    const id = parseId(req.params.id);
    const body = parseBody(updateTaskBody, req.body);
    sendSuccess(res, await service.updateTask(db, actorOf(req), id, body));
  });
  router.delete('/tasks/:id', async (req, res) => {
    sendSuccess(res, await service.archiveTask(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  return router;
}
