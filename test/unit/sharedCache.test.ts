/**
 * A team's index (decision D29): a cache written by one checkout warm-starts a clone in another folder, which
 * parses only the files whose content differs; a shared cache that cannot serve is said and a full build follows.
 */
import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import nodeFs, { promises as fs } from 'fs';
import * as path from 'path';
import { cachedRecords, saveSharedIndex } from '../../src/index/persist';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex, type BuildReport } from '../../src/index/workspace';
import { copyFixture, FIXTURES, SHOP, tempDir, writeFiles } from '../helpers/fixtures';

const CLI = path.resolve(__dirname, '../../src/cli.js');
const USER = 'src/models/user.ts';

/** A checkout of the shop fixture in a folder of its own (fresh mtimes), removed after `use`. */
async function withClone<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const clone = await copyFixture(SHOP);
  try {
    return await use(clone.dir);
  } finally {
    await clone.cleanup();
  }
}

/** Builds `root` with an empty cache folder of its own and `sharedCache`; the index is disposed after `check`. */
async function buildClone(
  root: string,
  sharedCache: string,
  check: (report: BuildReport, index: RepoIndex, cacheDir: string) => Promise<void>,
): Promise<void> {
  const own = await tempDir();
  const index = new RepoIndex(root);
  try {
    await check(await buildIndex(index, { root, cacheDir: own.dir, sharedCache }), index, own.dir);
  } finally {
    index.dispose();
    await own.cleanup();
  }
}

describe('shared index cache', () => {
  let temp: { dir: string; cleanup: () => Promise<void> };
  let shared: string;
  /** How many files the shop fixture indexes. */
  let files: number;

  before(async () => {
    temp = await tempDir('repogate-shared-');
    shared = path.join(temp.dir, 'shop.cache');
    await withClone(async (dir) => {
      const index = new RepoIndex(dir);
      files = (await buildIndex(index, { root: dir })).files;
      await saveSharedIndex(index, shared);
      index.dispose();
    });
  });
  after(() => temp.cleanup());

  it('holds no absolute path and no secret', async () => {
    const text = await fs.readFile(shared, 'utf8');
    assert.doesNotMatch(text, /repogate-test-/, 'paths are relative to the folder');
    assert.doesNotMatch(text, /sk-live/, 'the .env file is never indexed');
  });

  it('warm-starts a clone in another folder: only the changed and the new file are parsed', async () => {
    await withClone(async (dir) => {
      const user = path.join(dir, USER);
      // The same size: the content hash, not the size, tells the change.
      const text = await fs.readFile(user, 'utf8');
      await fs.writeFile(user, text.replace('normalizeEmail', 'normaliseEmail'));
      await fs.writeFile(path.join(dir, 'src/extra.ts'), 'export function extraThing(): number {\n  return 1;\n}\n');
      await buildClone(dir, shared, async (report, index, cacheDir) => {
        assert.deepEqual(report.sharedCache, { ok: true });
        assert.equal(report.parsed, 2);
        assert.equal(report.verified, files - 1);
        assert.equal(report.files, files + 1);
        assert.equal(index.symbols('normalizeEmail').length, 0, 'the changed file is parsed again');
        assert.deepEqual(
          index.symbols('normaliseEmail').map((ref) => ref.path),
          [USER],
        );
        assert.equal(index.symbols('extraThing').length, 1);
        const cold = new RepoIndex(dir);
        await buildIndex(cold, { root: dir });
        assert.deepEqual(index.stats(), cold.stats());
        assert.deepEqual(index.searchChunks('findByEmail', 3), cold.searchChunks('findByEmail', 3));
        cold.dispose();

        // The clone saved a cache of its own, with its mtimes: the next start reads no file.
        const again = new RepoIndex(dir);
        const next = await buildIndex(again, { root: dir, cacheDir, sharedCache: shared });
        again.dispose();
        assert.deepEqual(next.cache, { ok: true });
        assert.equal(next.sharedCache, undefined);
        assert.equal(next.parsed + next.verified, 0);
      });
    });
  });

  it('from 5,000 files, hashes them on the walking thread: a file whose hash matches is not read here', async function () {
    this.timeout(120_000);
    const made = await tempDir('repogate-shared-many-');
    const copy = await tempDir('repogate-shared-many-copy-');
    // The module's own function, counted while the clone starts: the walking thread's reads are not seen here.
    const fsModule = nodeFs as unknown as { openSync: (...args: Parameters<typeof nodeFs.openSync>) => number };
    const open = fsModule.openSync;
    try {
      const many: Record<string, string> = {};
      for (let i = 0; i < 5000; i++) many[`src/p${i % 50}/m${i}.ts`] = `export const v${i} = ${i};\n`;
      await writeFiles(made.dir, many);
      const built = new RepoIndex(made.dir);
      await buildIndex(built, { root: made.dir, fresh: true });
      const file = path.join(temp.dir, 'many.cache');
      await saveSharedIndex(built, file);
      built.dispose();
      await writeFiles(copy.dir, { ...many, 'src/p1/m1.ts': 'export const changed = 1;\n' });
      const opened: string[] = [];
      fsModule.openSync = (...args) => {
        if (String(args[0]).startsWith(copy.dir)) opened.push(String(args[0]));
        return open(...args);
      };
      await buildClone(copy.dir, file, async (report, index) => {
        assert.deepEqual(report.sharedCache, { ok: true });
        assert.equal(report.parsed, 1);
        assert.equal(report.verified, 4999);
        assert.equal(index.symbols('changed').length, 1);
        assert.equal(index.symbols('v1').length, 0);
      });
      assert.deepEqual(
        opened.filter((p) => p.endsWith('.ts')),
        [path.join(copy.dir, 'src/p1/m1.ts')],
        'only the changed file is read on the index thread',
      );
    } finally {
      fsModule.openSync = open;
      await made.cleanup();
      await copy.cleanup();
    }
  });

  it('tells how many files a cache holds from its metadata or first line alone, and 0 for anything else', async () => {
    assert.deepEqual(await cachedRecords(undefined, shared), { records: files, shared: true });
    await withClone((dir) =>
      buildClone(dir, shared, async (_report, _index, cacheDir) => {
        assert.deepEqual(await cachedRecords(cacheDir, shared), { records: files, shared: false }, 'its own first');
      }),
    );
    const text = path.join(temp.dir, 'notes.txt');
    await fs.writeFile(text, '{"records": 9}\nnot a cache\n');
    assert.deepEqual(
      await cachedRecords(path.join(temp.dir, 'missing'), text),
      { records: 9, shared: true },
      'a count, which the load then checks',
    );
    assert.deepEqual(await cachedRecords(temp.dir, path.join(temp.dir, 'missing')), { records: 0, shared: false });
  });

  it('a corrupt, old, foreign or missing shared cache is said, and every file is parsed', async () => {
    const good = await fs.readFile(shared, 'utf8');
    const [header] = good.split('\n', 1);
    // Whichever part a change lands in (the texts are checked first), it is found.
    const damaged = /^(cache checksum mismatch|corrupt cache: texts (checksum mismatch|truncated))$/;
    const variants: [string, string | undefined, RegExp][] = [
      ['truncated', good.slice(0, good.length / 2), damaged],
      ['edited', good.replace('findByEmail', 'findByEmaiX'), damaged],
      ['old', good.replace(/"version":\d+/, '"version":1'), /^built by index version 1, this is \d+$/],
      ['secret', 'SHOP_API_TOKEN=sk-live-1234\n', /^not a RepoGate index cache$/],
      ['empty', '', /^not a RepoGate index cache$/],
      ['other layout', good.replace('"layout":""', '"layout":"[\\"a\\",\\"b\\"]"'), /^built for the folders a, b/],
      ['short', `${header}\n`, /^corrupt cache: texts truncated$/],
      ['missing', undefined, /^no such file$/],
    ];
    await withClone(async (dir) => {
      for (const [name, content, reason] of variants) {
        const file = path.join(temp.dir, `${name}.cache`);
        if (content !== undefined) await fs.writeFile(file, content);
        await buildClone(dir, file, async (report, index) => {
          assert.equal(report.sharedCache?.ok, false, name);
          const said = report.sharedCache && !report.sharedCache.ok ? report.sharedCache.reason : '';
          assert.match(said, reason, name);
          assert.doesNotMatch(said, /sk-live/, 'nothing of the file is quoted');
          assert.equal(report.parsed, files, name);
          assert.equal(index.symbols('findByEmail').length > 0, true, name);
        });
      }
    });
  });

  it('a shared cache of another repository is said and not used', async () => {
    const other = path.join(FIXTURES, 'repos', 'goweb');
    await buildClone(other, shared, async (report, index) => {
      assert.equal(report.sharedCache?.ok, false);
      assert.match(
        report.sharedCache && !report.sharedCache.ok ? report.sharedCache.reason : '',
        /^of another repository: \d+ of its \d+ files lie at this workspace's paths$/,
      );
      assert.equal(report.parsed, report.files);
      assert.equal(index.facts(USER), undefined, "none of the other repository's files is kept");
    });
  });

  it('repogate build-cache writes it and repogate index --shared-cache starts from it', async function () {
    this.timeout(60_000);
    const out = path.join(temp.dir, 'cli.cache');
    const env = { ...process.env, XDG_CACHE_HOME: path.join(temp.dir, 'xdg') };
    const built = spawnSync(process.execPath, [CLI, 'build-cache', SHOP, '--out', out], { encoding: 'utf8', env });
    assert.equal(built.status, 0, built.stderr);
    assert.match(built.stderr, new RegExp(`wrote .*cli\\.cache: ${files} files`));
    await withClone(async (dir) => {
      const args = [CLI, 'index', dir, '--shared-cache', out, '--json'];
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', env });
      assert.equal(run.status, 0, run.stderr);
      const summary = JSON.parse(run.stdout) as Record<string, unknown>;
      assert.deepEqual(
        { parsed: summary.parsed, verified: summary.verified, shared: summary.shared_cache },
        { parsed: 0, verified: files, shared: 'loaded' },
      );
    });
  });
});
