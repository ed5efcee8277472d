import { Router } from 'express';
import type { Knex } from 'knex';
import { nowIso, todayIn } from '../../clock';
import { notFound } from '../../http/errors';
import { findListedProject } from '../read-model/list.sql';
import { bringCurrent } from '../read-model/freshness';
import { wakeDrainer } from '../read-model/drainer';
import { outsideRequests } from '../../db/request-queries';
import type { Logger } from '../../logger';
import { actorOf } from '../../http/auth';
import { pageOf, sendPage } from '../../http/paging';
import { jsonBytes, sendJsonBytes, sendSuccess, successEnvelope } from '../../http/respond';
import type { Renders } from '../../limiter';
import { inTeamTurn } from '../../http/team-turn';
import type { ListCache } from '../read-model/list-cache';
import type { AnswerCache } from '../read-model/answer-cache';
import { parseBody, parseId, parseQuery } from '../../http/validate';
import { toCostLinesCsv, toCsv, toXlsx } from './finance.export';
import { breakdownQuery, exportQuery, fixedCostBody, projectTasksQuery } from './finance.schemas';
import * as service from '../finance.service';
import { FIXED_COST_HISTORY_ORDER } from '../../tasks/tasks.repository';

/**
 * `caches`: rendered lists (list-cache.ts) and encoded breakdown answers (answer-cache.ts), each
 * served again only while what it was rendered from is unchanged (with no budget, each keeps nothing). `renders` bounds how many project lists and exports are read and rendered at once in the instance
 * (each can be megabytes; teams take turns for them) and how many of one team's run or wait
 * (limiter.ts: one team's queue never delays another's; past it, 429). With
 * `refreshBehind`, a breakdown that found its project's stored figures out of date wakes the
 * instance's drainer (read-model/drainer.ts) after answering, or without one brings them current in
 * the background (failures logged there).
 */
export function financeRouter(db: Knex, caches: { lists: ListCache; answers: AnswerCache }, renders: Renders, refreshBehind?: Logger): Router {
  const router = Router();
  const { lists: listCache, answers } = caches;
  router.get('/project-finance/task/:id/breakdown', async (req, res) => {
    const id = parseId(req.params.id);
    const query = parseQuery(breakdownQuery, req.query);
    const teamId = actorOf(req).teamId;
    const breakdown = async () => {
      const { financeVersion, answer, staleProject } = await service.getBreakdown(db, teamId, id, query.include_subtasks, query, answers);
      res.setHeader('ETag', service.etagOf(financeVersion));
      sendJsonBytes(res, 200, answer);
      // Behind the answer, for no request: the drainer's next batch (drainer.ts), or else a refresh.
      if (refreshBehind && staleProject && !wakeDrainer(db, teamId, staleProject)) {
        outsideRequests(() => bringCurrent(db, teamId, staleProject, nowIso())).catch((err: unknown) =>
          refreshBehind.warn({ err, projectId: staleProject }, 'background refresh failed'),
        );
      }
    };
    // A subtree or a date range is computed from the logs, like a list: it takes one of the team's turns.
    const heavy = query.include_subtasks || query.from !== undefined || query.to !== undefined;
    await (heavy ? inTeamTurn(renders.perTeam, teamId, res, breakdown) : breakdown());
  });
  router.get('/project-finance/project/:project_id/tasks', async (req, res) => {
    const projectId = parseId(req.params.project_id, 'project_id');
    const query = parseQuery(projectTasksQuery, req.query);
    const teamId = actorOf(req).teamId;
    const project = await findListedProject(db, teamId, projectId, nowIso());
    if (!project) throw notFound('PROJECT_NOT_FOUND', 'Project');
    // Figures depend on the day (rates and roles in force), and a list read at one revision on one day stays right.
    const key = [
      teamId,
      project.id,
      todayIn(project.time_zone),
      query.billable_filter,
      query.parent_task_id?.toLowerCase() ?? '',
      query.group_by ?? '',
      query.from ?? '',
      query.to ?? '',
    ].join('|');
    const version = project.figures_version;
    const cached = version === null ? undefined : listCache.get(key, version);
    if (cached) return sendJsonBytes(res, 200, cached);
    // Every list not in the cache (ranged ones included, whatever their `to`) takes one of the team's turns.
    await inTeamTurn(renders.perTeam, teamId, res, async () => {
      const body = await renders.instance.run(async () => {
        // Known out of date (a write since the last refresh): brought current first, rather than read a
        // whole list only to find that out (the list's own read still checks, freshness.ts's readCurrent).
        if (version === null && query.from === undefined && query.to === undefined) await bringCurrent(db, teamId, project.id, nowIso());
        return jsonBytes(successEnvelope(await service.listProjectTasks(db, teamId, project, query)));
      }, teamId);
      // Rendered from figures at least as new as `version`; with none (figures out of date), not kept.
      if (version !== null) listCache.keep(key, version, body);
      sendJsonBytes(res, 200, body);
    });
  });
  router.get('/project-finance/project/:project_id/export', async (req, res) => {
    const projectId = parseId(req.params.project_id, 'project_id');
    const query = parseQuery(exportQuery, req.query);
    const teamId = actorOf(req).teamId;
    // The team's turn lasts until the file is sent (it holds the project's rows); the instance's render
    // slot only while the rows are read: a client that reads slowly holds nothing another team needs.
    await inTeamTurn(renders.perTeam, teamId, res, async () => {
      const file = await renders.instance.run(async () => {
        const tree = await service.projectTaskTree(db, teamId, projectId, query);
        const wantsLines = query.sheet === 'cost_lines';
        const lines = wantsLines ? await service.costLinesOf(db, teamId, tree.project, tree.rows.map(({ row }) => row), query) : undefined;
        return query.format === 'xlsx' ? toXlsx(tree, lines) : lines ? toCostLinesCsv(tree, lines) : toCsv(tree);
      }, teamId);
      res.status(200);
      res.setHeader('Content-Type', file.contentType);
      res.setHeader('Content-Disposition', `attachment; filename="${file.fileName}"`);
      try {
        await file.write(res);
      } catch (err) {
        if (!res.headersSent) throw err;
        // Part of the file is out (or the client left): the response can only be cut short, never turn into JSON.
        res.destroy();
      }
    });
  });
  router.put('/project-finance/task/:task_id/fixed-cost', async (req, res) => {
    const id = parseId(req.params.task_id, 'task_id');
    const body = parseBody(fixedCostBody, req.body);
    const { financeVersion, body: summary } = await service.updateFixedCost(
      db,
      actorOf(req),
      id,
      body.fixed_cost,
      req.headers['if-match'],
    );
    res.setHeader('ETag', service.etagOf(financeVersion));
    sendSuccess(res, summary);
  });
  router.get('/project-finance/task/:task_id/fixed-cost/history', async (req, res) => {
    const id = parseId(req.params.task_id, 'task_id');
    sendPage(req, res, await service.fixedCostHistory(db, actorOf(req).teamId, id, pageOf(req, FIXED_COST_HISTORY_ORDER)));
  });
  return router;
}
