import express, { Express } from 'express';
import helmet from 'helmet';
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import pinoHttp from 'pino-http';
import { TokenCache, createTokenCache } from './auth/token-cache';
import { TokenUsage, createTokenUsage } from './auth/token-usage';
import { hashSecret } from './auth/tokens.service';
import { sessionRouter } from './auth/session.router';
import { tokensRouter } from './auth/tokens.router';
import { financeRouter } from './finance/http/finance.router';
import { cancelQueriesWhenClientLeaves } from './db/request-queries';
import { createListCache } from './finance/read-model/list-cache';
import { createAnswerCache } from './finance/read-model/answer-cache';
import { createLimiter, createTeamLimiter } from './limiter';
import { requireToken, roleByMethod } from './http/auth';
import { corsFor } from './http/cors';
import { jsonBody } from './http/body';
import { errorHandler, routeNotFound } from './http/error-handler';
import { createMetrics, requireMetricsToken } from './http/metrics';
import { admissionInTurns, clientByCheckedToken } from './http/admission';
import { eventsRouter } from './events/events.router';
import { budgetsRouter } from './budgets/budgets.router';
import { rateLimit } from './http/rate-limit';
import { TeamShare, teamShare } from './http/team-share';
import { cutStalledClients } from './http/stalled-clients';
import { sendJson } from './http/respond';
import { TURN_MS } from './turns';
import type { Activity } from './http/activity';
import { jobRolesRouter } from './job-roles/job-roles.router';
import type { Logger } from './logger';
import { openApiRouter } from './openapi/openapi.router';
import { projectsRouter } from './projects/projects.router';
import { tasksRouter } from './tasks/tasks.router';
import { teamMembersRouter } from './team-members/team-members.router';
import { timeLogsRouter } from './time-logs/time-logs.router';
import { screenRouter } from './web/static';
import { webhooksRouter } from './webhooks/webhooks.router';
import { reportSettleFailures } from './finance/read-model/budget-watch';

export type AppDeps = {
  db: Knex;
  logger: Logger;
  rateLimitPerMinute?: number;
  /** How long an authenticated token is trusted without asking the database again; 0 asks every time. */
  tokenCacheSeconds?: number;
  /** The cache itself, when the caller keeps it in step with other instances (server.ts); else one of the app's own. */
  tokenCache?: TokenCache;
  /** Memory for rendered project lists (finance/read-model/list-cache.ts), in MB; 0 renders every list. */
  listCacheMb?: number;
  /** Memory for encoded breakdown answers (finance/read-model/answer-cache.ts), in MB; 0 reads every answer's parts. */
  breakdownCacheMb?: number;
  /** How many project lists are read and rendered at once; the others wait their turn. */
  listRenders?: number;
  /** Project lists (not cached), exports and ranged or subtree breakdowns of one team at once, and how many more may wait (default 5 and 20). */
  teamRenders?: { perTeam: number; queuePerTeam: number };
  /** A client that takes no byte of an answer for this long is cut off (http/stalled-clients.ts); 0: never. Default 30 s. */
  clientStallMs?: number;
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
  /** Records each token's last use, to the minute (auth/token-usage.ts); one of the app's own by default. */
  tokenUsage?: TokenUsage;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>` (METRICS_TOKEN). */
  metricsToken?: string;
  /** Express's `trust proxy` (TRUST_PROXY): which proxies' X-Forwarded-For tells the client's address. */
  trustProxy?: boolean | number | string;
  /** Webhooks may point at loopback, private and link-local addresses (WEBHOOK_ALLOW_PRIVATE); refused by default. */
  webhookAllowPrivate?: boolean;
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
  const { db, logger, rateLimitPerMinute = 0, tokenCacheSeconds = 0, listCacheMb = 0, breakdownCacheMb = 0, listRenders = 3 } = deps;
  const { servedOverHttps = false, isStarted = () => true, corsOrigins = [] } = deps;
  const { teamRenders = { perTeam: 5, queuePerTeam: 20 }, clientStallMs = 30_000 } = deps;
  // A write's budget settle runs after its commit and never fails the write: a failure is logged.
  reportSettleFailures(db, logger);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The client's address (rate limits, the admission's turns) is the socket's unless a proxy is trusted.
  app.set('trust proxy', deps.trustProxy ?? false);
  const metrics = createMetrics(db);
  app.use(metrics.observe);
  const tokenCache = deps.tokenCache ?? createTokenCache(tokenCacheSeconds * 1000);
  if (clientStallMs > 0) app.use(cutStalledClients(clientStallMs));
  // Requests started in turns of the event loop, clients taking turns, once many arrive at once
  // (http/admission.ts), before the headers and the log line each request costs; probes never wait.
  // Only a token this instance has checked (in its cache) makes its team a client of its own.
  const teamOfCheckedToken = (secret: string) => tokenCache.get(hashSecret(secret).toString('hex'))?.teamId;
  app.use(admissionInTurns(TURN_MS, undefined, clientByCheckedToken(teamOfCheckedToken)));
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
  app.get('/metrics', requireMetricsToken(deps.metricsToken), async (_req, res) => {
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
  // Answers of the API are the caller's own and change with every write: never kept by a shared
  // cache, revalidated by the browser. Those carrying a secret say no-store (auth/tokens.router.ts).
  api.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'private, no-cache');
    next();
  });
  if (deps.activity) api.use(deps.activity.track);
  if (corsOrigins.length > 0) api.use(corsFor(corsOrigins));
  if (rateLimitPerMinute > 0) api.use(rateLimit(rateLimitPerMinute));
  api.use(requireToken(db, tokenCache, deps.tokenUsage ?? createTokenUsage(db, logger)), roleByMethod);
  if (deps.teamShare) api.use(teamShare(deps.teamShare));
  api.use(jsonBody());
  api.use(cancelQueriesWhenClientLeaves(db));
  // One team never holds every render slot (when there are two or more): another team always finds one.
  const renders = { instance: createLimiter(listRenders, Math.max(1, listRenders - 1)), perTeam: createTeamLimiter(teamRenders) };
  api.use(
    financeRouter(
      db,
      { lists: createListCache(listCacheMb * 1024 * 1024), answers: createAnswerCache(breakdownCacheMb * 1024 * 1024) },
      renders,
      deps.refreshBehindBreakdowns ? logger : undefined,
    ),
  );
  api.use(jobRolesRouter(db));
  api.use(teamMembersRouter(db));
  api.use(projectsRouter(db));
  api.use(budgetsRouter(db));
  api.use(tasksRouter(db));
  api.use(timeLogsRouter(db));
  api.use(sessionRouter(db));
  api.use(tokensRouter(db, tokenCache));
  api.use(eventsRouter(db));
  // Unset (an app built in-process, e.g. by a test): as WEBHOOK_ALLOW_PRIVATE says, refused by default.
  api.use(webhooksRouter(db, { allowPrivate: deps.webhookAllowPrivate ?? process.env.WEBHOOK_ALLOW_PRIVATE === 'true' }));
  app.use('/api', api);
  // After /api, whose requests (the many) then never walk these routers' routes.
  app.use(openApiRouter());
  app.use(screenRouter(deps.webDir, servedOverHttps));

  app.use(routeNotFound);
  app.use(errorHandler(logger));
  return app;
}
