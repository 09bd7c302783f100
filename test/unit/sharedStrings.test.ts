/**
 * One file's facts hold each string once (decision M12): an import that binds names as they are exported shares one
 * list for both, every chunk names the record's path, and this holds for a record restored from a cache as for one
 * parsed.
 */
import { strict as assert } from 'assert';
import { loadIndex, saveIndex } from '../../src/index/persist';
import { RepoIndex } from '../../src/index/repoIndex';
import { shareStrings } from '../../src/index/sharedStrings';
import type { FileFacts } from '../../src/index/types';
import { tempDir } from '../helpers/fixtures';

const SOURCE =
  "import { a, b } from './x';\nimport { c as d } from './y';\nexport function f() {\n  return a + b + d;\n}\n";

function checkShared(facts: FileFacts): void {
  const [plain, renamed] = facts.imports;
  assert.deepEqual(plain.names, ['a', 'b']);
  assert.equal(plain.imported, plain.names, 'an import of names as exported keeps one list');
  assert.deepEqual(renamed.imported, ['c']);
  assert.deepEqual(renamed.names, ['d']);
  assert.notEqual(renamed.imported, renamed.names);
  assert.ok(facts.chunks.length > 0);
  for (const chunk of facts.chunks) assert.equal(chunk.path, facts.path);
}

describe('shared strings of a file', () => {
  it('shares names and lists, and takes the canonical copy of a word', () => {
    const facts: FileFacts = {
      path: 'src/m.ts',
      language: 'typescript',
      symbols: [
        { name: 'f', kind: 'function', range: { start: 0, end: 1 }, signature: 'function f()', exported: true },
      ],
      chunks: [
        {
          id: 'src/m.ts#0-1:function',
          path: 'other',
          kind: 'function',
          range: { start: 0, end: 1 },
          text: '',
          symbols: ['f'],
        },
      ],
      imports: [{ specifier: './x', names: ['a'], imported: ['a'], line: 0 }],
      types: [],
      hasErrors: false,
    };
    const asked: string[] = [];
    shareStrings(facts, (word) => (asked.push(word), undefined));
    assert.equal(facts.chunks[0].path, 'src/m.ts');
    assert.equal(facts.imports[0].imported, facts.imports[0].names);
    // Each distinct string is looked up once.
    assert.deepEqual(asked.sort(), ['./x', 'a', 'f']);
  });

  it('holds for a parsed record and for one restored from a cache', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const parsed = new RepoIndex(dir);
      await parsed.update('src/m.ts', SOURCE);
      checkShared(parsed.facts('src/m.ts')!);
      await saveIndex(parsed, `${dir}/cache`);
      const restored = new RepoIndex(dir);
      assert.ok((await loadIndex(restored, `${dir}/cache`)).ok);
      checkShared(restored.facts('src/m.ts')!);
      const plain = (facts: FileFacts | undefined) => JSON.parse(JSON.stringify(facts)) as unknown;
      assert.deepEqual(plain(restored.facts('src/m.ts')), plain(parsed.facts('src/m.ts')));
      parsed.dispose();
      restored.dispose();
    } finally {
      await cleanup();
    }
  });
});
