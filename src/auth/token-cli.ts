import { loadConfig } from '../config';
import { DataDirInUseError } from '../db/data-dir-owner';
import { configuredTarget } from '../db/knex';
import { migrateToLatest } from '../db/migrate';
import { openDatabase } from '../db/open-database';
import { everyRow } from '../http/paging';
import { DEFAULT_TEAM_ID, ensureDefaultTeam } from '../teams/teams.service';
import { ROLES, Role } from './roles';
import { TOKENS_ORDER } from './tokens.repository';
import { createToken, listTokens, revokeToken } from './tokens.service';

const USAGE = `Usage:
  npm run token -- create --role viewer|editor|admin --name NAME [--team TEAM_ID]
  npm run token -- list [--team TEAM_ID]
  npm run token -- revoke TOKEN_ID [--team TEAM_ID]
Works on the configured database (DATABASE_URL, else the PGlite data directory DATA_DIR); the
embedded database (DATA_DIR) can only be opened while the service is stopped; while it runs, manage
tokens through the API (POST /api/tokens, see the README).`;

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (!command || !['create', 'list', 'revoke'].includes(command)) {
    console.error(USAGE);
    return 2;
  }
  const teamId = option(rest, 'team') ?? DEFAULT_TEAM_ID;
  const config = loadConfig();
  const { db, close } = await openDatabase(configuredTarget(config));
  try {
    await migrateToLatest(db);
    await ensureDefaultTeam(db);
    if (command === 'create') {
      const role = option(rest, 'role') as Role | undefined;
      const name = option(rest, 'name');
      if (!role || !ROLES.includes(role) || !name) {
        console.error(USAGE);
        return 2;
      }
      const token = await createToken(db, teamId, name, role);
      console.log(`Created ${role} token "${name}" (id ${token.id}). The secret is shown this once:\n${token.token}`);
    } else if (command === 'list') {
      for await (const t of everyRow(TOKENS_ORDER, (page) => listTokens(db, teamId, page))) {
        console.log(`${t.id}  ${t.role.padEnd(6)}  ${t.revoked_at ? 'revoked' : 'active '}  ${t.name}`);
      }
    } else {
      const id = rest.find((arg) => !arg.startsWith('--') && arg !== option(rest, 'team'));
      if (!id) {
        console.error(USAGE);
        return 2;
      }
      await revokeToken(db, teamId, id);
      console.log(`Revoked token ${id}`);
    }
    return 0;
  } finally {
    await close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const hint = err instanceof DataDirInUseError ? ' (while the service runs, use POST /api/tokens)' : '';
    console.error(`Token command failed: ${err instanceof Error ? err.message : String(err)}${hint}`);
    process.exit(1);
  },
);
