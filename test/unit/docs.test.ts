import fs from 'node:fs';
import path from 'node:path';

/*
 * The README and docs/ are read by people who cloned the repository and nothing else: every relative
 * link must lead to a file of the repository (and to a heading that exists, for a link with an
 * anchor), never out of it through `../`.
 */
const ROOT = path.resolve(__dirname, '../..');

const documents = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Inline links `[text](target "title")` and reference definitions `[label]: target`. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] as string);
  return [...inline, ...references];
}

/** Anchors of a file's headings, as GitHub makes them (lower case, punctuation dropped, - for spaces, -1 for repeats). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const slug = (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

const lineCount = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\n$/, '').split('\n').length;

/** Folders that are not the repository's own text: installed packages, builds, data, test output. */
const SKIPPED = new Set(['.git', 'node_modules', 'dist', 'data', 'coverage', 'test-results']);
const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|json|md|ya?ml|sh|html|css|sql|txt|example)$|^(Dockerfile|run|\.[a-z]+ignore)$/;

/** Every text file of the repository, relative to its root (package-lock.json is generated, not written). */
function repositoryFiles(dir = ROOT): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : repositoryFiles(full);
    if (entry.isSymbolicLink() || !TEXT.test(entry.name) || entry.name === 'package-lock.json') return [];
    return [path.relative(ROOT, full)];
  });
}

/*
 * What a reader of a clone cannot follow: the folder beside the repository the project was first
 * specified in, its documents by name, and citations of their sections. Built from parts so this file
 * does not match itself.
 */
const OUTSIDE = [['..', 'shared'].join('/'), ['CONTRACT', 'md'].join('.'), ['CONTRACT', 'section'].join(' '), ['task-breakdown', 'spec'].join('-'), ['', 'work', 'shared'].join('/')];

describe('links in the README and docs/', () => {
  it('finds the documents and their links', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/finance-rules.md']));
    const readmeLinks = linksOf(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(readmeLinks).toEqual(expect.arrayContaining(['docs/api.md', 'docs/finance-rules.md']));
  });

  it.each(documents)('every relative link in %s resolves inside the repository', (document) => {
    const source = path.join(ROOT, document);
    const problems: string[] = [];
    for (const link of linksOf(fs.readFileSync(source, 'utf8'))) {
      if (isExternal(link)) continue;
      const [file = '', anchor] = link.split('#', 2);
      const target = file ? path.resolve(path.dirname(source), decodeURIComponent(file)) : source;
      const relative = path.relative(ROOT, target);
      if (relative.startsWith('..') || path.isAbsolute(relative)) {
        problems.push(`${link}: leaves the repository`);
        continue;
      }
      if (!fs.existsSync(target)) {
        problems.push(`${link}: no such file`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchorsOf(fs.readFileSync(target, 'utf8')).has(anchor)) {
        problems.push(`${link}: no heading with this anchor in ${relative}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('reads links and anchors as GitHub does', () => {
    const markdown = [
      '# `GET /api/tasks/:id`',
      '## Access: tokens and roles',
      '## Notes',
      '## Notes',
      'See [the rules](docs/finance-rules.md#numbers), `[not](a-link.md)` and [up](../shared/CONTRACT.md).',
      '```',
      '[inside](code.md)',
      '```',
      '[ref]: docs/api.md',
    ].join('\n');
    expect(linksOf(markdown)).toEqual(['docs/finance-rules.md#numbers', '../shared/CONTRACT.md', 'docs/api.md']);
    expect([...anchorsOf(markdown)]).toEqual(['get-apitasksid', 'access-tokens-and-roles', 'notes', 'notes-1']);
  });
});

describe('the documents stay short and inside the repository', () => {
  it('keeps the README to 350 lines and BENCHMARKS.md to 400', () => {
    expect({ 'README.md': lineCount('README.md') <= 350, 'BENCHMARKS.md': lineCount('BENCHMARKS.md') <= 400 }).toEqual({ 'README.md': true, 'BENCHMARKS.md': true });
  });

  it('has no file that refers to a document outside the repository', () => {
    const files = repositoryFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/finance-rules.md', 'src/server.ts', 'test/unit/docs.test.ts']));
    const problems: string[] = [];
    for (const file of files) {
      if (file === path.join('test', 'unit', 'docs.test.ts')) continue;
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        const found = OUTSIDE.find((needle) => line.includes(needle));
        if (found) problems.push(`${file}:${i + 1}: ${found}`);
      });
    }
    expect(problems).toEqual([]);
  });

  it.each(['README.md', 'BENCHMARKS.md', ...documents.filter((d) => d !== 'README.md')])('%s cites no web page in place of a document of the repository', (document) => {
    const webLinks = linksOf(fs.readFileSync(path.join(ROOT, document), 'utf8')).filter((link) => /^https?:/i.test(link));
    expect(webLinks).toEqual([]);
  });

  it('numbers the finance rules, so that code can cite them', () => {
    const rules = fs.readFileSync(path.join(ROOT, 'docs/finance-rules.md'), 'utf8');
    const numbers = [...rules.matchAll(/^## R(\d+)\. /gm)].map((m) => Number(m[1]));
    expect(numbers.length).toBeGreaterThanOrEqual(18);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });
});
