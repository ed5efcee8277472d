import type { Knex } from 'knex';
import { loadConfig } from './src/config';
import { migrationSource } from './migrations';

/*
 * The knex configuration for tools that read a knexfile. The service itself builds its connection in
 * src/db/knex.ts (embedded PGlite unless DATABASE_URL is set); `npm run migrate` uses that too.
 * This file covers the PostgreSQL server case for the knex CLI.
 */
const config = loadConfig();

const knexConfig: Knex.Config = {
  client: 'pg',
  connection: config.databaseUrl,
  migrations: { migrationSource },
};

export default knexConfig;
