import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CommitReplayer, type ReplayedCommit } from '../../src/bench/commitReplayer';
import { extractTree, replayCommits } from '../../src/bench/gitHistory';
import { readSourceFile } from '../../src/index/readSource';
import { RepoIndex } from '../../src/index/repoIndex';
import { WindowBaselines } from '../../src/bench/baselines';
import { buildIndex } from '../../src/index/workspace';

/**
 * A small repository made with git: commits touching several files, a whitespace-only commit, and a side branch
 * taken before it and merged back. Returns each commit by its message.
 */
function makeRepo(dir: string): Map<string, string> {
  const run = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
        GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
        GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
      },
    })
      .toString()
      .trim();
  const write = (file: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };
  const commits = new Map<string, string>();
  const commit = (message: string, ...flags: string[]): void => {
    run('commit', '-q', ...flags, '-m', message);
    commits.set(message, run('rev-parse', 'HEAD'));
  };
  const app = (...more: string[]): string =>
    [
      "import { Store } from './store';",
      "import { formatItem } from './format';",
      '',
      'export const store = new Store();',
      'export const total = store.countItems();',
      'export const shown = formatItem(total);',
      'export const again = formatItem(shown);',
      ...more,
      '',
    ].join('\n');
  run('init', '-q', '-b', 'main');
  write(
    'src/store.ts',
    'export class Store {\n  items: string[] = [];\n  addItem(item: string): void {\n    this.items.push(item);\n  }\n}\n',
  );
  write('src/format.ts', 'export function formatItem(item: string): string {\n  return item.trim();\n}\n');
  write('src/app.ts', "import { Store } from './store';\n\nexport const store = new Store();\n");
  run('add', '-A');
  commit('base');
  // Two files: a new helper, and its first use; a new import and the first use of what it imports.
  write(
    'src/store.ts',
    'export class Store {\n  items: string[] = [];\n  addItem(item: string): void {\n    this.items.push(item);\n  }\n  countItems(): number {\n    return this.items.length;\n  }\n}\n',
  );
  write('src/app.ts', app());
  write('src/app.test.ts', "import { total } from './app';\nconst expected = total + formatItem('x');\n");
  run('add', '-A');
  commit('count items');
  // A side branch from here, merged back (no fast-forward) after a whitespace-only commit on main.
  run('checkout', '-qb', 'side');
  write('src/side.ts', "import { Store } from './store';\nexport const other = new Store().countItems();\n");
  run('add', '-A');
  commit('side');
  run('checkout', '-q', 'main');
  write('src/format.ts', 'export function formatItem(item: string): string {\n\n    return item.trim();\n}\n');
  commit('reformat', '-a');
  run('merge', '-q', '--no-ff', '-m', 'merge side', 'side');
  // A deletion and an edit after the merge.
  fs.rmSync(path.join(dir, 'src/app.test.ts'));
  write(
    'src/format.ts',
    'export function formatItem(item: string): string {\n\n    return item.trim();\n}\nexport const empty = formatItem("");\n',
  );
  write('src/app.ts', app('store.addItem(formatItem(shown));'));
  run('add', '-A');
  commit('edit');
  return commits;
}

describe('commit replay', function () {
  let tmp: string;
  let gitDir: string;
  let commits: Map<string, string>;
  let replayer: CommitReplayer;
  let baselines: WindowBaselines;
  const replayed = new Map<string, ReplayedCommit>();
  const lines = (c: ReplayedCommit) =>
    c.tasks.map((t) => `${t.task.metadata.file}:${t.task.metadata.groundtruth_start_lineno}`);

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'repogate-replay-test-'));
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    commits = makeRepo(work);
    gitDir = path.join(work, '.git');
    const walk = replayCommits(gitDir, commits.get('edit')!, 4);
    assert.strictEqual(walk.base, commits.get('base'));
    const names = new Map([...commits].map(([name, hash]) => [hash, name]));
    // Topological order: the side branch's commit after main's, each after its parent; the merge is left out.
    assert.deepStrictEqual(
      walk.commits.map((c) => names.get(c)),
      ['count items', 'reformat', 'side', 'edit'],
    );
    const root = path.join(tmp, 'replayed');
    fs.mkdirSync(root);
    replayer = await CommitReplayer.start(gitDir, walk.base, root);
    baselines = new WindowBaselines(replayer.index, replayer.texts);
    for (const commit of walk.commits) {
      const one = await replayer.apply(commit);
      for (const file of [...one.caughtUp, ...one.touched]) baselines.replaceFile(file, replayer.texts.get(file));
      replayed.set(names.get(commit)!, one);
    }
  });

  after(() => {
    replayer?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('replays a side branch from its parent and skips the whitespace-only commit', () => {
    assert.deepStrictEqual(
      [...replayed.values()].map((c) => c.skipped),
      [undefined, 'formatting', undefined, undefined],
    );
    assert.deepStrictEqual(replayed.get('reformat')!.tasks, []);
    // The side commit's parent is 'count items': the tree moves back there first, untimed, then the commit lands.
    const side = replayed.get('side')!;
    assert.deepStrictEqual(side.caughtUp, ['src/format.ts']);
    assert.deepStrictEqual(side.touched, ['src/side.ts']);
    assert.deepStrictEqual(side.updateMs.length, 1);
    // A new file's imported names are new to it: its first use of them is a task.
    assert.deepStrictEqual(
      side.tasks.map((t) => [lines(side)[0], t.task.metadata.novel_identifiers, t.recent]),
      [['src/side.ts:1', ['Store', 'countItems'], []]],
    );
    // 'edit' follows the merge: the merge's changes (the reformat) reach the index before it.
    assert.deepStrictEqual(replayed.get('edit')!.caughtUp, ['src/format.ts']);
  });

  it('makes tasks from added product lines only, cut in the file as the commit left it', () => {
    const first = replayed.get('count items')!;
    const cut = lines(first);
    // app.ts's added row 4 uses a name declared elsewhere; the test file gives no task.
    assert.ok(cut.includes('src/app.ts:4'), cut.join(', '));
    assert.ok(!cut.some((l) => l.startsWith('src/app.test.ts')), cut.join(', '));
    assert.ok(!cut.includes('src/app.ts:3'), 'an unchanged line is no task');
    const total = first.tasks.find((t) => t.task.metadata.groundtruth_start_lineno === 4)!;
    assert.strictEqual(total.task.groundtruth, 'export const total = store.countItems();');
    assert.deepStrictEqual(total.task.metadata.novel_identifiers, ['countItems']);
    assert.ok(total.task.right_context.startsWith('export const shown'));
    // The first use of formatItem, which the commit imported: a cross task; its second use is not.
    const shown = first.tasks.find((t) => t.task.metadata.groundtruth_start_lineno === 5)!;
    assert.deepStrictEqual(
      [shown.task.metadata.kind, shown.task.metadata.novel_identifiers],
      ['cross', ['formatItem']],
    );
    assert.ok(
      !first.tasks.some((t) => t.task.metadata.kind === 'cross' && t.task.metadata.groundtruth_start_lineno === 6),
    );
    // The commit's other files are the recent ones, the file itself never.
    assert.deepStrictEqual(total.recent.map((r) => r.path).sort(), ['src/app.test.ts', 'src/store.ts']);
    assert.ok(total.recent.find((r) => r.path === 'src/store.ts')!.text.includes('countItems'));
    // Written before its use: store.ts comes before app.ts, which imports it.
    assert.ok(first.touched.indexOf('src/store.ts') < first.touched.indexOf('src/app.ts'), first.touched.join());
    const last = replayed.get('edit')!;
    const lastLines = lines(last);
    assert.ok(lastLines.includes('src/app.ts:7'), lastLines.join(', '));
    assert.ok(!lastLines.includes('src/app.ts:4'), 'a line of an earlier commit is no task again');
    assert.ok(last.touched.includes('src/app.test.ts'), 'a deletion is an index update');
    assert.ok(!replayer.index.files.has('src/app.test.ts'));
    assert.strictEqual(last.updateMs.length, last.touched.length);
  });

  it('leaves the index equal to a fresh build at the last commit', async () => {
    const root = path.join(tmp, 'fresh');
    fs.mkdirSync(root);
    await extractTree(gitDir, commits.get('edit')!, root);
    const fresh = new RepoIndex(root);
    await buildIndex(fresh, { root, fresh: true });
    try {
      const updated = replayer.index;
      assert.deepStrictEqual([...updated.files.keys()].sort(), [...fresh.files.keys()].sort());
      assert.deepStrictEqual(updated.stats(), fresh.stats());
      for (const [file, record] of fresh.files) {
        const mine = updated.files.get(file)!;
        assert.strictEqual(mine.hash, record.hash, file);
        assert.deepStrictEqual(mine.facts, record.facts, file);
        for (const chunk of record.facts.chunks) assert.deepStrictEqual(updated.chunk(chunk.id), chunk);
        for (const symbol of record.facts.symbols) {
          const where = (index: RepoIndex) =>
            index
              .symbols(symbol.name)
              .map((r) => `${r.path}:${r.symbol.range.start}`)
              .sort();
          assert.deepStrictEqual(where(updated), where(fresh), symbol.name);
          assert.strictEqual(updated.frequency(symbol.name), fresh.frequency(symbol.name), symbol.name);
        }
        const query = record.facts.chunks[0]?.text ?? '';
        assert.deepStrictEqual(updated.searchChunks(query, 10), fresh.searchChunks(query, 10), file);
      }
      // The baselines kept current file by file rank as ones built at the last commit.
      const texts = new Map<string, string>();
      for (const file of fresh.files.keys()) {
        const read = await readSourceFile(root, file);
        if ('text' in read) texts.set(file, read.text);
      }
      const rebuilt = new WindowBaselines(fresh, texts);
      assert.strictEqual(baselines.windowCount, rebuilt.windowCount);
      for (const [file, text] of texts) {
        assert.deepStrictEqual(
          baselines.jaccard(file, text, 2000).snippets,
          rebuilt.jaccard(file, text, 2000).snippets,
        );
        assert.deepStrictEqual(
          baselines.bm25Search(file, text, 2000).snippets,
          rebuilt.bm25Search(file, text, 2000).snippets,
        );
      }
    } finally {
      fresh.dispose();
    }
  });
});
