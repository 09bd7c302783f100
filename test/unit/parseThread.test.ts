/**
 * The build's parser thread (decisions M10, M14): the facts it gives are the ones a parse on the index's own thread
 * gives, and the listing a walk on it gives; a thread that cannot start or has ended answers nothing (the build then
 * parses or walks itself), and a build large enough to use it indexes every file as one without it would.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { extractFacts } from '../../src/index/extract';
import { languageForPath } from '../../src/index/languages';
import { SourceParser } from '../../src/index/parser';
import { ParseThread } from '../../src/index/parseThread';
import { RepoIndex } from '../../src/index/repoIndex';
import { scanWorkspace } from '../../src/index/scan';
import { SourceLines } from '../../src/index/sourceLines';
import { buildIndex } from '../../src/index/workspace';
import { FIXTURES, tempDir, writeFiles } from '../helpers/fixtures';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && languageForPath(e.name)?.wasm).map((e) => path.join(e.parentPath, e.name));
}

describe('parser thread', function () {
  this.timeout(60_000);

  it('gives the facts a parse on this thread gives, for every fixture file', async () => {
    const thread = new ParseThread();
    const parser = new SourceParser();
    try {
      const files = await sourceFiles(path.join(FIXTURES, 'repos'));
      assert.ok(files.length > 20);
      for (const file of files) {
        const text = await fs.readFile(file, 'utf8');
        const key = path.relative(FIXTURES, file);
        const spec = languageForPath(key)!;
        const here = await parser.parseWith(key, spec, text, (tree) => extractFacts(key, spec, text, tree));
        assert.deepEqual(await thread.facts(key, text), here, key);
      }
    } finally {
      parser.dispose();
      await thread.close();
    }
  });

  it('lists a workspace as a walk on this thread does, and nothing for a folder it cannot walk', async () => {
    const thread = new ParseThread();
    try {
      const options = { root: path.join(FIXTURES, 'repos'), excludeGlobs: ['**/*.md'], maxFileBytes: 4096 };
      const here = await scanWorkspace(options);
      assert.ok(here.files.length > 20 && here.skipped.length > 0);
      assert.deepEqual(await thread.scan(options), here);
      // Asked to hash (a shared cache's start, M17): the same listing, each file with the hash of its bytes.
      const hashed = await thread.scan(options, true);
      assert.deepEqual(
        hashed?.files.map(({ hash, ...file }) => file),
        here.files,
      );
      for (const file of hashed!.files) {
        const bytes = await fs.readFile(path.join(options.root, file.path));
        assert.equal(file.hash, SourceLines.hash(bytes), file.path);
      }
      assert.equal(await thread.scan({ root: path.join(FIXTURES, 'no-such-folder') }, true), undefined);
      assert.ok(thread.alive, 'a failed walk leaves the thread to parse');
    } finally {
      await thread.close();
    }
  });

  it('starts its thread with the first file it is asked to parse', async () => {
    const thread = new ParseThread();
    const started = () => (thread as unknown as { worker?: unknown }).worker !== undefined;
    try {
      assert.equal(started(), false, 'a build whose files are all cached parses none');
      assert.ok(await thread.facts('a.ts', 'export const a = 1;'));
      assert.equal(started(), true);
    } finally {
      await thread.close();
    }
  });

  it('answers nothing once closed, or when its script cannot start', async () => {
    const thread = new ParseThread();
    await thread.close();
    assert.equal(thread.alive, false);
    assert.equal(await thread.facts('a.ts', 'export const a = 1;'), undefined);
    assert.equal(await thread.scan({ root: FIXTURES }), undefined);
    const missing = new ParseThread(path.join(FIXTURES, 'no-such-worker.js'));
    assert.equal(await missing.facts('a.ts', 'export const a = 1;'), undefined);
    await missing.close();
  });

  it('indexes a build of many files as parsing each file here does', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const files: Record<string, string> = {};
      for (let i = 0; i < 260; i++)
        files[`src/m${i}.ts`] =
          `import { f${(i + 1) % 260} } from './m${(i + 1) % 260}';\nexport function f${i}(x: number): number {\n  return f${(i + 1) % 260}(x) + ${i};\n}\n`;
      await writeFiles(dir, files);
      const built = new RepoIndex(dir);
      const report = await buildIndex(built, { root: dir, fresh: true });
      const one = new RepoIndex(dir);
      for (const key of Object.keys(files)) await one.update(key, files[key]);
      assert.equal(report.parsed, 260);
      for (const key of Object.keys(files)) assert.deepEqual(built.facts(key), one.facts(key), key);
      built.dispose();
      one.dispose();
    } finally {
      await cleanup();
    }
  });
});
