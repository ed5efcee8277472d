import dotenv from 'dotenv';
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

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .refine(isPostgresUrl, 'must be a URL like postgres://user:password@host:5432/database')
    .optional(),
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SEED_DEMO: booleanFlag.default(true),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(12000),
  TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  LIST_CACHE_MB: z.coerce.number().int().min(0).max(4096).default(32),
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
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  logLevel: z.infer<typeof configSchema>['LOG_LEVEL'];
  seedDemo: boolean;
  /** Requests per minute per client address on /api; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Seconds an authenticated token is trusted without a database lookup; 0 looks up every request. */
  tokenCacheSeconds: number;
  /** Memory for rendered project lists, checked against the project's revision; 0 renders every list. */
  listCacheMb: number;
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
    logLevel: c.LOG_LEVEL,
    seedDemo: c.SEED_DEMO,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    tokenCacheSeconds: c.TOKEN_CACHE_SECONDS,
    listCacheMb: c.LIST_CACHE_MB,
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
  };
}
