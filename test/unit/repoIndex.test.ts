import * as assert from 'assert';
import nodeFs, { promises as fs, readdirSync, readFileSync } from 'fs';
import * as path from 'path';
import { IndexClient } from '../../src/retrieval/indexClient';
import { saveIndex, loadIndex } from '../../src/index/persist';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex, FileRefresher } from '../../src/index/workspace';
import { retrieve } from '../../src/retrieval/retrieve';
import { copyFixture, SHOP, tempDir, writeFiles } from '../helpers/fixtures';

async function built(root: string, cacheDir?: string): Promise<RepoIndex> {
  const index = new RepoIndex(root);
  await buildIndex(index, { root, cacheDir });
  return index;
}

/** Indexes a fresh copy of the shop fixture for `check`, then removes the copy. */
async function onShopCopy(check: (index: RepoIndex, dir: string) => Promise<void>): Promise<void> {
  const { dir, cleanup } = await copyFixture(SHOP);
  try {
    await check(await built(dir), dir);
  } finally {
    await cleanup();
  }
}

describe('RepoIndex on a fixture repository', () => {
  it('indexes TS, Python and Go files and skips secrets', async () => {
    const index = await built(SHOP);
    const files = [...index.files.keys()];
    for (const expected of ['src/db/userRepo.ts', 'app/service.py', 'pkg/store/store.go'])
      assert.ok(files.includes(expected), expected);
    assert.ok(
      !files.some((f) => f.includes('.env') || f.includes('credentials') || f.endsWith('.key')),
      files.join(','),
    );
    assert.ok(index.symbols('findByEmail').some((r) => r.symbol.container === 'UserRepo'));
    assert.ok(index.stats().chunks > 5);
  });

  it('resolves imports through relative paths, tsconfig paths and Go packages', async () => {
    const index = await built(SHOP);
    const targets = (file: string) => index.imports(file).flatMap((i) => i.targets);
    assert.deepStrictEqual(targets('src/db/userRepo.ts').sort(), ['src/db/database.ts', 'src/models/user.ts']);
    assert.ok(targets('app/service.py').includes('app/models.py'));
    assert.ok(targets('cmd/shop/main.go').includes('pkg/store/store.go'));
  });

  it('keeps its top-level symbol table equal to the symbol table less the members, through updates', async () => {
    await onShopCopy(async (index) => {
      const agree = (when: string): void => {
        const names = new Set([...index.files.values()].flatMap((r) => r.facts.symbols.map((s) => s.name)));
        for (const name of [...names, 'find', 'gone']) {
          const expected = index.symbols(name).filter((r) => !r.symbol.container);
          assert.deepStrictEqual(index.topLevelSymbols(name), expected, `${name} ${when}`);
        }
      };
      agree('after the build');
      // `find` becomes a member and a top-level function of one file, then only a member.
      await index.update('src/models/user.ts', 'export class Box { find() {} }\nexport function find() {}\n');
      await index.update('src/extra.ts', 'export function find() {}\nexport function gone() {}\n');
      agree('after the updates');
      await index.update('src/models/user.ts', 'export class Box { find() {} }\n');
      index.remove('src/extra.ts');
      agree('after a member-only update and a removal');
      assert.deepStrictEqual(index.topLevelSymbols('gone'), []);
    });
  });

  it('reports which top-level names or imports changed since a version, and forgets the log on a file set change', async () => {
    await onShopCopy(async (index) => {
      const file = 'src/models/user.ts';
      const since = index.exportsVersion;
      await index.update(file, 'export class Box {\n  find() {}\n}\nexport function keep() {}\n');
      const first = index.exportChangesSince(since);
      assert.strictEqual(first?.length, 1);
      // Whatever the file declared before is gone, Box and keep are new; a member is not a top-level name.
      assert.ok(first[0].names?.has('Box') && first[0].names.has('keep') && !first[0].names.has('find'));
      const afterNames = index.exportsVersion;
      await index.update(file, 'export function keep() {\n  return 1;\n}\nexport class Box {\n  find() {}\n}\n');
      assert.strictEqual(index.exportsVersion, afterNames, 'a body edit or a new order changes no shape');
      await index.update(file, "import { x } from './x';\nexport function keep() {}\nexport class Box {}\n");
      const imports = index.exportChangesSince(afterNames);
      assert.deepStrictEqual(
        imports?.map((c) => [c.path, c.names]),
        [[file, undefined]],
        'a change of imports names no names: anything may resolve elsewhere',
      );
      assert.strictEqual(index.exportChangesSince(since)?.length, 2);
      await index.update('src/new.ts', 'export const fresh = 1;\n');
      assert.strictEqual(index.exportChangesSince(since), undefined, 'a new file may change any resolution');
    });
  });

  it('updates, removes and renames single files', async () => {
    await onShopCopy(async (index) => {
      const before = index.stats();
      assert.strictEqual(
        await index.update(
          'src/models/user.ts',
          'export interface User { id: string; }\nexport function hashPassword(p: string) { return p; }\n',
        ),
        true,
      );
      assert.ok(index.symbols('hashPassword').length === 1);
      assert.strictEqual(index.symbols('normalizeEmail').length, 0, 'the old symbol is gone');
      assert.strictEqual(
        await index.update(
          'src/models/user.ts',
          'export interface User { id: string; }\nexport function hashPassword(p: string) { return p; }\n',
        ),
        false,
        'same text is a no-op',
      );
      index.rename('src/models/user.ts', 'src/models/account.ts');
      assert.strictEqual(index.symbols('hashPassword')[0].path, 'src/models/account.ts');
      assert.ok(index.searchChunks('hashPassword', 5).every((h) => h.id.startsWith('src/models/account.ts#')));
      index.remove('src/models/account.ts');
      assert.strictEqual(index.symbols('hashPassword').length, 0);
      assert.strictEqual(index.stats().files, before.files - 1);
    });
  });

  it('takes two updates of one file at once (the editor and the file watcher), the later text winning', async () => {
    await onShopCopy(async (index) => {
      const file = 'src/models/user.ts';
      // The second parse replaces the first one's tree in the parser's cache: the first update must not read it after.
      const results = await Promise.all([
        index.update(file, 'export function first(a: number) { return a; }\n'),
        index.update(file, 'export function second(b: number) { return b; }\n'),
      ]);
      assert.deepStrictEqual(results, [true, true]);
      assert.strictEqual(index.symbols('second').length, 1);
      assert.strictEqual(index.symbols('first').length, 0);
    });
  });
});

describe('single-file refresh (editor and file events)', () => {
  it('indexes editor text, re-reads the disk, and drops secrets, ignored and vanished files', async () => {
    await onShopCopy(async (index, dir) => {
      const refresher = new FileRefresher(index, { root: dir });
      assert.strictEqual(
        await refresher.refresh('src/extra.ts', 'export function addedInEditor(): void {}\n'),
        'updated',
      );
      assert.strictEqual(index.symbols('addedInEditor').length, 1);
      assert.strictEqual(await refresher.refresh('.env.local', 'export const LEAKED = "sk-live-123";\n'), 'secret');
      assert.ok(!index.files.has('.env.local') && index.symbols('LEAKED').length === 0);
      await fs.writeFile(path.join(dir, 'src/db/database.ts'), 'export class Database {\n  vacuum(): void {}\n}\n');
      assert.strictEqual(await refresher.refresh('src/db/database.ts'), 'updated');
      assert.ok(index.symbols('vacuum').length === 1 && index.symbols('insert').length === 0);
      await fs.rm(path.join(dir, 'src/db/database.ts'));
      assert.strictEqual(await refresher.refresh('src/db/database.ts'), 'vanished');
      assert.ok(!index.files.has('src/db/database.ts'));
      assert.strictEqual(await refresher.refresh('node_modules/x/index.ts', 'export const y = 1;\n'), 'excluded');
      assert.strictEqual(await refresher.rename('src/extra.ts', 'config/id_rsa.ts'), 'secret');
      assert.strictEqual(index.symbols('addedInEditor').length, 0);
    });
  });

  it('reloads the project layout when a configuration file changes, is renamed or deleted, not when an excluded one does', async () => {
    await onShopCopy(async (index, dir) => {
      const refresher = new FileRefresher(index, { root: dir });
      const targets = (): string[] => index.imports('src/extra.ts').flatMap((i) => i.targets);
      await refresher.refresh(
        'src/extra.ts',
        "import { User } from '~models/user';\nexport const u: User | undefined = undefined;\n",
      );
      assert.deepStrictEqual(targets(), [], 'no alias yet');
      const tsconfig = path.join(dir, 'tsconfig.json');
      const aliased = '{ "compilerOptions": { "baseUrl": ".", "paths": { "~models/*": ["src/models/*"] } } }\n';
      await fs.mkdir(path.join(dir, 'node_modules', 'x'), { recursive: true });
      await fs.writeFile(path.join(dir, 'node_modules', 'x', 'tsconfig.json'), aliased);
      await refresher.refresh('node_modules/x/tsconfig.json');
      await fs.writeFile(tsconfig, aliased);
      assert.deepStrictEqual(targets(), [], 'the layout is not re-read for an excluded folder');
      assert.strictEqual(await refresher.refresh('tsconfig.json'), 'excluded');
      assert.deepStrictEqual(targets(), ['src/models/user.ts'], 'the new alias resolves');
      await fs.rename(tsconfig, `${tsconfig}.old`);
      await refresher.rename('tsconfig.json', 'tsconfig.json.old');
      assert.deepStrictEqual(targets(), [], 'the alias renamed away no longer resolves');
      await fs.rename(`${tsconfig}.old`, tsconfig);
      await refresher.rename('tsconfig.json.old', 'tsconfig.json');
      assert.deepStrictEqual(targets(), ['src/models/user.ts'], 'renamed back, it resolves again');
      await fs.rm(tsconfig);
      assert.strictEqual(await refresher.remove('tsconfig.json'), false);
      assert.deepStrictEqual(targets(), [], 'the deleted alias no longer resolves');
    });
  });

  it("judges the editor's text as it judges the disk's: minified or binary text is dropped", async () => {
    await onShopCopy(async (index, dir) => {
      const refresher = new FileRefresher(index, { root: dir });
      const file = 'src/services/userService.ts';
      assert.ok(index.files.has(file));
      const minified = 'export function squeezed(a){return a+1};'.repeat(200);
      assert.strictEqual(await refresher.refresh(file, minified), 'minified');
      assert.ok(!index.files.has(file) && index.symbols('squeezed').length === 0);
      assert.strictEqual(await refresher.refresh(file, 'export const x = 1;\0\0\0\n'), 'binary');
      assert.ok(!index.files.has(file));
      assert.strictEqual(await refresher.refresh(file, 'export function readable(): void {}\n'), 'updated');
      assert.strictEqual(index.symbols('readable').length, 1);
    });
  });
});

describe('persistence', () => {
  it('a warm start reloads the cache instead of reparsing', async () => {
    const cache = await tempDir();
    try {
      const cold = new RepoIndex(SHOP);
      const first = await buildIndex(cold, { root: SHOP, cacheDir: cache.dir });
      assert.ok(first.parsed > 5);
      const warm = new RepoIndex(SHOP);
      const second = await buildIndex(warm, { root: SHOP, cacheDir: cache.dir });
      assert.deepStrictEqual(second.cache, { ok: true });
      assert.strictEqual(second.parsed, 0);
      assert.deepStrictEqual(warm.stats(), cold.stats());
      assert.deepStrictEqual(warm.searchChunks('findByEmail', 3), cold.searchChunks('findByEmail', 3));
      // Identifier frequencies come from the cache, not from reading every text: the same counts, a scope's too.
      for (const name of ['findByEmail', 'User', 'repo', 'email', 'absentName']) {
        assert.strictEqual(warm.frequency(name), cold.frequency(name), name);
        assert.strictEqual(warm.frequency(name, 'src/'), cold.frequency(name, 'src/'), name);
      }
      assert.ok(cold.frequency('findByEmail') > 1);
      // Every chunk whole: its id and path, which the cache leaves out, made again.
      const plain = (index: RepoIndex, file: string): unknown => JSON.parse(JSON.stringify(index.facts(file)!.chunks));
      for (const file of cold.files.keys()) assert.deepStrictEqual(plain(warm, file), plain(cold, file), file);
      assert.doesNotMatch(
        await fs.readFile(path.join(cache.dir, 'index.jsonl'), 'utf8'),
        /\.ts#\d+-\d+:/,
        'no chunk id',
      );
      // The whole-file windows come back from the cache (not from the chunks): the same hits, imports included.
      for (const tokens of [
        ['import', 'UserRepo', 'from', 'db'],
        ['findByEmail', 'user', 'repo', 'async', 'return'],
      ]) {
        const hits = cold.similarWindows(tokens, 10);
        assert.ok(hits.length > 0);
        assert.deepStrictEqual(warm.similarWindows(tokens, 10), hits);
      }
      assert.ok(
        cold.similarWindows(['import', 'UserRepo', 'from'], 1)[0].start === 0,
        'a file head matches its imports',
      );
      // Saved whole beside the records, the windows are not repeated in each record's line.
      assert.ok(!(await fs.readFile(path.join(cache.dir, 'index.jsonl'), 'utf8')).includes('"chunkWindows"'));
      // Into an index whose vocabulary numbers words otherwise, the persisted ids are mapped: the same answers.
      const mixed = new RepoIndex(SHOP);
      await mixed.update('zz/other.ts', 'const zzz = repo;\nexport function user(email: string) {}\n');
      assert.deepStrictEqual(await loadIndex(mixed, cache.dir), { ok: true });
      const tokens = ['findByEmail', 'user', 'repo', 'async', 'return'];
      const skip = (file: string): boolean => file === 'zz/other.ts';
      assert.deepStrictEqual(mixed.similarWindows(tokens, 10, skip), cold.similarWindows(tokens, 10));
      const query = (index: RepoIndex) => index.windowQuery(tokens);
      for (const file of cold.files.keys()) {
        for (const chunk of cold.facts(file)!.chunks) {
          const loaded = mixed.chunk(chunk.id)!;
          assert.deepStrictEqual(mixed.bestWindow(loaded, query(mixed)), cold.bestWindow(chunk, query(cold)), chunk.id);
        }
      }
      for (const index of [cold, warm, mixed]) index.dispose();
    } finally {
      await cache.cleanup();
    }
  });

  it('a start leaves out unread a file it left out before for what it holds, until the file changes (M19)', async () => {
    const { dir, cleanup } = await tempDir();
    const cache = await tempDir();
    const minified = path.join(dir, 'bundle.js');
    // The module's own function, counted while the index builds.
    const fsModule = nodeFs as unknown as { openSync: (...args: Parameters<typeof nodeFs.openSync>) => number };
    const open = fsModule.openSync;
    const opened: string[] = [];
    fsModule.openSync = (...args) => {
      opened.push(String(args[0]));
      return open(...args);
    };
    try {
      const line = `var a=${'[1,2,3],'.repeat(200)}0;`;
      await writeFiles(dir, { 'app.ts': 'export const app = 1;\n', 'bundle.js': `${line}\n${line}\n` });
      const build = async (): Promise<{ parsed: number; skipped: string[]; read: boolean }> => {
        opened.length = 0;
        const index = new RepoIndex(dir);
        const report = await buildIndex(index, { root: dir, cacheDir: cache.dir });
        index.dispose();
        const skipped = report.skipped.map((s) => `${s.path}: ${s.reason}`);
        return { parsed: report.parsed, skipped, read: opened.includes(minified) };
      };
      const left = ['bundle.js: minified'];
      assert.deepEqual(await build(), { parsed: 1, skipped: left, read: true });
      assert.deepEqual(await build(), { parsed: 0, skipped: left, read: false }, 'remembered in the cache');
      await fs.writeFile(minified, 'export const readable = 2;\n');
      assert.deepEqual(await build(), { parsed: 1, skipped: [], read: true }, 'changed: read and indexed');
      await fs.writeFile(minified, `${line}\n${line}\n`);
      await fs.utimes(minified, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
      assert.deepEqual(await build(), { parsed: 0, skipped: left, read: true }, 'minified again: its record goes');
      assert.deepEqual(await build(), { parsed: 0, skipped: left, read: false });
    } finally {
      fsModule.openSync = open;
      await cleanup();
      await cache.cleanup();
    }
  });

  it('a warm start reads no unchanged file, non-ASCII text included, and keeps the mtimes a checkout renewed', async () => {
    const { dir, cleanup } = await tempDir();
    const cache = await tempDir();
    try {
      await writeFiles(dir, {
        'café.ts': 'export const menu = "crème brûlée";\n',
        'plain.ts': 'export const a = 1;\n',
        // Bytes that are not the text they decode to: told unchanged by the text's hash, not the bytes'.
        'bom.ts': '\uFEFFexport const b = 2;\n',
      });
      await fs.writeFile(path.join(dir, 'latin1.ts'), Buffer.from('// caf\xe9\nexport const c = 3;\n', 'latin1'));
      const files = ['café.ts', 'plain.ts', 'bom.ts', 'latin1.ts'];
      const build = async (): Promise<{ parsed: number; verified: number }> => {
        const index = new RepoIndex(dir);
        const { parsed, verified } = await buildIndex(index, { root: dir, cacheDir: cache.dir });
        index.dispose();
        return { parsed, verified };
      };
      assert.deepEqual(await build(), { parsed: 4, verified: 0 });
      assert.deepEqual(await build(), { parsed: 0, verified: 0 }, 'size in bytes, as the scan reads it');
      // A branch switched away and back: new mtimes, the same content.
      const later = new Date(Date.now() + 60_000);
      for (const file of files) await fs.utimes(path.join(dir, file), later, later);
      assert.deepEqual(await build(), { parsed: 0, verified: 4 });
      assert.deepEqual(await build(), { parsed: 0, verified: 0 }, 'the renewed mtimes were saved');
    } finally {
      await cleanup();
      await cache.cleanup();
    }
  });

  it('a cache saved while the index changed counts the identifier frequencies of the records it holds', async () => {
    const cache = await tempDir();
    try {
      const index = await built(SHOP);
      const last = [...index.files.keys()].at(-1)!;
      const own = index.facts(last)!.symbols.find((s) => index.frequency(s.name) === 1)!.name;
      // The last file goes while the first is written (as a query's update would): the save holds it no more.
      const textBytes = index.textBytes.bind(index);
      index.textBytes = (chunks) => {
        index.remove(last);
        return textBytes(chunks);
      };
      await saveIndex(index, cache.dir);
      const warm = new RepoIndex(SHOP);
      assert.deepStrictEqual(await loadIndex(warm, cache.dir), { ok: true });
      assert.strictEqual(warm.files.has(last), false);
      assert.strictEqual(warm.frequency(own), 0, own);
      assert.strictEqual(warm.frequency('findByEmail'), index.frequency('findByEmail'));
      // The window stores were not the records' once one changed: the body was written again with each record's own.
      assert.ok((await fs.readFile(path.join(cache.dir, 'index.jsonl'), 'utf8')).includes('"chunkWindows"'));
      const tokens = ['findByEmail', 'user', 'repo', 'async', 'return'];
      assert.ok(index.similarWindows(tokens, 10).length > 0);
      assert.deepStrictEqual(warm.similarWindows(tokens, 10), index.similarWindows(tokens, 10));
      for (const i of [index, warm]) i.dispose();
    } finally {
      await cache.cleanup();
    }
  });

  it('a corrupted, truncated or old cache is discarded and rebuilt', async () => {
    const cache = await tempDir();
    try {
      await saveIndex(await built(SHOP), cache.dir);
      const body = path.join(cache.dir, 'index.jsonl');
      const meta = path.join(cache.dir, 'index.meta.json');
      const goodBody = await fs.readFile(body, 'utf8');
      const goodMeta = await fs.readFile(meta, 'utf8');
      const variants: [string, string][] = [
        [goodBody.slice(0, goodBody.length / 2), goodMeta],
        [goodBody.replace('"findByEmail"', '"findByEmaiX"'), goodMeta],
        [goodBody, goodMeta.replace(/"version":\d+/, '"version":1')],
        [goodBody, 'not json at all'],
      ];
      for (const [bodyText, metaText] of variants) {
        await fs.writeFile(body, bodyText);
        await fs.writeFile(meta, metaText);
        const index = new RepoIndex(SHOP);
        const result = await loadIndex(index, cache.dir);
        assert.strictEqual(result.ok, false);
        assert.strictEqual(index.files.size, 0, 'nothing from a bad cache is trusted');
        const report = await buildIndex(index, { root: SHOP, cacheDir: cache.dir });
        assert.ok(report.parsed > 5 && index.symbols('findByEmail').length > 0);
      }
      // The lexical index's side file, one byte changed: the records are not trusted without it.
      await saveIndex(await built(SHOP), cache.dir);
      const lexical = path.join(cache.dir, 'lexical.bin');
      const bytes = await fs.readFile(lexical);
      bytes[bytes.length >> 1] ^= 1;
      await fs.writeFile(lexical, bytes);
      const index = new RepoIndex(SHOP);
      assert.deepEqual(await loadIndex(index, cache.dir), {
        ok: false,
        reason: 'corrupt cache: lexical index checksum mismatch',
      });
      assert.strictEqual(index.files.size, 0);
      // The texts' and the window stores' side files, one byte changed, then cut short.
      for (const [file, what] of [
        ['texts.bin', 'texts'],
        ['windows.bin', 'window stores'],
      ]) {
        await saveIndex(await built(SHOP), cache.dir);
        const side = path.join(cache.dir, file);
        const good = await fs.readFile(side);
        const changed = Buffer.from(good);
        changed[changed.length >> 1] ^= 1;
        for (const [content, reason] of [
          [changed, `corrupt cache: ${what} checksum mismatch`],
          [good.subarray(0, good.length >> 1), `corrupt cache: ${what} truncated`],
        ] as const) {
          await fs.writeFile(side, content);
          const again = new RepoIndex(SHOP);
          assert.deepEqual(await loadIndex(again, cache.dir), { ok: false, reason }, file);
          assert.strictEqual(again.files.size, 0);
        }
      }
    } finally {
      await cache.cleanup();
    }
  });
});

describe('robustness', () => {
  it('survives huge, binary, invalid UTF-8, symlink loops and empty repositories', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeFiles(dir, {
        'ok.ts': 'export function fine(): number { return 1; }\n',
        'huge.ts': `export const big = [${'1,'.repeat(2_600_000)}];\n`,
        'blob.ts': Buffer.from([0x00, 0x01, 0x02, 0xff, 0x00, 0x10]),
        'latin1.ts': Buffer.concat([
          Buffer.from('export const caf'),
          Buffer.from([0xe9]),
          Buffer.from(' = "x";\nexport function brew(): void {}\n'),
        ]),
      });
      await fs.symlink(dir, path.join(dir, 'loop'));
      const index = new RepoIndex(dir);
      const report = await buildIndex(index, { root: dir });
      assert.ok(index.symbols('fine').length === 1);
      assert.ok(index.symbols('brew').length === 1, 'invalid UTF-8 text is still indexed');
      assert.ok(!index.files.has('huge.ts') && !index.files.has('blob.ts'));
      const reasons = new Map(report.skipped.map((s) => [s.path, s.reason]));
      assert.strictEqual(reasons.get('huge.ts'), 'too-large');
      assert.strictEqual(reasons.get('blob.ts'), 'binary');

      const empty = await tempDir();
      const emptyIndex = new RepoIndex(empty.dir);
      const emptyReport = await buildIndex(emptyIndex, { root: empty.dir });
      assert.strictEqual(emptyReport.files, 0);
      assert.deepStrictEqual(
        retrieve(emptyIndex, { path: 'a.ts', text: 'foo.', cursor: { line: 0, character: 4 } }).snippets,
        [],
      );
      await empty.cleanup();
    } finally {
      await cleanup();
    }
  });

  it('builds in a process of its own at low priority, every thread of it, and the host keeps its own', async function () {
    if (process.platform !== 'linux') this.skip();
    const niceOf = (pid: number | string, task: string): number =>
      Number(
        readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[16],
      );
    const hostThreads = (): Map<string, number> =>
      new Map(readdirSync('/proc/self/task').map((task) => [task, niceOf('self', task)]));
    const host = hostThreads();
    const client = new IndexClient();
    try {
      await client.build({ root: SHOP });
      const pid = client.pid;
      assert.ok(pid && pid !== process.pid, `the index runs in a process of its own (${pid})`);
      const tasks = readdirSync(`/proc/${pid}/task`);
      const nice = Math.max(niceOf('self', String(process.pid)), 10);
      assert.deepStrictEqual(
        tasks.map((task) => niceOf(pid, task)),
        tasks.map(() => nice),
        `every thread of the index process runs at nice ${nice}`,
      );
      for (const [task, before] of host)
        if (hostThreads().has(task)) assert.equal(niceOf('self', task), before, `host thread ${task} is untouched`);
    } finally {
      await client.dispose();
    }
  });

  it('a cancelled build leaves a usable index, and the next build parses only the files it had not reached', async function () {
    this.timeout(120_000);
    const { dir, cleanup } = await tempDir();
    const client = new IndexClient();
    try {
      const files = Object.fromEntries(
        Array.from({ length: 600 }, (_, i) => [
          `src/m${i}.ts`,
          `import { helper${(i + 1) % 600} } from './m${(i + 1) % 600}';\nexport function helper${i}(x: number): number {\n  return helper${(i + 1) % 600}(x) + ${i};\n}\n`,
        ]),
      );
      await writeFiles(dir, files);
      let cancelled = false;
      client.onProgress = (done) => {
        if (done > 0 && !cancelled) {
          cancelled = true;
          void client.cancelBuild();
        }
      };
      await assert.rejects(client.build({ root: dir }), /cancelled/);
      const partial = await client.stats();
      assert.ok(partial.files > 0 && partial.files < 600, `${partial.files} files indexed before the cancel`);
      const request = { path: 'src/new.ts', text: 'helper', cursor: { line: 0, character: 6 } };
      assert.ok(Array.isArray((await client.retrieve(request)).snippets), 'retrieval is served after the cancel');
      client.onProgress = () => undefined;
      const report = await client.build({ root: dir });
      assert.strictEqual(report.files, 600);
      assert.strictEqual(report.parsed, 600 - partial.files, 'only the files the cancelled build had not reached');
    } finally {
      await client.dispose();
      await cleanup();
    }
  });

  it('200 concurrent retrievals during a reindex never fail nor serve a stale file', async function () {
    this.timeout(120_000);
    const { dir, cleanup } = await copyFixture(SHOP);
    const client = new IndexClient();
    try {
      await client.build({ root: dir });
      const rebuild = client.build({ root: dir, fresh: true });
      const request = {
        path: 'src/services/userService.ts',
        text: 'import { UserRepo } from "../db/userRepo";\nclass S {\n  constructor(private repo: UserRepo) {}\n  run() {\n    this.repo.\n  }\n}\n',
        cursor: { line: 4, character: 14 },
      };
      const results = await Promise.all(Array.from({ length: 200 }, () => client.retrieve(request)));
      assert.strictEqual(results.length, 200);
      await client.update('src/db/userRepo.ts', 'export class UserRepo {\n  renamedFinder(): void {}\n}\n');
      const after = await client.retrieve(request);
      const text = after.snippets.map((s) => s.text).join('\n');
      assert.ok(text.includes('renamedFinder'), 'the update is served');
      assert.ok(!text.includes('findByEmail'), 'the old text of the file is never served after its update');
      const report = await rebuild;
      // Every file is parsed again, but for the one the editor changed, when that came before the build reached it.
      assert.ok(report.parsed >= report.files - 1 && report.parsed > 0, `${report.parsed} of ${report.files} parsed`);
      const kept = (await client.retrieve(request)).snippets.map((s) => s.text).join('\n');
      assert.ok(
        kept.includes('renamedFinder'),
        "the rebuild did not overwrite the editor's newer text with the disk's",
      );
    } finally {
      await client.dispose();
      await cleanup();
    }
  });
});
