import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { sendSuccess } from '../http/respond';
import { parseId, parseQuery } from '../http/validate';
import { budgetQuery } from './budgets.schemas';
import { getBudget } from './budgets.service';

/** A project's budget status: any role reads it (budgets are set with PATCH /api/projects/:id). */
export function budgetsRouter(db: Knex): Router {
  const router = Router();
  router.get('/projects/:id/budget', async (req, res) => {
    const id = parseId(req.params.id);
    const query = parseQuery(budgetQuery, req.query);
    sendSuccess(res, await getBudget(db, actorOf(req).teamId, id, query.month));
  });
  return router;
}
