import * as assert from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { loadIndex } from '../../src/index/persist';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex, FileRefresher } from '../../src/index/workspace';
import { retrieve } from '../../src/retrieval/retrieve';
import type { Snippet } from '../../src/retrieval/types';
import { tempDir, writeFiles } from '../helpers/fixtures';

/** A dialect's compiler: the same two methods in each, the second naming the dialect's own quoting. */
function dialect(name: string, quoting: string): string {
  return [
    "import { Compiler, type ColumnNode, type SelectNode } from '../compiler';",
    '',
    `export class ${name}Compiler extends Compiler {`,
    '  compileSelect(node: SelectNode): string {',
    '    const columns = node.columns.map((column) => this.compileColumn(column));',
    '    const source = this.compileSource(node.from);',
    "    const filter = node.where ? this.compileFilter(node.where) : '';",
    '    return `SELECT ${columns.join(", ")} FROM ${source}${filter}`;',
    '  }',
    '',
    '  compileColumn(column: ColumnNode): string {',
    `    const name = ${quoting}`,
    '    return column.alias ? `${name} AS ${column.alias}` : name;',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** A test that repeats the product's lines around its own values: more similar to them than a sibling dialect is. */
function mirroringTest(i: number): string {
  return [
    "import { compiler, type SelectNode } from '../helpers';",
    '',
    `export function compileSelectCase${i}(node: SelectNode): string {`,
    '  const columns = node.columns.map((column) => compiler.compileColumn(column));',
    '  const source = compiler.compileSource(node.from);',
    "  const filter = node.where ? compiler.compileFilter(node.where) : '';",
    `  return \`SELECT \${columns.join(", ")} FROM \${source}\${filter} -- case ${i}\`;`,
    '}',
    '',
  ].join('\n');
}

describe('similar code alone', () => {
  it('finds the analogous line of a sibling implementation in the method after its best match, past mirroring test code', async () => {
    const { dir, cleanup } = await tempDir();
    const index = new RepoIndex(dir);
    try {
      const files: Record<string, string> = {
        'src/dialects/mysql.ts': dialect('Mysql', "escapeIdentifier(column.name, '`');"),
        'src/dialects/postgres.ts': dialect('Postgres', "escapeIdentifier(column.name, '\"');"),
      };
      for (let i = 0; i < 6; i++) files[`test/dialects/case${i}.test.ts`] = mirroringTest(i);
      await writeFiles(dir, files);
      await buildIndex(index, { root: dir });
      const written = dialect('Sqlite', '').split('\n');
      const line = written.findIndex((l) => l.trim() === 'const name =');
      const text = written.slice(0, line + 1).join('\n');
      const path = 'src/dialects/sqlite.ts';
      const cursor = { line, character: written[line].length };
      const packed = retrieve(index, { path, text, cursor, budget: 2000, retrievers: ['similar'] }).snippets;
      assert.ok(
        packed.some((s) => s.path.startsWith('src/dialects/') && s.text.includes('escapeIdentifier(column.name')),
        packed.map((s) => s.path).join(', '),
      );
    } finally {
      index.dispose();
      await cleanup();
    }
  });
});

/**
 * A dialect module: the same imports as its siblings, then a registration no declaration holds (a statement between
 * the imports and the first declaration), then the dialect's object.
 */
function dialectModule(name: string, registration: string): string {
  const lower = name.toLowerCase();
  return [
    "import { Dialect } from '../dialect';",
    `import { ${name}Driver } from '../drivers/${lower}-driver';`,
    "import { QueryCompiler } from '../compiler/query-compiler';",
    "import { Introspector } from '../introspection/introspector';",
    "import { Adapter } from '../adapters/adapter';",
    "import { Migrations } from '../migrations/migrations';",
    "import { Pool } from '../pool/pool';",
    "import { Logger } from '../logging/logger';",
    "import { registerQuoting } from '../quoting';",
    '',
    registration,
    '',
    `export const ${lower}Dialect: Dialect = {`,
    `  driver: () => new ${name}Driver(new Pool(), new Logger()),`,
    '  compiler: () => new QueryCompiler(),',
    '  introspector: (db) => new Introspector(db),',
    '  adapter: () => new Adapter(),',
    '  migrations: () => new Migrations(),',
    '};',
    '',
  ].join('\n');
}

/** The cursor on the line after a new dialect's imports, where its siblings register their quoting. */
function afterImports(): { path: string; text: string; cursor: { line: number; character: number } } {
  const written = dialectModule('Sqlite', '').split('\n');
  const line = written.indexOf('');
  return {
    path: 'src/dialects/sqlite.ts',
    text: written.slice(0, line + 1).join('\n'),
    cursor: { line, character: 0 },
  };
}

function similarAlone(index: RepoIndex): Snippet[] {
  return retrieve(index, { ...afterImports(), budget: 2000, retrievers: ['similar'] }).snippets;
}

describe('similar windows of whole files', () => {
  it("finds the line after a sibling's imports, shown as the file's own lines, after a warm start and until the file changes", async () => {
    const { dir, cleanup } = await tempDir();
    const cache = await tempDir();
    const cold = new RepoIndex(dir);
    const warm = new RepoIndex(dir);
    try {
      await writeFiles(dir, {
        'src/dialects/mysql.ts': dialectModule('Mysql', "registerQuoting('mysql', '`');"),
        'src/dialects/postgres.ts': dialectModule('Postgres', "registerQuoting('postgres', '\"');"),
      });
      await buildIndex(cold, { root: dir, cacheDir: cache.dir });
      // A warm start holds no file's text: the windows come from the cache, their lines from the disk.
      assert.deepStrictEqual((await buildIndex(warm, { root: dir, cacheDir: cache.dir })).cache, { ok: true });
      for (const index of [cold, warm]) {
        const found = similarAlone(index).filter((s) => s.text.includes('registerQuoting('));
        assert.ok(found.length > 0, 'the registration is packed');
        for (const snippet of found) {
          const lines = (await fs.readFile(path.join(dir, snippet.path), 'utf8')).split('\n');
          assert.strictEqual(snippet.text, lines.slice(snippet.range.start, snippet.range.end).join('\n'));
        }
      }
      // Changed on disk behind the index's back (a cache loaded before the change was seen): the windows of the text
      // the index holds are not shown from a file that no longer has it, and are shown again once it is refreshed.
      const stale = new RepoIndex(dir);
      try {
        assert.deepStrictEqual(await loadIndex(stale, cache.dir), { ok: true });
        const moved = `// moved\n${dialectModule('Mysql', "registerQuoting('mysql', '`');")}`;
        await writeFiles(dir, { 'src/dialects/mysql.ts': moved });
        assert.ok(similarAlone(stale).every((s) => s.path !== 'src/dialects/mysql.ts'));
        await new FileRefresher(stale, { root: dir }).refresh('src/dialects/mysql.ts');
        const refreshed = similarAlone(stale).find((s) => s.path === 'src/dialects/mysql.ts');
        assert.ok(refreshed?.text.includes("registerQuoting('mysql'"), 'shown again once the index has the new text');
      } finally {
        stale.dispose();
      }
    } finally {
      cold.dispose();
      warm.dispose();
      await cleanup();
      await cache.cleanup();
    }
  });
});
