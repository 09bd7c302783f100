/**
 * The BM25 index over chunks: its scores against the formula computed by hand, and incremental updates that
 * leave it exactly as a fresh build of the same chunks (removed chunks count nowhere, also after compaction and
 * a persisted round trip).
 */
import { strict as assert } from 'assert';
import { LexicalIndex } from '../../src/index/lexical';
import { memorySource } from '../../src/index/byteSource';
import { codeTerms } from '../../src/index/tokenize';
import type { Chunk } from '../../src/index/types';

const chunk = (id: string, text: string, symbols: string[] = []): Chunk => ({
  id,
  path: id.split('#')[0],
  kind: 'function',
  range: { start: 0, end: text.split('\n').length },
  text,
  symbols,
});

const CORPUS = [
  chunk('a.ts#1', 'function loadUser(id) { return db.users.find(id); }', ['loadUser']),
  chunk('b.ts#1', 'const cache = new Map(); cache.set(key, user);'),
  chunk('c.ts#1', 'export class UserRepo { save(user) { db.users.insert(user); } }', ['UserRepo', 'save']),
  chunk('d.ts#1', 'function render(page) { return page.title; }', ['render']),
];
const QUERIES = ['db.users', 'loadUser(id)', 'cache user', 'render page title', 'UserRepo save', 'nothing here'];

function results(index: LexicalIndex, queries = QUERIES): string {
  return JSON.stringify(queries.map((q) => index.query(q, 10)));
}

/** `index` written in its binary form and read back. */
function persisted(index: LexicalIndex): LexicalIndex {
  return LexicalIndex.readBinary(memorySource(Buffer.concat([...index.writeBinary()]), 'lexical index'));
}

describe('lexical index (BM25+ over chunks)', () => {
  it('scores a term as BM25+ with the declared names counted double and the matched terms multiplying', () => {
    const index = new LexicalIndex();
    index.add(CORPUS);
    const hits = index.query('loadUser', 10);
    assert.deepEqual(
      hits.map((h) => h.id),
      ['a.ts#1'],
    );
    // `loaduser` is in one chunk of four, in its text and in its names; a field's length is its unique terms.
    const unique = (text: string): number => new Set(codeTerms(text)).size;
    const mean = (lengths: number[]): number => lengths.reduce((a, b) => a + b, 0) / lengths.length;
    const textMean = mean(CORPUS.map((c) => unique(c.text)));
    const namesMean = mean(CORPUS.map((c) => unique(c.symbols.join(' '))));
    const idf = Math.log(1 + (4 - 1 + 0.5) / (1 + 0.5));
    const field = (tf: number, length: number, average: number): number =>
      0.5 + (tf * 2.2) / (tf + 1.2 * (1 - 0.7 + (0.7 * length) / average));
    const expected =
      idf * field(1, unique(CORPUS[0].text), textMean) + 2 * idf * field(1, unique('loadUser'), namesMean);
    assert.ok(Math.abs(hits[0].score - expected) < 1e-9, `${hits[0].score} vs ${expected}`);
    const two = index.query('db users', 10);
    const one = index.query('users', 10);
    assert.deepEqual(two.map((h) => h.id).sort(), ['a.ts#1', 'c.ts#1']);
    // Two matched terms double the sum of their scores.
    assert.ok(two[0].score > 2 * one[0].score);
  });

  it('after removals and re-adds, answers exactly as a fresh build of the same chunks', () => {
    const fresh = new LexicalIndex();
    fresh.add(CORPUS);
    const updated = new LexicalIndex();
    updated.add([CORPUS[0], chunk('a.ts#1x', 'users users users db db', ['users']), CORPUS[1]]);
    updated.add([chunk('c.ts#1', 'an older text of the class', ['Old'])]);
    updated.remove(['a.ts#1x', 'c.ts#1']);
    updated.add([CORPUS[2], CORPUS[3]]);
    assert.equal(updated.size, 4);
    // Ties aside, the order of chunks added differs; scores and ids must not.
    const norm = (index: LexicalIndex): string =>
      JSON.stringify(QUERIES.map((q) => index.query(q, 10).sort((x, y) => x.id.localeCompare(y.id))));
    assert.equal(norm(updated), norm(fresh));
    assert.equal(norm(persisted(updated)), norm(fresh), 'persisted and restored');
  });

  it('compacts once most numbered chunks are removed, and keeps answering the same', () => {
    const index = new LexicalIndex();
    index.add(CORPUS);
    const before = results(index);
    const churn = Array.from({ length: 20 }, (_, i) => chunk(`tmp${i}.ts#1`, `users db loadUser tmp${i}`));
    index.add(churn);
    index.remove(churn.map((c) => c.id));
    assert.equal(index.size, 4);
    assert.equal(results(index), before);
    assert.throws(() => index.add([CORPUS[0]]), /duplicate chunk id/);
  });

  it('leaves out what the filter rejects and returns at most `limit` hits, best first', () => {
    const index = new LexicalIndex();
    index.add(CORPUS);
    const all = index.query('users user db', 10);
    assert.ok(all.length >= 3);
    assert.deepEqual(
      index.query('users user db', 2).map((h) => h.id),
      all.slice(0, 2).map((h) => h.id),
    );
    assert.ok(all.every((h, i) => i === 0 || all[i - 1].score >= h.score));
    const filtered = index.query('users user db', 10, (id) => !id.startsWith('a.ts'));
    assert.deepEqual(
      filtered.map((h) => h.id),
      all.filter((h) => !h.id.startsWith('a.ts')).map((h) => h.id),
    );
  });

  it('answers a scoped query as an index of the chunks under the scope alone does', () => {
    const words = ['users', 'db', 'cache', 'page', 'render', 'save'];
    const corpus = Array.from({ length: 300 }, (_, c) =>
      chunk(
        `${['pkg/a/', 'pkg/b/', 'lib/'][Math.floor(c / 10) % 3]}f${c % 17}.ts#${c}`,
        words.filter((_, i) => (c >> i) & 1).join(' '),
      ),
    );
    const index = new LexicalIndex();
    const scopes = ['pkg/a/', 'pkg/b/', 'lib/', 'pkg/', 'none/'];
    // The same additions and removals, of each scope's chunks only.
    const alone = new Map(scopes.map((scope) => [scope, new LexicalIndex()]));
    const add = (chunks: Chunk[]): void => {
      index.add(chunks);
      for (const [scope, own] of alone) own.add(chunks.filter((c) => c.id.startsWith(scope)));
    };
    const remove = (chunks: Chunk[]): void => {
      index.remove(chunks.map((c) => c.id));
      for (const own of alone.values()) own.remove(chunks.map((c) => c.id));
    };
    const queries = ['users db', 'cache page render', 'save', 'absent'];
    const same = (scope: string): void => {
      for (const q of queries) {
        const filter = (id: string): boolean => !id.endsWith('#7');
        assert.deepEqual(index.query(q, 10, filter, scope), alone.get(scope)!.query(q, 10, filter), `${q} in ${scope}`);
      }
    };
    add(corpus.slice(0, 200));
    same('pkg/a/');
    same('lib/');
    // A few removed, too few to renumber: the kept scopes count them out.
    remove(corpus.slice(0, 30).filter((_, c) => c % 3 === 0));
    same('pkg/a/');
    same('lib/');
    // Chunks added, removed past the compaction share and added again after the scopes were first queried.
    add(corpus.slice(200));
    same('pkg/a/');
    remove(corpus.filter((_, c) => c % 4 !== 0));
    same('pkg/a/');
    same('pkg/b/');
    add(corpus.filter((_, c) => c % 4 !== 0));
    for (const scope of scopes) same(scope);
    assert.deepEqual(index.query('users', 10, undefined, 'none/'), []);
  });

  it('answers the same whether postings were folded often, once, or persisted', () => {
    // Enough postings (about 200,000) for the recent ones to be folded into the encoded lists more than once.
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`);
    const corpus = Array.from({ length: 5000 }, (_, c) =>
      chunk(
        `f${c % 97}.ts#${c}`,
        Array.from({ length: 40 }, (_, i) => words[(c * 7 + i * i * 13) % words.length]).join(' '),
        [`name${c % 300}`],
      ),
    );
    const queries = ['word1 word2', 'word599 name7', 'word42', 'name299 word300 word13', 'absent word5'];
    const once = new LexicalIndex();
    once.add(corpus);
    const often = new LexicalIndex();
    for (const c of corpus) often.add([c]);
    const expected = results(once, queries);
    assert.ok(JSON.parse(expected).every((hits: unknown[]) => hits.length > 0));
    assert.equal(results(often, queries), expected);
    assert.equal(results(persisted(often), queries), expected);
    // Removals past the compaction share, then the same chunks again: numbered anew, answered the same.
    const removed = corpus.filter((_, c) => c % 3 !== 0);
    often.remove(removed.map((c) => c.id));
    often.add(removed);
    const sorted = (index: LexicalIndex): string =>
      JSON.stringify(
        queries.map((q) => index.query(q, 10).sort((x, y) => y.score - x.score || x.id.localeCompare(y.id))),
      );
    assert.equal(sorted(often), sorted(once));
    assert.equal(sorted(persisted(often)), sorted(once));
  });

  it('reads no other format and no bytes that do not add up', () => {
    const index = new LexicalIndex();
    index.add(CORPUS);
    const bytes = Buffer.concat([...index.writeBinary()]);
    const read = LexicalIndex.readBinary(memorySource(bytes, 'lexical index')) as unknown as {
      fields: { bytes: Uint8Array }[];
    };
    assert.ok(
      read.fields.every((field) => field.bytes.buffer !== bytes.buffer),
      'the lists are copies: they keep no read buffer alive',
    );
    assert.throws(
      () => LexicalIndex.readBinary(memorySource(bytes.subarray(0, bytes.length - 1), 'lexical index')),
      /lexical index/,
    );
    assert.throws(
      () => LexicalIndex.readBinary(memorySource(Buffer.concat([bytes, Buffer.from([0])]), 'lexical index')),
      /trailing bytes/,
    );
    assert.throws(
      () => LexicalIndex.readBinary(memorySource(Buffer.from('\x05other'), 'lexical index')),
      /unknown format/,
    );
  });
});
