import dotenv from 'dotenv';
import net from 'node:net';
import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** The value itself never appears in the message: it usually carries a password. */
function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && (url.hostname !== '' || url.searchParams.has('host'));
  } catch {
    return false;
  }
}

/** `https://app.example.com,http://localhost:5173`: origins exactly as browsers send them (scheme, host, port; no path). */
const originList = z
  .string()
  .transform((value) => value.split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''))
  .refine(
    (origins) => origins.every((origin) => URL.canParse(origin) && new URL(origin).origin === origin),
    'must be comma-separated origins like https://app.example.com (scheme, host and port only, no trailing slash)',
  );

/** A secret the service checks bearer tokens against: long enough that guessing it is hopeless. */
const secret = () => z.string().min(32, 'must be at least 32 characters (for example: openssl rand -hex 32)');

const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];
const isAddressOrSubnet = (entry: string) => {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
};

/**
 * Express's `trust proxy`: `false` (the socket's address is the client), a number of proxies in front
 * (1: the last X-Forwarded-For entry is the client), or the proxies' addresses and subnets
 * (`10.0.0.0/8,loopback`). `true` (believe any X-Forwarded-For) is refused: every client could then
 * pick its own address and escape the rate limit.
 */
const trustProxy = z
  .string()
  .transform((value, ctx): boolean | number | string => {
    const text = value.trim();
    if (text === 'false') return false;
    if (/^\d{1,2}$/.test(text)) return Number(text) === 0 ? false : Number(text);
    const entries = text.split(',').map((entry) => entry.trim());
    if (entries.every((entry) => PROXY_PRESETS.includes(entry) || isAddressOrSubnet(entry))) return entries.join(',');
    ctx.addIssue({
      code: 'custom',
      message: 'must be false, the number of proxies in front (1), or their addresses or subnets (10.0.0.0/8,loopback); true is refused (any client could set its own address)',
    });
    return z.NEVER;
  });

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .refine(isPostgresUrl, 'must be a URL like postgres://user:password@host:5432/database')
    .optional(),
  ADMIN_TOKEN: secret().optional(),
  METRICS_TOKEN: secret().optional(),
  TRUST_PROXY: trustProxy.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SEED_DEMO: booleanFlag.default(true),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(12000),
  TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  LIST_CACHE_MB: z.coerce.number().int().min(0).max(4096).default(32),
  BREAKDOWN_CACHE_MB: z.coerce.number().int().min(0).max(4096).default(16),
  LIST_RENDERS: z.coerce.number().int().min(1).max(64).default(3),
  TEAM_LIST_RENDERS: z.coerce.number().int().min(1).max(64).default(5),
  TEAM_LIST_QUEUE: z.coerce.number().int().min(0).max(10_000).default(20),
  CLIENT_STALL_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  SERVED_OVER_HTTPS: booleanFlag.default(false),
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  TEAM_CONCURRENCY: z.coerce.number().int().min(0).max(1000).default(5),
  TEAM_QUEUE: z.coerce.number().int().min(0).max(100_000).default(100),
  CORS_ORIGINS: originList.default([]),
  HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(60),
  WEBHOOK_ALLOW_PRIVATE: booleanFlag.default(false),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  /** When set, GET /metrics needs it as a bearer token. */
  metricsToken: string | undefined;
  /** Express's `trust proxy`: which proxies tell the client's address (false: none). */
  trustProxy: boolean | number | string;
  logLevel: z.infer<typeof configSchema>['LOG_LEVEL'];
  seedDemo: boolean;
  /** Requests per minute per client address on /api; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Seconds an authenticated token is trusted without a database lookup; 0 looks up every request. */
  tokenCacheSeconds: number;
  /** Memory for rendered project lists, checked against the project's revision; 0 renders every list. */
  listCacheMb: number;
  /** Memory for encoded breakdown answers, checked against the versions of their rows; 0 reads every answer's parts. */
  breakdownCacheMb: number;
  /** How many project lists are read and rendered at once; the others wait (bounds memory). */
  listRenders: number;
  /** Lists, exports and ranged or subtree breakdowns of one team at once (an export until it is sent), and how many more may wait. */
  teamListRenders: number;
  teamListQueue: number;
  /** A client that takes no byte of an answer for this long is cut off; 0: never. */
  clientStallTimeoutMs: number;
  /** Clients reach the service over HTTPS (a TLS proxy in front): only then send HSTS and upgrade-insecure-requests. */
  servedOverHttps: boolean;
  /** PostgreSQL server only: the longest a statement may run, and wait for a lock, in ms (0: no limit). */
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** API requests of one team run at once in this instance (0: no limit), and how many more may wait. */
  teamConcurrency: number;
  teamQueue: number;
  /** Origins of frontends elsewhere that may call the API from a browser (CORS); empty: none. */
  corsOrigins: string[];
  /** How far (percent) V8 lets the heap grow past what its last full collection kept; 0: V8's own heuristics. */
  heapGrowingPercent: number;
  /** Webhooks may reach loopback, private and link-local addresses (tests, a receiver on the same network). */
  webhookAllowPrivate: boolean;
};

/** Reads the environment (and `.env`, which never overrides a variable already set) once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  if (env === process.env) dotenv.config({ quiet: true });
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const c = parsed.data;
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir: c.DATA_DIR,
    databaseUrl: c.DATABASE_URL,
    adminToken: c.ADMIN_TOKEN,
    metricsToken: c.METRICS_TOKEN,
    trustProxy: c.TRUST_PROXY,
    logLevel: c.LOG_LEVEL,
    seedDemo: c.SEED_DEMO,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    tokenCacheSeconds: c.TOKEN_CACHE_SECONDS,
    listCacheMb: c.LIST_CACHE_MB,
    breakdownCacheMb: c.BREAKDOWN_CACHE_MB,
    listRenders: c.LIST_RENDERS,
    teamListRenders: c.TEAM_LIST_RENDERS,
    teamListQueue: c.TEAM_LIST_QUEUE,
    clientStallTimeoutMs: c.CLIENT_STALL_TIMEOUT_MS,
    servedOverHttps: c.SERVED_OVER_HTTPS,
    statementTimeoutMs: c.DB_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: c.DB_LOCK_TIMEOUT_MS,
    teamConcurrency: c.TEAM_CONCURRENCY,
    teamQueue: c.TEAM_QUEUE,
    corsOrigins: c.CORS_ORIGINS,
    heapGrowingPercent: c.HEAP_GROWING_PERCENT,
    webhookAllowPrivate: c.WEBHOOK_ALLOW_PRIVATE,
  };
}
