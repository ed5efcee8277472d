import { todayOf } from '../../clock';
import { CALCULATOR_VERSION } from '../rules/calculator';

/*
 * Part of the freshness module (freshness.ts, which re-exports these): the SQL of the stamp check that
 * every read of stored figures embeds, so the check and the figures come from one snapshot. Only
 * freshness.ts writes marks and stamps; this file only reads them.
 */

/**
 * SQL: whether the stamp of project `alias`'s stored figures (a projects row) is of the project's
 * revision, today in its time zone by the service clock's instant :now, and :calculatorVersion; the
 * marks aside (stampCurrentOf).
 */
export const stampOf = (alias: string) => `exists (
       select 1 from project_figures cf
       where cf.team_id = ${alias}.team_id and cf.project_id = ${alias}.id and cf.revision = ${alias}.revision
         and cf.day = ${todayOf(alias)} and cf.calculator_version = cast(:calculatorVersion as integer))`;

/**
 * SQL: whether the stored figures of project `alias` (a projects row) are current: their stamp is of
 * the project's revision, today in its time zone by the service clock's instant :now, and
 * :calculatorVersion, and no mark is left (of any task, or with `taskId` of that task only: a task's
 * own stored figures depend on nothing else a mark without a revision bump records).
 */
export const stampCurrentOf = (alias: string, taskId?: string) => `(${stampOf(alias)}
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = ${alias}.team_id and sm.project_id = ${alias}.id${taskId ? ` and sm.task_id = ${taskId}` : ''})${
       taskId
         ? ''
         : `
     and not exists (select 1 from stale_inputs si where si.team_id = ${alias}.team_id and si.project_id = ${alias}.id)`
     })`;

/** SQL: whether the stamp of :projectId's stored figures is current (see stampCurrentOf). */
export const FIGURES_CURRENT = `exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and ${stampCurrentOf('cp')})`;

/** SQL: whether a stored labor row's (l) breakdown parts are of its project's (pf: project_figures) parts version. */
export const PARTS_CURRENT = 'l.parts_version = coalesce(pf.parts_version, 0)';

/** SQL: whether a stored labor row (l) holds no breakdown parts of its project's (pf) parts version: what the filler computes. */
export const PARTS_MISSING = `(l.members_json is null or not ${PARTS_CURRENT})`;

/** SQL: the version of project `alias`'s stored figures (a projects row) the list cache keys on: its revision and the stamp's generation. */
export const figuresVersionOf = (alias: string) =>
  `${alias}.revision::text || '.' || (select f.generation from project_figures f where f.team_id = ${alias}.team_id and f.project_id = ${alias}.id)::text`;

/** The bindings FIGURES_CURRENT needs besides :teamId and :projectId. */
export const stampBindings = (now: string) => ({ now, calculatorVersion: CALCULATOR_VERSION });

