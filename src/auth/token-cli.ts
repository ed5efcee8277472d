import { now } from '../clock';
import { loadConfig } from '../config';
import { DataDirInUseError } from '../db/data-dir-owner';
import { configuredTarget } from '../db/knex';
import { migrateToLatest } from '../db/migrate';
import { StartupError, openDatabase } from '../db/open-database';
import { AppError } from '../http/errors';
import { everyRow } from '../http/paging';
import { isUuid } from '../http/validate';
import { DEFAULT_TEAM_ID, ensureDefaultTeam } from '../teams/teams.service';
import { ROLES, Role } from './roles';
import { TOKENS_ORDER, teamExists } from './tokens.repository';
import { createTokenBody } from './tokens.schemas';
import { createToken, listTokens, revokeToken } from './tokens.service';

const USAGE = `Usage:
  npm run token -- create --role viewer|editor|admin --name NAME [--expires-in-days DAYS] [--team TEAM_ID]
  npm run token -- list [--team TEAM_ID]
  npm run token -- revoke TOKEN_ID [--team TEAM_ID]
  npm run token -- --help
Works on the configured database (DATABASE_URL, else the PGlite data directory DATA_DIR); the
embedded database (DATA_DIR) can only be opened while the service is stopped; while it runs, manage
tokens through the API (POST /api/tokens, see the README). --team defaults to the default team.`;

/*
 * Whatever goes wrong is one line on stderr and a non-zero exit: 2 for a command line that cannot be
 * right (checked before the database is opened), 1 for one the database refuses (no such team or
 * token). Never SQL, a driver's message or a stack: those can carry statements and bound values.
 */
class CommandLineError extends Error {}
class NotFoundError extends Error {}

const OPTIONS: Record<string, string[]> = { create: ['role', 'name', 'expires-in-days', 'team'], list: ['team'], revoke: ['team'] };

type Parsed = { command: string; options: Map<string, string>; positional: string[] };

function parse(args: string[]): Parsed {
  const [command = '', ...rest] = args;
  const allowed = OPTIONS[command];
  if (!allowed) throw new CommandLineError(command ? `Unknown command "${command}": the commands are create, list and revoke` : 'No command given');
  const options = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (!allowed.includes(name)) throw new CommandLineError(`Unknown option ${arg} for ${command}: it takes ${allowed.map((o) => `--${o}`).join(', ')}`);
    const value = rest[i + 1];
    if (value === undefined || value.startsWith('--')) throw new CommandLineError(`${arg} needs a value`);
    options.set(name, value);
    i++;
  }
  const expectedPositional = command === 'revoke' ? 1 : 0;
  if (positional.length !== expectedPositional) {
    throw new CommandLineError(command === 'revoke' ? 'revoke takes exactly one TOKEN_ID' : `Unexpected argument "${positional[0]}"`);
  }
  return { command, options, positional };
}

function teamOf(options: Map<string, string>): string {
  const team = options.get('team') ?? DEFAULT_TEAM_ID;
  if (!isUuid(team)) throw new CommandLineError(`--team must be a team id (a UUID), not "${team}"`);
  return team.toLowerCase();
}

/** The create command's fields, checked as POST /api/tokens checks them. */
function tokenToCreate(options: Map<string, string>): { role: Role; name: string; expiresInDays?: number } {
  const role = options.get('role');
  if (role === undefined) throw new CommandLineError(`create needs --role (${ROLES.join(', ')})`);
  if (!(ROLES as readonly string[]).includes(role)) throw new CommandLineError(`Unknown role "${role}": the roles are ${ROLES.join(', ')}`);
  const name = options.get('name');
  if (name === undefined) throw new CommandLineError('create needs --name NAME');
  const days = options.get('expires-in-days');
  if (days !== undefined && !/^\d+$/.test(days)) throw new CommandLineError(`--expires-in-days must be a whole number of days, not "${days}"`);
  const parsed = createTokenBody.safeParse({ role, name, ...(days === undefined ? {} : { expires_in_days: Number(days) }) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = issue?.path[0] === 'expires_in_days' ? '--expires-in-days' : `--${String(issue?.path[0] ?? 'name')}`;
    throw new CommandLineError(`${option} ${issue?.message ?? 'is invalid'}`);
  }
  return { role: parsed.data.role, name: parsed.data.name, expiresInDays: parsed.data.expires_in_days };
}

const when = (at: Date | null) => (at ? new Date(at).toISOString().slice(0, 16).replace('T', ' ') : 'never');

async function main(args: string[]): Promise<number> {
  if (args.length === 0) {
    console.error(USAGE);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h') || args[0] === 'help') {
    console.log(USAGE);
    return 0;
  }
  const { command, options, positional } = parse(args);
  const teamId = teamOf(options);
  const toCreate = command === 'create' ? tokenToCreate(options) : undefined;
  const tokenId = positional[0];
  if (tokenId !== undefined && !isUuid(tokenId)) throw new CommandLineError(`"${tokenId}" is not a token id (a UUID)`);

  const config = loadConfig();
  const { db, close } = await openDatabase(configuredTarget(config));
  try {
    await migrateToLatest(db);
    await ensureDefaultTeam(db);
    if (!(await teamExists(db, teamId))) throw new NotFoundError(`No team ${teamId}`);
    if (toCreate) {
      const token = await createToken(db, teamId, toCreate.name, toCreate.role, toCreate.expiresInDays);
      const expiry = token.expires_at ? `, expires ${new Date(token.expires_at).toISOString()}` : '';
      console.log(`Created ${token.role} token "${token.name}" (id ${token.id}${expiry}). The secret is shown this once:\n${token.token}`);
    } else if (command === 'list') {
      for await (const t of everyRow(TOKENS_ORDER, (page) => listTokens(db, teamId, page))) {
        const state = t.revoked_at ? 'revoked' : t.expires_at && new Date(t.expires_at) <= now() ? 'expired' : 'active ';
        console.log(`${t.id}  ${t.role.padEnd(6)}  ${state}  ${t.name}  (expires ${when(t.expires_at)}, last used ${when(t.last_used_at)})`);
      }
    } else {
      const revoked = await revokeToken(db, teamId, tokenId as string).catch((err: unknown) => {
        throw err instanceof AppError && err.status === 404 ? new NotFoundError(`No token ${tokenId} in team ${teamId}`) : err;
      });
      console.log(`Revoked token ${revoked.id}`);
    }
    return 0;
  } finally {
    await close();
  }
}

/** One line for any failure: our own messages as they are, a database's refusal by its SQLSTATE only. */
function describe(err: unknown): { line: string; code: number } {
  if (err instanceof CommandLineError) return { line: `${err.message} (npm run token -- --help)`, code: 2 };
  if (err instanceof NotFoundError) return { line: err.message, code: 1 };
  if (err instanceof DataDirInUseError) return { line: `Token command failed: ${err.message} (while the service runs, use POST /api/tokens)`, code: 1 };
  if (err instanceof StartupError) return { line: `Token command failed: ${err.message}`, code: 1 };
  if (err instanceof Error && err.message.startsWith('Invalid configuration:')) return { line: `Token command failed: ${err.message}`, code: 1 };
  const sqlState = (err as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
    return { line: `Token command failed: the database refused it (SQLSTATE ${sqlState})`, code: 1 };
  }
  // knex puts the statement before the driver's message ("insert into ... - connection lost"): drop it.
  const message = err instanceof Error ? err.message : String(err);
  const sqlFirst = /^\s*(select|insert|update|delete|with|create|alter|drop)\b/i.test(message);
  const after = message.lastIndexOf(' - ');
  const withoutSql = !sqlFirst ? message : after >= 0 ? message.slice(after + 3) : 'the database refused it';
  return { line: `Token command failed: ${withoutSql.split('\n')[0]}`, code: 1 };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const { line, code } = describe(err);
    console.error(line);
    process.exit(code);
  },
);
