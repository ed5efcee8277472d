import type { Knex } from 'knex';

/*
 * Who created a team and when (docs/api.md, POST /api/teams: creating teams is the operator's act), and a
 * token's lifecycle:
 *   - teams.created_by_token_id: the token that created the team through POST /api/teams (null for
 *     the default team and for teams made before this release or by hand); created_at already exists.
 *     No foreign key: a token's primary key includes its team, and a creator's row is never deleted
 *     (revocation keeps it).
 *   - api_tokens.from_admin_token: the token is the one ADMIN_TOKEN makes. A start-up with another
 *     value revokes every such token but its own, so rotating ADMIN_TOKEN retires the old secret.
 *     Tokens the earlier releases made from ADMIN_TOKEN carry its name in the default team: marked here.
 *   - api_tokens.expires_at: optional end of the token's life (POST /api/tokens expires_in_days).
 *   - api_token_usage.last_used_at: the minute the token was last used; written at most once a minute
 *     per token and instance (auth/token-usage.ts), never once per request. A table of its own, by
 *     team: api_tokens is read by every authentication and would be a Citus reference table (every
 *     write to it goes to every node); its rows stay as they were written.
 */
const DEFAULT_TEAM_ID = '00000000-0000-4000-8000-000000000001';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('teams', (t) => {
    t.uuid('created_by_token_id');
  });
  await knex.schema.alterTable('api_tokens', (t) => {
    t.boolean('from_admin_token').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true });
  });
  await knex.schema.createTable('api_token_usage', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('token_id').notNullable();
    t.timestamp('last_used_at', { useTz: true }).notNullable();
    t.primary(['team_id', 'token_id']);
    // A token moved to another team (ADMIN_TOKEN's secret given to a token of another team) keeps its use.
    t.foreign(['team_id', 'token_id']).references(['team_id', 'id']).inTable('api_tokens').onDelete('CASCADE').onUpdate('CASCADE');
  });
  await knex('api_tokens').where({ team_id: DEFAULT_TEAM_ID, name: 'ADMIN_TOKEN' }).update({ from_admin_token: true });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_token_usage');
  await knex.schema.alterTable('api_tokens', (t) => {
    t.dropColumn('expires_at');
    t.dropColumn('from_admin_token');
  });
  await knex.schema.alterTable('teams', (t) => {
    t.dropColumn('created_by_token_id');
  });
}
