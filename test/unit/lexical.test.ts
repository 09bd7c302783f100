/**
 * The BM25 index over chunks: its scores against the formula computed by hand, and incremental updates that
 * leave it exactly as a fresh build of the same chunks (removed chunks count nowhere, also after compaction and
 * a persisted round trip).
 */
import { strict as assert } from 'assert';
import { LexicalIndex } from '../../src/index/lexical';
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

function results(index: LexicalIndex): string {
  return JSON.stringify(QUERIES.map((q) => index.query(q, 10)));
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
    assert.equal(norm(new LexicalIndex(updated.toJSON())), norm(fresh), 'persisted and restored');
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
});
