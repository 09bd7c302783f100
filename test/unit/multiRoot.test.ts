import * as assert from 'assert';
import * as path from 'path';
import { RepoIndex } from '../../src/index/repoIndex';
import { WorkspaceRoots, type RootFolder } from '../../src/index/roots';
import { buildIndex, FileRefresher } from '../../src/index/workspace';
import { retrieve } from '../../src/retrieval/retrieve';
import { FIXTURES, tempDir, writeFiles } from '../helpers/fixtures';

const MULTIROOT = path.join(FIXTURES, 'repos', 'multiroot');
const FOLDERS: RootFolder[] = [
  { name: 'app', path: path.join(MULTIROOT, 'app') },
  { name: 'ledger', path: path.join(MULTIROOT, 'ledger') },
];

/** app/src/index.ts with the cursor after `ledger.` on a new line of closeMonth. */
const APP_LINE = `import { Ledger } from '@acme/ledger';

export function closeMonth(ledger: Ledger, account: string): number {
  return ledger.
}
`;

/** Folders `a` and `b` (and `c` when given) in a temporary folder, for `check`. */
async function withFolders(
  files: Record<string, Record<string, string>>,
  check: (folders: RootFolder[]) => Promise<void>,
): Promise<void> {
  const { dir, cleanup } = await tempDir();
  try {
    const folders = Object.keys(files).map((name) => ({ name, path: path.join(dir, name) }));
    for (const folder of folders) await writeFiles(folder.path, files[folder.name]);
    await check(folders);
  } finally {
    await cleanup();
  }
}

describe('multi-root workspaces', () => {
  it('indexes every folder, each file under its folder name', async () => {
    const index = new RepoIndex(FOLDERS);
    try {
      const report = await buildIndex(index, { root: FOLDERS });
      assert.deepStrictEqual([...index.files.keys()].sort(), ['app/src/index.ts', 'ledger/src/index.ts']);
      assert.strictEqual(report.files, 2, 'the report counts the files of both folders');
    } finally {
      index.dispose();
    }
  });

  it("retrieves the second folder's definition for a line in the first, naming its folder", async () => {
    const index = new RepoIndex(FOLDERS);
    try {
      await buildIndex(index, { root: FOLDERS });
      assert.deepStrictEqual(index.resolve('app/src/index.ts', '@acme/ledger'), ['ledger/src/index.ts']);
      const result = retrieve(index, { path: 'app/src/index.ts', text: APP_LINE, cursor: { line: 3, character: 16 } });
      const definition = result.snippets.find((s) => s.retriever === 'definition');
      assert.ok(definition, `no definition among ${result.snippets.map((s) => s.path).join(', ')}`);
      assert.strictEqual(definition.path, 'ledger/src/index.ts');
      assert.match(definition.text, /openEntries\(\): Entry\[\]/);
    } finally {
      index.dispose();
    }
  });

  it("keeps each folder's ignore and secret rules to its own files", async () => {
    const files = {
      a: {
        '.gitignore': 'gen/\n',
        'gen/made.ts': 'export const made = 1;\n',
        'private/key.ts': 'export const k = 1;\n',
      },
      b: { 'gen/kept.ts': 'export const kept = 1;\n', 'private/key.ts': 'export const k = 2;\n', 'x.ts': '' },
    };
    await withFolders(files, async (folders) => {
      const index = new RepoIndex(folders);
      try {
        const options = { root: folders, secretGlobs: ['private/**'] };
        await buildIndex(index, options);
        assert.deepStrictEqual([...index.files.keys()].sort(), ['b/gen/kept.ts', 'b/x.ts']);
        const refresher = new FileRefresher(index, options);
        assert.strictEqual(await refresher.refresh('a/gen/made.ts'), 'gitignored');
        assert.strictEqual(await refresher.refresh('b/private/key.ts'), 'secret');
        assert.strictEqual(await refresher.refresh('b/gen/kept.ts'), 'unchanged');
        assert.strictEqual(await refresher.refresh('c/x.ts'), 'excluded', 'a folder the index does not cover');
      } finally {
        index.dispose();
      }
    });
  });

  it('serves no cache of other folders: a workspace of a and b, then of a alone', async () => {
    const files = { a: { 'a.ts': 'export const a = 1;\n' }, b: { 'b.ts': 'export const b = 1;\n' } };
    await withFolders(files, async (folders) => {
      const cache = await tempDir();
      const both = new RepoIndex(folders);
      const alone = new RepoIndex(folders[0].path);
      try {
        await buildIndex(both, { root: folders, cacheDir: cache.dir });
        const report = await buildIndex(alone, { root: folders[0].path, cacheDir: cache.dir });
        assert.deepStrictEqual(report.cache, { ok: false, reason: 'cache belongs to other folders' });
        assert.deepStrictEqual([...alone.files.keys()], ['a.ts']);
        const again = new RepoIndex(folders);
        await buildIndex(again, { root: folders, cacheDir: cache.dir });
        again.dispose();
        const reopened = new RepoIndex(folders);
        const warm = await buildIndex(reopened, { root: folders, cacheDir: cache.dir });
        reopened.dispose();
        assert.deepStrictEqual(warm.cache, { ok: true }, 'the same folders load their cache');
      } finally {
        both.dispose();
        alone.dispose();
        await cache.cleanup();
      }
    });
  });

  it('adds and drops folders without parsing the others again', async () => {
    const files = {
      a: { 'a.ts': 'export const a = 1;\n' },
      b: { 'b.ts': 'export const b = 1;\n' },
      c: { 'c.ts': 'export const c = 1;\n' },
    };
    await withFolders(files, async ([a, b, c]) => {
      const index = new RepoIndex([a, b]);
      try {
        await buildIndex(index, { root: [a, b] });
        const added = new WorkspaceRoots([a, b, c]);
        assert.ok(index.roots.keepsKeysOf(added));
        index.moveTo(added);
        const grown = await buildIndex(index, { root: [a, b, c] });
        assert.strictEqual(grown.parsed, 1);
        assert.deepStrictEqual([...index.files.keys()].sort(), ['a/a.ts', 'b/b.ts', 'c/c.ts']);
        index.moveTo(new WorkspaceRoots([a, c]));
        const shrunk = await buildIndex(index, { root: [a, c] });
        assert.deepStrictEqual([shrunk.parsed, shrunk.removed], [0, 1]);
        assert.deepStrictEqual([...index.files.keys()].sort(), ['a/a.ts', 'c/c.ts']);
        assert.ok(!index.roots.keepsKeysOf(new WorkspaceRoots(a.path)), 'one folder left: its files lose the name');
        assert.ok(!index.roots.keepsKeysOf(new WorkspaceRoots([{ ...a, path: b.path }, c])), 'a name moved');
      } finally {
        index.dispose();
      }
    });
  });
});

describe('WorkspaceRoots', () => {
  const roots = new WorkspaceRoots([
    { name: 'web', path: '/w/web' },
    { name: 'web', path: '/w/other/web' },
    { name: 'a/b', path: '/w/web/packages/inner' },
  ]);

  it('names folders uniquely, without a slash', () => {
    assert.deepStrictEqual(
      roots.folders.map((f) => f.name),
      ['web', 'web (2)', 'a-b'],
    );
  });

  it('maps keys to files and back, a nested folder owning its files', () => {
    assert.strictEqual(roots.keyOf('/w/other/web/src/x.ts'), 'web (2)/src/x.ts');
    assert.strictEqual(roots.keyOf('/w/web/packages/inner/y.ts'), 'a-b/y.ts');
    assert.strictEqual(roots.keyOf('/w/elsewhere.ts'), undefined);
    assert.strictEqual(roots.absolute('web/src/x.ts'), path.join('/w/web', 'src/x.ts'));
    assert.strictEqual(roots.absolute('src/x.ts'), undefined);
    assert.match(roots.relative('/w/elsewhere.ts'), /^\.\./);
  });

  it('keeps a single folder keyed as before: by the path within it', () => {
    const single = new WorkspaceRoots('/w/web');
    assert.strictEqual(single.keyOf('/w/web/src/x.ts'), 'src/x.ts');
    assert.strictEqual(single.id, path.resolve('/w/web'));
  });
});
