/**
 * The docs name only what exists: every `npm run <script>` is a script of package.json, and every repository path
 * they name is a file or folder of the repository. Docs: README.md, CONTRIBUTING.md (if present), docs/*.md and
 * the README.md files under test/ and tools/ (not under test/fixtures, whose folders are repositories the tests
 * read, not docs).
 *
 * A path is a link target (relative to the doc's folder), a code span that is a path as a whole and starts with a
 * top-level entry of the repository (`src/model/remote/ollama.ts`, `.ci/run`, `src/a.ts:12:5`), or a path in
 * prose that starts with a top-level folder (test/unit/foo.test.ts); those two are relative to the repository
 * root. Fenced code blocks are commands, not checked. Not checked: URLs, globs, placeholders (`<dir>`, `~/.cache`,
 * `$X`), and what a .gitignore of the repository ignores (build and run outputs: out/, .bench/, test/e2e/artifacts/).
 * A path that is missing here but is a file of a fixture workspace (test/fixtures/repos/NAME, or a folder of it) is
 * that workspace's file, as the integration suite's README describes them.
 */
import { strict as assert } from 'assert';
import { existsSync, readdirSync, readFileSync } from 'fs';
import ignore, { type Ignore } from 'ignore';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../../..');

export interface DocReference {
  doc: string;
  kind: 'script' | 'path';
  target: string;
}

/** The docs, as paths relative to the repository root. */
function docFiles(root: string): string[] {
  const docs = ['README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(path.join(root, f)));
  docs.push(
    ...readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  );
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory() && entry.name !== 'node_modules' && rel !== 'test/fixtures') walk(rel);
      else if (entry.isFile() && entry.name === 'README.md') docs.push(rel);
    }
  };
  walk('test');
  walk('tools');
  return docs;
}

const PATH_SHAPE = /^[\w.@+-]+(\/[\w.@+-]+)*\/?$/;

/** The scripts and paths one doc names. `topLevel`: the names at the repository root (files and folders). */
export function docReferences(doc: string, text: string, topLevel: ReadonlySet<string>): DocReference[] {
  const refs: DocReference[] = [];
  for (const m of text.matchAll(/npm run ([\w:.-]+)/g)) refs.push({ doc, kind: 'script', target: m[1] });
  const outsideFences = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
  for (const m of outsideFences.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1].split('#')[0];
    if (!target || /^[a-z][\w+.-]*:/i.test(target) || /[<>*{}$~]/.test(target)) continue;
    refs.push({ doc, kind: 'path', target: path.posix.normalize(path.posix.join(path.posix.dirname(doc), target)) });
  }
  for (const m of outsideFences.matchAll(/`([^`\n]+)`/g)) {
    const span = m[1].replace(/:\d+(:\d+)?$/, '');
    if (PATH_SHAPE.test(span) && topLevel.has(span.split('/')[0])) refs.push({ doc, kind: 'path', target: span });
  }
  const prose = outsideFences.replace(/`[^`\n]*`/g, ' ').replace(/\]\([^)\s]*\)/g, ']');
  const folders = [...topLevel].filter((n) => /^[\w.-]+$/.test(n)).map((n) => n.replace(/\./g, '\\.'));
  const inProse = new RegExp(`(?<![\\w./@~<>$-])((?:${folders.join('|')})/[\\w.@+/-]*[\\w/])`, 'g');
  for (const m of prose.matchAll(inProse)) refs.push({ doc, kind: 'path', target: m[1] });
  return refs;
}

/** The references that name nothing: "doc: npm run x" or "doc: path". */
export function brokenReferences(
  refs: DocReference[],
  scripts: ReadonlySet<string>,
  exists: (rel: string) => boolean,
  ignored: (rel: string) => boolean,
): string[] {
  const broken = refs.filter((r) =>
    r.kind === 'script' ? !scripts.has(r.target) : !ignored(r.target) && !exists(r.target),
  );
  return [...new Set(broken.map((r) => `${r.doc}: ${r.kind === 'script' ? `npm run ${r.target}` : r.target}`))];
}

/** Whether a .gitignore of the repository (the root's, or one in a folder above the path) ignores the path. */
function gitIgnored(root: string): (rel: string) => boolean {
  const rules: Array<{ dir: string; rules: Ignore }> = [];
  const walk = (dir: string): void => {
    const file = path.join(root, dir, '.gitignore');
    if (existsSync(file)) rules.push({ dir, rules: ignore().add(readFileSync(file, 'utf8')) });
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !['.git', 'node_modules', 'test/fixtures'].includes(rel)) walk(rel);
    }
  };
  walk('');
  return (rel) =>
    rel.startsWith('..') ||
    rules.some((r) => {
      if (r.dir && !rel.startsWith(`${r.dir}/`)) return false;
      const inside = r.dir ? rel.slice(r.dir.length + 1) : rel;
      return inside !== '' && r.rules.ignores(inside);
    });
}

/** Whether the path exists in the repository, or in a fixture workspace (a folder of test/fixtures/repos or one below it). */
function existsHere(root: string): (rel: string) => boolean {
  const repos = path.join(root, 'test/fixtures/repos');
  const workspaces = readdirSync(repos, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [
      path.join(repos, e.name),
      ...readdirSync(path.join(repos, e.name), { withFileTypes: true })
        .filter((s) => s.isDirectory())
        .map((s) => path.join(repos, e.name, s.name)),
    ]);
  return (rel) => existsSync(path.join(root, rel)) || workspaces.some((w) => existsSync(path.join(w, rel)));
}

describe('docs references', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const scripts = new Set(Object.keys(pkg.scripts));
  const topLevel = new Set(readdirSync(ROOT).filter((n) => n !== '.git'));
  const docs = docFiles(ROOT);
  const refs = docs.flatMap((doc) => docReferences(doc, readFileSync(path.join(ROOT, doc), 'utf8'), topLevel));

  it('reads every doc and finds their references', () => {
    assert.ok(docs.includes('README.md') && docs.includes('docs/benchmarks.md') && docs.length > 10, docs.join());
    assert.ok(refs.some((r) => r.kind === 'script' && r.target === 'bench:speed'));
    assert.ok(refs.some((r) => r.kind === 'path' && r.target === 'tools/bench/repos.json'));
    assert.ok(refs.length > 300, `${refs.length} references`);
  });

  it('names only npm scripts that exist', () => {
    assert.deepEqual(
      brokenReferences(
        refs.filter((r) => r.kind === 'script'),
        scripts,
        () => true,
        () => false,
      ),
      [],
    );
  });

  it('names only repository paths that exist', () => {
    assert.deepEqual(
      brokenReferences(
        refs.filter((r) => r.kind === 'path'),
        scripts,
        existsHere(ROOT),
        gitIgnored(ROOT),
      ),
      [],
    );
  });

  describe('finds made-up missing scripts and paths', () => {
    const made = [
      'Run `npm run bench` and `npm run no-such-script`, then see [the guide](guide.md#setup) and',
      '[remote](../docs/remote.md), `src/no/such/file.ts:9:38`, `src/` and `tools/bench/`; in prose',
      'test/unit/gone.test.ts, or docs/remote.md. Not paths: [site](https://example.com/a.md), `src/**/*.ts`,',
      '`~/.cache/repogate`, `<dir>/src/a.ts`, `$OUT/x.json`, `node_modules/x/index.js`, `a/b` and `run.mjs`.',
      '```sh',
      'node src/in/a/fence.ts',
      '```',
    ].join('\n');
    const top = new Set(['src', 'docs', 'test', 'tools', 'node_modules']);
    const real = new Set(['src', 'docs/remote.md', 'tools/bench', 'docs/guide.md']);
    const found = docReferences('docs/made.md', made, top);

    it('extracts scripts, links, whole-path code spans and prose paths, and nothing else', () => {
      assert.deepEqual(
        found.map((r) => `${r.kind} ${r.target}`),
        [
          'script bench',
          'script no-such-script',
          'path docs/guide.md',
          'path docs/remote.md',
          'path src/no/such/file.ts',
          'path src/',
          'path tools/bench/',
          'path node_modules/x/index.js',
          'path test/unit/gone.test.ts',
          'path docs/remote.md',
        ],
      );
    });

    it('reports the missing ones', () => {
      assert.deepEqual(
        brokenReferences(
          found,
          new Set(['bench']),
          (rel) => real.has(rel.replace(/\/$/, '')),
          (rel) => rel.startsWith('node_modules/'),
        ),
        [
          'docs/made.md: npm run no-such-script',
          'docs/made.md: src/no/such/file.ts',
          'docs/made.md: test/unit/gone.test.ts',
        ],
      );
    });
  });
});
