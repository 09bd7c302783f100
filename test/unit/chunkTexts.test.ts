/** Chunk texts on disk (issue 41): read back exactly, through compactions, and kept in memory when disk fails. */
import { strict as assert } from 'assert';
import { ChunkTexts, StoredChunk } from '../../src/index/chunkTexts';
import type { Chunk } from '../../src/index/types';
import { seededRandom } from '../../src/index/seededRandom';

const chunk = (id: string, text: string): Chunk => ({
  id,
  path: 'a.ts',
  kind: 'function',
  range: { start: 0, end: 1 },
  text,
  symbols: [],
});

describe('chunk texts on disk', () => {
  it('gives every live text back byte for byte through releases and compactions, and as JSON', () => {
    const next = seededRandom(3);
    const texts = new ChunkTexts(64);
    const live = new Map<string, Chunk>();
    const expected = new Map<string, string>();
    let compactions = 0;
    for (let step = 0; step < 300; step++) {
      const id = `c${Math.floor(next() * 20)}`;
      const old = live.get(id);
      const text = `function f${step}() { return '${'é€😀x'.repeat(Math.floor(next() * 30))}'; }`;
      const [stored] = texts.store([chunk(id, text)]);
      assert.ok(stored instanceof StoredChunk, 'written to the file');
      live.set(id, stored);
      expected.set(id, text);
      if (old && texts.release([old])) {
        texts.compact(live.values());
        compactions++;
      }
      for (const [key, c] of live) assert.equal(c.text, expected.get(key));
    }
    assert.ok(compactions > 3, `compacted ${compactions} times`);
    const one = [...live.values()][0];
    assert.deepEqual(JSON.parse(JSON.stringify(one)), { ...chunk(one.id, one.text) });
    // An empty text lies where the next one starts: each still reads as its own.
    const [empty, after] = texts.store([chunk('e', ''), chunk('f', 'const f = 1;')]);
    assert.deepEqual([empty.text, after.text], ['', 'const f = 1;']);
    // Read together, runs stored one after another at once: the same bytes as each alone, in the order asked.
    const run = texts.store([chunk('r1', 'const r = 1;'), chunk('r2', ''), chunk('r3', 'let é = 2;')]);
    const mixed = [...run, chunk('plain', 'in memory'), ...live.values(), run[0]];
    assert.deepEqual(
      texts.bytesOfAll(mixed).map((b) => b.toString('utf8')),
      mixed.map((c) => c.text),
    );
    texts.close();
  });

  it('keeps the texts in memory when no file can be written (a full disk, a missing temp folder)', () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = '/nonexistent/repogate';
    try {
      const texts = new ChunkTexts();
      const [kept] = texts.store([chunk('a', 'const a = 1;')]);
      assert.ok(!(kept instanceof StoredChunk));
      assert.equal(kept.text, 'const a = 1;');
      texts.close();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});
