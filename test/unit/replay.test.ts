import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CommitReplayer, type ReplayedCommit } from '../../src/bench/commitReplayer';
import { extractTree, firstParentCommits } from '../../src/bench/gitHistory';
import { readSourceFile } from '../../src/index/readSource';
import { RepoIndex } from '../../src/index/repoIndex';
import { WindowBaselines } from '../../src/bench/baselines';
import { buildIndex } from '../../src/index/workspace';

/** A small repository made with git: commits touching several files, a whitespace-only commit and a merge. */
function makeRepo(dir: string): string {
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
  run('init', '-q', '-b', 'main');
  write(
    'src/store.ts',
    'export class Store {\n  items: string[] = [];\n  addItem(item: string): void {\n    this.items.push(item);\n  }\n}\n',
  );
  write('src/format.ts', 'export function formatItem(item: string): string {\n  return item.trim();\n}\n');
  write('src/app.ts', "import { Store } from './store';\n\nexport const store = new Store();\n");
  run('add', '-A');
  run('commit', '-qm', 'base');
  // Two files: a new helper, and its first use.
  write(
    'src/store.ts',
    'export class Store {\n  items: string[] = [];\n  addItem(item: string): void {\n    this.items.push(item);\n  }\n  countItems(): number {\n    return this.items.length;\n  }\n}\n',
  );
  write(
    'src/app.ts',
    "import { Store } from './store';\nimport { formatItem } from './format';\n\nexport const store = new Store();\nexport const total = store.countItems();\nexport const shown = formatItem(String(total));\n",
  );
  write('src/app.test.ts', "import { total } from './app';\nconst expected = total + formatItem('x');\n");
  run('add', '-A');
  run('commit', '-qm', 'count items');
  // Whitespace only.
  write('src/format.ts', 'export function formatItem(item: string): string {\n\n    return item.trim();\n}\n');
  run('commit', '-qam', 'reformat');
  // A side branch merged back (no fast-forward); its own commit is not on the first-parent line.
  run('checkout', '-qb', 'side');
  write('src/side.ts', "import { Store } from './store';\nexport const other = new Store().countItems();\n");
  run('add', '-A');
  run('commit', '-qm', 'side');
  run('checkout', '-q', 'main');
  run('merge', '-q', '--no-ff', '-m', 'merge side', 'side');
  // A deletion and an edit after the merge.
  fs.rmSync(path.join(dir, 'src/app.test.ts'));
  write(
    'src/format.ts',
    'export function formatItem(item: string): string {\n\n    return item.trim();\n}\nexport const empty = formatItem("");\n',
  );
  write(
    'src/app.ts',
    "import { Store } from './store';\nimport { formatItem } from './format';\n\nexport const store = new Store();\nexport const total = store.countItems();\nexport const shown = formatItem(String(total));\nstore.addItem(formatItem(shown));\n",
  );
  run('add', '-A');
  run('commit', '-qm', 'edit');
  return run('rev-parse', 'HEAD');
}

describe('commit replay', function () {
  let tmp: string;
  let gitDir: string;
  let head: string;
  let replayer: CommitReplayer;
  let baselines: WindowBaselines;
  const replayed: ReplayedCommit[] = [];

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'repogate-replay-test-'));
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    head = makeRepo(work);
    gitDir = path.join(work, '.git');
    const { base, commits } = firstParentCommits(gitDir, head, 4);
    const root = path.join(tmp, 'replayed');
    fs.mkdirSync(root);
    replayer = await CommitReplayer.start(gitDir, base, root);
    baselines = new WindowBaselines(replayer.index, replayer.texts);
    for (const commit of commits) {
      const one = await replayer.apply(commit);
      for (const file of one.touched) baselines.replaceFile(file, replayer.texts.get(file));
      replayed.push(one);
    }
  });

  after(() => {
    replayer?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('walks first-parent history and skips the merge and the whitespace-only commit', () => {
    assert.deepStrictEqual(
      replayed.map((c) => c.skipped),
      [undefined, 'formatting', 'merge', undefined],
    );
    assert.deepStrictEqual(replayed[1].tasks, []);
    assert.deepStrictEqual(replayed[2].tasks, []);
    // The merge's changes still reach the index.
    assert.ok(replayer.index.files.has('src/side.ts'));
  });

  it('makes tasks from added product lines only, cut in the file as the commit left it', () => {
    const first = replayed[0];
    const lines = first.tasks.map((t) => `${t.task.metadata.file}:${t.task.metadata.groundtruth_start_lineno}`);
    // app.ts's added row 4 uses a name declared elsewhere; the test file gives no task.
    assert.ok(lines.includes('src/app.ts:4'), lines.join(', '));
    assert.ok(!lines.some((l) => l.startsWith('src/app.test.ts')), lines.join(', '));
    assert.ok(!lines.includes('src/app.ts:3'), 'an unchanged line is no task');
    const total = first.tasks.find((t) => t.task.metadata.groundtruth_start_lineno === 4)!;
    assert.strictEqual(total.task.groundtruth, 'export const total = store.countItems();');
    assert.deepStrictEqual(total.task.metadata.novel_identifiers, ['countItems']);
    assert.ok(total.task.right_context.startsWith('export const shown'));
    // The commit's other files are the recent ones, the file itself never.
    assert.deepStrictEqual(total.recent.map((r) => r.path).sort(), ['src/app.test.ts', 'src/store.ts']);
    assert.ok(total.recent.find((r) => r.path === 'src/store.ts')!.text.includes('countItems'));
    // Written before its use: store.ts comes before app.ts, which imports it.
    assert.ok(first.touched.indexOf('src/store.ts') < first.touched.indexOf('src/app.ts'), first.touched.join());
    const last = replayed[3];
    const lastLines = last.tasks.map((t) => `${t.task.metadata.file}:${t.task.metadata.groundtruth_start_lineno}`);
    assert.ok(lastLines.includes('src/app.ts:6'), lastLines.join(', '));
    assert.ok(!lastLines.includes('src/app.ts:4'), 'a line of an earlier commit is no task again');
    assert.ok(last.touched.includes('src/app.test.ts'), 'a deletion is an index update');
    assert.ok(!replayer.index.files.has('src/app.test.ts'));
    assert.strictEqual(last.updateMs.length, last.touched.length);
  });

  it('leaves the index equal to a fresh build at the last commit', async () => {
    const root = path.join(tmp, 'fresh');
    fs.mkdirSync(root);
    await extractTree(gitDir, head, root);
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
