import fs from 'node:fs';
import path from 'node:path';
import { SCOPE_STATEMENTS } from '../../src/finance/inputs/scope';
import { PARTICIPANT_STATEMENTS } from '../../src/finance/inputs/participants';
import { LIST_STATEMENTS } from '../../src/finance/read-model/list.sql';
import { BREAKDOWN_STATEMENTS } from '../../src/finance/read-model/breakdown.sql';
import { ROLLUP_STATEMENTS } from '../../src/finance/read-model/rollups.sql';

/*
 * The SQL text of every named statement of the list, the breakdown and the stored figures' writes,
 * compared with test/golden/<name>.sql, so that a reviewer sees every change to a statement as a diff of
 * its golden file. After an intended change: UPDATE_GOLDEN=1 npx jest test/unit/sql-golden.test.ts
 * (npm run golden:update), then review and commit the files.
 */
const GOLDEN = path.resolve(__dirname, '../golden');
const update = process.env.UPDATE_GOLDEN === '1';

const statements: Record<string, string> = {
  ...SCOPE_STATEMENTS,
  ...PARTICIPANT_STATEMENTS,
  ...LIST_STATEMENTS,
  ...BREAKDOWN_STATEMENTS,
  ...ROLLUP_STATEMENTS,
};

/** One statement's file: its text with trailing spaces trimmed, ending in a newline. */
const fileText = (sql: string) => `${sql.replace(/[ \t]+$/gm, '').trim()}\n`;

describe('named statements match their golden files', () => {
  if (update) {
    for (const name of fs.readdirSync(GOLDEN)) if (name.endsWith('.sql')) fs.rmSync(path.join(GOLDEN, name));
    for (const [name, sql] of Object.entries(statements)) fs.writeFileSync(path.join(GOLDEN, `${name}.sql`), fileText(sql));
  }

  it.each(Object.keys(statements))('%s', (name) => {
    const file = path.join(GOLDEN, `${name}.sql`);
    expect(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : `(no file ${name}.sql: run UPDATE_GOLDEN=1)`).toBe(fileText(statements[name] as string));
  });

  it('has no golden file of a statement that is gone', () => {
    const files = fs.readdirSync(GOLDEN).filter((name) => name.endsWith('.sql')).map((name) => name.slice(0, -'.sql'.length));
    expect(files.sort()).toEqual(Object.keys(statements).sort());
  });
});
