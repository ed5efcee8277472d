import express, { Express } from 'express';
import helmet from 'helmet';
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import pinoHttp from 'pino-http';
import { TokenCache, createTokenCache } from './auth/token-cache';
import { sessionRouter } from './auth/session.router';
import { tokensRouter } from './auth/tokens.router';
import { financeRouter } from './finance/finance.router';
import { cancelQueriesWhenClientLeaves } from './db/request-queries';
import { createListCache } from './finance/list-cache';
import { createLimiter } from './limiter';
import { requireToken, roleByMethod } from './http/auth';
import { corsFor } from './http/cors';
import { errorHandler, requireJsonBody, routeNotFound } from './http/error-handler';
import { createMetrics } from './http/metrics';
import { admissionInTurns } from './http/admission';
import { rateLimit } from './http/rate-limit';
import { TeamShare, teamShare } from './http/team-share';
import { sendJson } from './http/respond';
import type { Activity } from './http/activity';
import { jobRolesRouter } from './job-roles/job-roles.router';
import type { Logger } from './logger';
import { openApiRouter } from './openapi/openapi.router';
import { projectsRouter } from './projects/projects.router';
import { tasksRouter } from './tasks/tasks.router';
import { teamMembersRouter } from './team-members/team-members.router';
import { timeLogsRouter } from './time-logs/time-logs.router';
import { screenRouter } from './web/static';

export type AppDeps = {
  db: Knex;
  logger: Logger;
  rateLimitPerMinute?: number;
  /** How long an authenticated token is trusted without asking the database again; 0 asks every time. */
  tokenCacheSeconds?: number;
  /** The cache itself, when the caller keeps it in step with other instances (server.ts); else one of the app's own. */
  tokenCache?: TokenCache;
  /** Memory for rendered project lists (finance/list-cache.ts), in MB; 0 renders every list. */
  listCacheMb?: number;
  /** How many project lists are read and rendered at once; the others wait their turn. */
  listRenders?: number;
  /**
   * When a breakdown finds its project's stored figures out of date, it answers from the calculator
   * and brings the project current in the background (server.ts: on), so breakdowns do not keep
   * computing on the fly until a list is read. Off by default: tests that inspect stored rows turn it on.
   */
  refreshBehindBreakdowns?: boolean;
  /** Clients reach the service over HTTPS: send HSTS and upgrade-insecure-requests (never over plain HTTP). */
  servedOverHttps?: boolean;
  /** At most this many API requests of one team at once, the others waiting in memory (http/team-share.ts); unset: no limit. */
  teamShare?: TeamShare;
  /** False while start-up is still running (server.ts): /readyz answers 503 until it is done. */
  isStarted?: () => boolean;
  /** Origins allowed to call /api from a browser (CORS_ORIGINS); none by default. */
  corsOrigins?: readonly string[];
  /** The built finance screen (dist/web), served at GET /; without one, GET / leads to /docs. */
  webDir?: string;
  /** Counts the API requests in flight, for background work that waits for quiet moments (server.ts). */
  activity?: Activity;
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/*
 * helmet's defaults assume HTTPS: over plain HTTP, `upgrade-insecure-requests` makes a browser fetch
 * every asset of /docs over https (a blank page when the service is reached by a host name or IP), and
 * HSTS pins the host to https. Both are sent only when the service is known to be served over HTTPS.
 */
function securityHeaders(servedOverHttps: boolean): Parameters<typeof helmet>[0] {
  if (servedOverHttps) return {};
  return { strictTransportSecurity: false, contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };
}

/** A database that does not answer within 2 s is not ready: /readyz says so instead of hanging. */
const READINESS_LIMIT_MS = 2_000;
function withinReadinessLimit<T>(query: PromiseLike<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the database did not answer in time')), READINESS_LIMIT_MS);
  });
  return Promise.race([Promise.resolve(query), limit]).finally(() => clearTimeout(timer));
}

/** Builds the Express app (no listen), so tests drive it in-process. */
export function createApp(deps: AppDeps): Express {
  const { db, logger, rateLimitPerMinute = 0, tokenCacheSeconds = 0, listCacheMb = 0, listRenders = 3 } = deps;
  const { servedOverHttps = false, isStarted = () => true, corsOrigins = [] } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  const metrics = createMetrics(db);
  app.use(metrics.observe);
  // Requests started in turns of the event loop, clients taking turns, once many arrive at once
  // (http/admission.ts), before the headers and the log line each request costs; probes never wait.
  app.use(admissionInTurns());
  app.use(helmet(securityHeaders(servedOverHttps)));
  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // Only the method and path: headers (Authorization) and query strings stay out of the logs.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get('/readyz', async (_req, res) => {
    if (!isStarted()) return sendJson(res, 503, { status: 'starting' });
    try {
      await withinReadinessLimit(db.raw('select 1'));
      sendJson(res, 200, { status: 'ready' });
    } catch {
      sendJson(res, 503, { status: 'unavailable' });
    }
  });

  const api = express.Router();
  if (deps.activity) api.use(deps.activity.track);
  if (corsOrigins.length > 0) api.use(corsFor(corsOrigins));
  if (rateLimitPerMinute > 0) api.use(rateLimit(rateLimitPerMinute));
  const tokenCache = deps.tokenCache ?? createTokenCache(tokenCacheSeconds * 1000);
  api.use(requireToken(db, tokenCache), roleByMethod);
  if (deps.teamShare) api.use(teamShare(deps.teamShare));
  api.use(requireJsonBody, express.json({ limit: '100kb', strict: true, type: ['application/json', 'application/*+json'] }));
  api.use(cancelQueriesWhenClientLeaves(db));
  api.use(financeRouter(db, createListCache(listCacheMb * 1024 * 1024), createLimiter(listRenders), deps.refreshBehindBreakdowns ? logger : undefined));
  api.use(jobRolesRouter(db));
  api.use(teamMembersRouter(db));
  api.use(projectsRouter(db));
  api.use(tasksRouter(db));
  api.use(timeLogsRouter(db));
  api.use(sessionRouter(db));
  api.use(tokensRouter(db, tokenCache));
  app.use('/api', api);
  // After /api, whose requests (the many) then never walk these routers' routes.
  app.use(openApiRouter());
  app.use(screenRouter(deps.webDir, servedOverHttps));

  app.use(routeNotFound);
  app.use(errorHandler(logger));
  return app;
}
