import * as assert from 'assert';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { retrieve } from '../../src/retrieval/retrieve';
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
