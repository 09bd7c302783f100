import * as assert from 'assert';
import { RepoIndex } from '../../src/index/repoIndex';
import { memorySource } from '../../src/index/byteSource';
import { buildIndex } from '../../src/index/workspace';
import { seededRandom } from '../../src/index/seededRandom';
import { Vocabulary, WindowIndex, type WindowHit, type WindowQuery } from '../../src/index/windowIndex';
import {
  chunkWindows,
  fileWindows,
  lineWindows,
  WINDOW_LINES,
  WINDOW_STRIDE,
  windowStarts,
} from '../../src/index/windows';
import type { Chunk } from '../../src/index/types';
import { fuse } from '../../src/retrieval/fusion';
import { distinctiveTerms } from '../../src/retrieval/lexical';
import { formQuery, jaccard, tokenSet } from '../../src/retrieval/query';
import { rerank } from '../../src/retrieval/rerank';
import { fuseAndPack, RETRIEVERS, retrievalContext, retrieve } from '../../src/retrieval/retrieve';
import type { Hit, RetrievalContext } from '../../src/retrieval/retriever';
import type { RetrieverName } from '../../src/retrieval/types';
import { SHOP, tempDir, writeFiles } from '../helpers/fixtures';

const VOCABULARY = Array.from({ length: 120 }, (_, i) => `name${i}`);

function source(next: () => number, functions: number): string {
  const out: string[] = [];
  for (let f = 0; f < functions; f++) {
    const length = 3 + Math.floor(next() * 45);
    out.push(`export function fn${Math.floor(next() * 1e6)}(a, b) {`);
    for (let l = 0; l < length; l++) {
      const words = Array.from({ length: 4 }, () => VOCABULARY[Math.floor(next() ** 2 * VOCABULARY.length)]);
      out.push(`  const ${words[0]} = ${words[1]}.${words[2]}(${words[3]}, a);`);
    }
    out.push('}', '');
  }
  return out.join('\n');
}

const view = (hits: WindowHit<string>[]): string[] => hits.map((h) => `${h.owner}:${h.start}:${h.score.toFixed(6)}`);

/** A window index over whole files, as `RepoIndex` keeps one; small `compactAfter` and `foldAfter` in tests. */
function fileIndex(vocabulary: Vocabulary, compactAfter?: number, foldAfter?: number): WindowIndex<string> {
  return new WindowIndex<string>(vocabulary, {
    search: { order: (a, aStart, b, bStart) => (a < b ? -1 : a > b ? 1 : aStart - bStart) },
    compactAfter,
    foldAfter,
  });
}

describe('similar-code window index', () => {
  it('answers after any sequence of updates exactly as an index rebuilt from scratch', async () => {
    const next = seededRandom(7);
    const { dir, cleanup } = await tempDir();
    try {
      const incremental = new RepoIndex(dir);
      const texts = new Map<string, string>();
      // Enough edits that removed windows outnumber live ones, so compaction runs in between.
      for (let step = 0; step < 160; step++) {
        const file = `src/f${Math.floor(next() * 12)}.ts`;
        if (texts.has(file) && next() < 0.15) {
          texts.delete(file);
          incremental.remove(file);
        } else {
          const text = source(next, 1 + Math.floor(next() * 5));
          texts.set(file, text);
          await incremental.update(file, text);
        }
      }
      const rebuilt = new RepoIndex(dir);
      for (const [file, text] of texts) await rebuilt.update(file, text);
      for (let q = 0; q < 25; q++) {
        const query = tokenSet(source(next, 1));
        const skip = (filePath: string): boolean => filePath === 'src/f0.ts';
        const expected = view(rebuilt.similarWindows(query, 10, skip));
        assert.deepStrictEqual(view(incremental.similarWindows(query, 10, skip)), expected);
      }
      incremental.dispose();
      rebuilt.dispose();
    } finally {
      await cleanup();
    }
  });

  it('searches every 20-line window of each whole file (stride 10, the text between declarations too), by exact Jaccard, through compactions and folds', () => {
    const next = seededRandom(11);
    const vocabulary = new Vocabulary();
    const incremental = fileIndex(vocabulary, 8, 16);
    const texts = new Map<string, string>();
    for (let step = 0; step < 120; step++) {
      const file = `src/g${Math.floor(next() * 6)}.ts`;
      // Imports and constants between the functions: no chunk holds them, RepoCoder's windows do.
      const text = `import { ${VOCABULARY[step % 120]} } from './x';\nconst k${step} = 1;\n${source(next, 1 + Math.floor(next() * 4))}`;
      incremental.remove([file]);
      incremental.add(file, file, fileWindows(text, vocabulary));
      texts.set(file, text);
    }
    const rebuilt = fileIndex(new Vocabulary());
    for (const [file, text] of texts) rebuilt.add(file, file, fileWindows(text, rebuilt.vocabulary));
    assert.strictEqual(incremental.size, rebuilt.size);
    for (let q = 0; q < 25; q++) {
      const tokens = tokenSet(source(next, 1));
      const found = view(incremental.search(vocabulary.query(tokens), 10));
      assert.deepStrictEqual(found, view(rebuilt.search(rebuilt.vocabulary.query(tokens), 10)));
      // A scan of the baseline's own windows (lineWindows, 20 lines, stride 10) ranks the same windows first.
      const scanned = [...texts]
        .flatMap(([file, text]) =>
          lineWindows(file, text, WINDOW_LINES, WINDOW_STRIDE).map((w) => ({
            owner: file,
            start: w.range.start,
            score: jaccard(tokens, tokenSet(w.text)),
          })),
        )
        .filter((h) => h.score > 0)
        .sort((a, b) => b.score - a.score || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : a.start - b.start));
      assert.deepStrictEqual(found, view(scanned.slice(0, 10)));
    }
  });

  it('comes back from its binary form with the same answers: whole into an empty index, key by key into one in use', () => {
    const next = seededRandom(5);
    const vocabulary = new Vocabulary();
    const saved = fileIndex(vocabulary, 8, 16);
    const texts = new Map<string, string>();
    // Removals leave dead slots, and some postings stay recent (unfolded) until the save folds them.
    for (let step = 0; step < 60; step++) {
      const file = `src/h${Math.floor(next() * 8)}.ts`;
      const text = source(next, 1 + Math.floor(next() * 3));
      saved.remove([file]);
      saved.add(file, file, fileWindows(text, vocabulary));
      texts.set(file, text);
    }
    const bytes = Buffer.concat([...saved.writeBinary()]);
    const gone = 'src/h0.ts';
    const kept = (key: string) => (key === gone ? undefined : { key, owner: key });
    // An empty index takes the arrays; one that holds a file already adds the others' windows one by one.
    const whole = fileIndex(vocabulary);
    whole.restoreBinary(memorySource(bytes, 'window index'), bytes.length, kept);
    const inUse = fileIndex(vocabulary);
    inUse.add('src/h1.ts', 'src/h1.ts', fileWindows(texts.get('src/h1.ts')!, vocabulary));
    inUse.restoreBinary(memorySource(bytes, 'window index'), bytes.length, kept);
    const expected = fileIndex(vocabulary);
    for (const [file, text] of texts) if (file !== gone) expected.add(file, file, fileWindows(text, vocabulary));
    for (const restored of [whole, inUse]) {
      assert.strictEqual(restored.size, expected.size);
      assert.strictEqual(restored.has(gone), false);
      for (let q = 0; q < 20; q++) {
        const query = vocabulary.query(tokenSet(source(next, 1)));
        assert.deepStrictEqual(view(restored.search(query, 10)), view(expected.search(query, 10)));
      }
    }
    assert.throws(
      () =>
        fileIndex(vocabulary).restoreBinary(
          memorySource(bytes.subarray(0, bytes.length - 1), 'w'),
          bytes.length - 1,
          kept,
        ),
      /do not add up/,
    );
  });

  it("gives each chunk's most similar window from its stored ids exactly as from its text, through compactions", async () => {
    const next = seededRandom(13);
    const { dir, cleanup } = await tempDir();
    try {
      const repo = new RepoIndex(dir);
      const vocabulary = new Vocabulary();
      const windows = new WindowIndex<Chunk>(vocabulary, { compactAfter: 8 });
      const files = new Map<string, Chunk[]>();
      const add = (chunks: Chunk[]): void => {
        for (const c of chunks) if (c.kind !== 'outline') windows.add(c.id, c, chunkWindows(c, vocabulary));
      };
      for (let step = 0; step < 60; step++) {
        const file = `src/h${Math.floor(next() * 5)}.ts`;
        await repo.update(file, source(next, 1 + Math.floor(next() * 4)));
        windows.remove((files.get(file) ?? []).map((c) => c.id));
        add(repo.facts(file)!.chunks);
        files.set(file, repo.facts(file)!.chunks);
      }
      const chunks = [...files.values()].flat().filter((c) => c.kind !== 'outline');
      assert.ok(
        chunks.some((c) => windowStarts(c.text.split('\n').length).length > 2),
        'chunks of several windows',
      );
      for (let q = 0; q < 10; q++) {
        const tokens = tokenSet(source(next, 1));
        const query = vocabulary.query(tokens);
        for (const chunk of chunks) {
          const lines = chunk.text.split('\n');
          let expected = { start: 0, score: -1 };
          for (const start of windowStarts(lines.length)) {
            const score = jaccard(tokens, tokenSet(lines.slice(start, start + WINDOW_LINES).join('\n')));
            if (score > expected.score) expected = { start, score };
          }
          assert.deepStrictEqual(windows.best(chunk.id, chunk, query), expected, chunk.id);
        }
      }
      const stranger = { ...chunks[0] };
      assert.strictEqual(
        windows.best(stranger.id, stranger, vocabulary.query(['a'])),
        undefined,
        'not the indexed object',
      );
      assert.throws(() => windows.search(vocabulary.query(['a']), 1), /no postings/);
      repo.dispose();
    } finally {
      await cleanup();
    }
  });

  it('scores candidates by exact Jaccard over identifier sets, and forgets removed files', () => {
    const vocabulary = new Vocabulary();
    const windows = fileIndex(vocabulary);
    for (const [file, text] of [
      ['a.ts', 'alpha beta gamma delta'],
      ['b.ts', 'alpha beta epsilon'],
      ['c.ts', 'zeta eta'],
    ]) {
      windows.add(file, file, fileWindows(text, vocabulary));
    }
    const query = (): WindowQuery => vocabulary.query(['alpha', 'beta', 'gamma']);
    assert.deepStrictEqual(
      windows.search(query(), 5).map((h) => [h.owner, h.score]),
      [
        ['a.ts', 3 / 4],
        ['b.ts', 2 / 4],
      ],
    );
    windows.remove(['a.ts']);
    assert.deepStrictEqual(
      windows.search(query(), 5).map((h) => h.owner),
      ['b.ts'],
    );
    assert.strictEqual(windows.size, 2);
  });
});

describe('retriever interface', () => {
  let index: RepoIndex;
  before(async () => {
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
  });
  after(() => index.dispose());

  const text = [
    "import { UserRepo } from '../db/userRepo';",
    '',
    'export async function report(repo: UserRepo) {',
    '  const n = await repo.',
    '}',
    '',
  ].join('\n');
  const recent = [{ path: 'src/db/userRepo.ts', text: 'export class UserRepo {}\n' }];
  const request = { path: 'src/services/report.ts', text, cursor: { line: 3, character: 23 }, recent };

  it('names each retriever once, with a cost, and each returns only its own, never the current file', () => {
    const names = RETRIEVERS.map((r) => r.name);
    assert.deepStrictEqual([...new Set(names)].sort(), ['definition', 'lexical', 'recent', 'sibling', 'similar']);
    const context = retrievalContext(index, request);
    for (const retriever of RETRIEVERS) {
      assert.ok(retriever.costMs > 0, retriever.name);
      for (const hit of retriever.retrieve(context)) {
        assert.strictEqual(hit.snippet.retriever, retriever.name);
        assert.notStrictEqual(hit.snippet.path, request.path);
      }
    }
  });

  it('runs only the retrievers asked for, and times every stage it ran', () => {
    const result = retrieve(index, { ...request, retrievers: ['definition'] });
    assert.ok(result.snippets.length > 0);
    assert.ok(result.snippets.every((s) => s.retriever === 'definition'));
    assert.deepStrictEqual(Object.keys(result.timings.stages).sort(), ['definition', 'pack', 'query']);
    const all = retrieve(index, request);
    for (const name of ['definition', 'lexical', 'similar', 'sibling', 'recent', 'pack']) {
      assert.ok(all.timings.stages[name] >= 0, name);
    }
  });
});

describe('sibling files', () => {
  it('are named with the same last words in camel, kebab or snake case, wherever they live', async () => {
    const body = (name: string): string =>
      `export function compile${name}(node) {\n  const sql = visitSelectQuery(node);\n  return appendReturning(sql, node);\n}\n`;
    const { dir, cleanup } = await tempDir();
    const repo = new RepoIndex(dir);
    try {
      await writeFiles(dir, {
        'src/mysql/mysql-query-compiler.ts': body('Mysql'),
        'src/sqlite/sqlite_query_compiler.ts': body('Sqlite'),
        'src/base/query-compiler.ts': body('Base'),
        'src/other/mysql-driver.ts': body('Driver'),
        'src/mssql/MssqlQueryCompiler.ts': body('Mssql'),
        'src/postgres/postgres-query-compiler.ts': '',
      });
      await buildIndex(repo, { root: dir });
      const text = 'export function compilePostgres(node) {\n  const sql = visitSelectQuery(node);\n  ';
      const found = (path: string): string[] =>
        retrieve(repo, { path, text, cursor: { line: 2, character: 2 }, retrievers: ['sibling'] })
          .snippets.map((s) => s.path)
          .sort();
      // The same last two words, separators and case aside; not the bare two-word name, not other endings.
      assert.deepStrictEqual(found('src/postgres/postgres-query-compiler.ts'), [
        'src/mysql/mysql-query-compiler.ts',
        'src/sqlite/sqlite_query_compiler.ts',
      ]);
      assert.deepStrictEqual(found('src/postgres/PostgresQueryCompiler.ts'), ['src/mssql/MssqlQueryCompiler.ts']);
    } finally {
      repo.dispose();
      await cleanup();
    }
  });
});

describe('fusion', () => {
  const query = formQuery('function f() {\n  run(\n', { line: 1, character: 6 });
  const request = { path: 'src/here.ts', text: '', cursor: { line: 1, character: 6 } };
  const context = { query, request, index: new RepoIndex('/nowhere') } as unknown as RetrievalContext;
  const hit = (name: RetrieverName, path: string, score: number, strong: boolean, text: string): Hit => ({
    key: `${path}:${name}`,
    snippet: { path, range: { start: 0, end: text.split('\n').length }, text, retriever: name, why: '', score },
    strong,
  });
  const body = (tag: string): string =>
    Array.from({ length: 12 }, (_, i) => `  const ${tag}${i} = compute${tag}(${i}, options);`).join('\n');

  it('never lets the other paths crowd out a strong candidate, wherever the fused rank puts it', () => {
    for (const rank of [0, 3, 7]) {
      const similar = Array.from({ length: 8 }, (_, i) =>
        hit('similar', `src/s${i}.ts`, 0.3, i === rank, body(`S${i}`)),
      );
      const definitions = Array.from({ length: 10 }, (_, i) =>
        hit('definition', `src/d${i}.ts`, 1, false, body(`D${i}`)),
      );
      const lexical = Array.from({ length: 10 }, (_, i) => hit('lexical', `src/l${i}.ts`, 9, false, body(`L${i}`)));
      const results = [
        { name: 'definition' as const, hits: definitions },
        { name: 'lexical' as const, hits: lexical },
        { name: 'similar' as const, hits: similar },
      ];
      const { packed } = fuseAndPack(results, context, 2000);
      const strong = packed.find((s) => s.path === `src/s${rank}.ts`);
      assert.ok(strong, `the strong window at rank ${rank} is packed`);
      assert.strictEqual(strong.text, body(`S${rank}`).replace(/^ {2}/gm, ''), 'whole, not cut to its path share');
    }
  });

  it('packs candidates without their comment-only lines, so a commented window does not crowd out the next', () => {
    const window = Array.from(
      { length: 20 },
      (_, i) => `// note ${i}: why the next call is made, at length\ncall${i}();`,
    );
    const lexical = [hit('lexical', 'src/notes.ts', 9, false, window.join('\n'))];
    const definitions = [hit('definition', 'src/needed.ts', 0.1, false, 'export function needed(): void')];
    const results = [
      { name: 'definition' as const, hits: definitions },
      { name: 'lexical' as const, hits: lexical },
    ];
    const { packed } = fuseAndPack(results, context, 1000);
    assert.deepStrictEqual(
      packed.map((s) => s.path),
      ['src/notes.ts', 'src/needed.ts'],
    );
    assert.strictEqual(packed[0].text, Array.from({ length: 20 }, (_, i) => `call${i}();`).join('\n'));
  });

  it('ranks test code below product code for a product file, not for a test file', () => {
    const lexical = [
      hit('lexical', 'test/orders.test.ts', 9, false, 'const order = makeOrder();'),
      hit('lexical', 'src/orders.ts', 8, false, 'const order = makeOrder();'),
    ];
    const definitions = [hit('definition', 'test/helpers.ts', 0.5, false, 'export function makeOrder(): Order')];
    const order = (path: string): string[] =>
      rerank(
        fuse([
          { name: 'definition', hits: definitions },
          { name: 'lexical', hits: lexical },
        ]),
        query,
        path,
      ).ranked.map((s) => s.path);
    assert.deepStrictEqual(order('src/here.ts'), ['test/helpers.ts', 'src/orders.ts', 'test/orders.test.ts']);
    assert.deepStrictEqual(order('test/here.test.ts'), ['test/helpers.ts', 'test/orders.test.ts', 'src/orders.ts']);
  });

  it('keeps the fused order when no evidence is strong', () => {
    const definitions = Array.from({ length: 3 }, (_, i) =>
      hit('definition', `src/d${i}.ts`, 1 - i / 10, false, `export const d${i} = 1;`),
    );
    const similar = [hit('similar', 'src/s.ts', 0.2, false, 'const s = 1;')];
    const results = [
      { name: 'definition' as const, hits: definitions },
      { name: 'similar' as const, hits: similar },
    ];
    const { packed } = fuseAndPack(results, context, 2000);
    assert.deepStrictEqual(
      packed.map((s) => s.path),
      ['src/d0.ts', 'src/d1.ts', 'src/d2.ts', 'src/s.ts'],
    );
  });
});

describe('search scope', () => {
  it("chooses BM25's terms by the project's own file counts, kept current as files change", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      // `renderRow` is in every file of `one` but in few of the workspace's: common there, rare here.
      const files: Record<string, string> = {
        'one/package.json': '{"name":"one"}',
        'two/package.json': '{"name":"two"}',
      };
      for (let i = 0; i < 30; i++) files[`one/src/f${i}.ts`] = `export const a${i} = renderRow(cell${i});\n`;
      for (let i = 0; i < 300; i++) files[`two/src/g${i}.ts`] = `export const b${i} = other${i};\n`;
      await writeFiles(dir, files);
      const repo = new RepoIndex(dir);
      await buildIndex(repo, { root: dir });
      const scope = repo.searchScope('one/src/f0.ts');
      assert.strictEqual(scope, 'one/');
      assert.strictEqual(repo.fileCount(scope), 30, 'its code files');
      assert.strictEqual(repo.frequency('renderRow', scope), 30);
      assert.strictEqual(repo.frequency('renderRow'), 30);
      assert.deepStrictEqual(distinctiveTerms(repo, 'renderRow(cell7)', scope), 'cell7', 'too common in its project');
      assert.deepStrictEqual(distinctiveTerms(repo, 'renderRow(cell7)'), 'cell7 renderRow', 'rare in the workspace');
      // Changes after the scope's figures were made: a file added, one edited, one removed.
      await repo.update('one/src/new.ts', 'export const n = renderRow(fresh);\n');
      await repo.update('one/src/f1.ts', 'export const a1 = cell1;\n');
      repo.remove('one/src/f2.ts');
      assert.strictEqual(repo.fileCount(scope), 30);
      assert.strictEqual(repo.frequency('renderRow', scope), 29);
      assert.strictEqual(repo.frequency('fresh', scope), 1);
      assert.strictEqual(repo.frequency('cell2', scope), 0);
      assert.strictEqual(repo.frequency('other5', scope), 0, 'a name of the other project');
      repo.dispose();
    } finally {
      await cleanup();
    }
  });

  it('keeps similar-code, BM25, sibling, unresolved-name and ambient searches inside the repository a file is in, unless the root is a project itself', async () => {
    const code = (name: string): string =>
      `export function ${name}(node) {\n  const sql = visitSelectQuery(node);\n  return appendReturning(sql, node);\n}\n`;
    const { dir, cleanup } = await tempDir();
    try {
      // Two repositories side by side, each its own project; `visitSelectQuery` is declared in the other one only.
      await writeFiles(dir, {
        'one/package.json': '{"name":"one"}',
        'one/src/query-compiler.ts': code('compileOne'),
        'two/package.json': '{"name":"two"}',
        'two/src/query-compiler.ts': code('compileTwo'),
        'two/src/visit.ts': 'export function visitSelectQuery(node) {\n  return node;\n}\n',
        'two/src/globals.d.ts': 'declare const __TWO_VERSION__: string;\n',
        'one/src/postgres-query-compiler.ts': '',
      });
      const text = 'export function compilePostgres(node) {\n  const sql = visitSelectQuery(node);\n  ';
      let shown: (string | undefined)[] = [];
      const paths = async (): Promise<string[]> => {
        const repo = new RepoIndex(dir);
        await buildIndex(repo, { root: dir });
        const request = { path: 'one/src/postgres-query-compiler.ts', text, cursor: { line: 2, character: 2 } };
        const snippets = retrieve(repo, request).snippets;
        shown = snippets.map((s) => s.shownPath);
        const found = [...new Set(snippets.map((s) => s.path))].sort();
        repo.dispose();
        return found;
      };
      assert.deepStrictEqual(await paths(), ['one/src/query-compiler.ts']);
      // The prompt shows (and the budget counts) paths within the project, as with the project alone.
      assert.ok(shown.length > 0 && shown.every((p) => p === 'src/query-compiler.ts'), shown.join(', '));
      // One repository of two packages: the whole of it is searched.
      await writeFiles(dir, { 'package.json': '{"name":"monorepo","workspaces":["one","two"]}' });
      const whole = await paths();
      assert.ok(whole.includes('two/src/query-compiler.ts'), whole.join(', '));
      assert.ok(whole.includes('two/src/visit.ts'), whole.join(', '));
      assert.ok(
        shown.every((p) => p === undefined),
        'one repository: paths as they are',
      );
    } finally {
      await cleanup();
    }
  });
});
