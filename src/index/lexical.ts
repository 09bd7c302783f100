import { codeTerms, identifiers } from './tokenize';
import type { Chunk } from './types';

export interface LexicalHit {
  id: string;
  score: number;
}

/** BM25+ parameters (Lv & Zhai): term-frequency saturation, length normalisation, and the lower bound of a match. */
const K1 = 1.2;
const B = 0.7;
const DELTA = 0.5;
/** The fields of a chunk: its text, and the names it declares, which count double (a definition beats a use). */
const FIELDS = 2;
const FIELD_BOOST = [1, 2];
/** Removed chunks are dropped from the posting lists once they are this share of all chunks ever numbered. */
const COMPACT_SHARE = 0.5;
const FORMAT = 'repogate-bm25-1';

/**
 * One term's occurrences in one field: chunk numbers in ascending order, each with its term frequency and the
 * chunk's length in that field (a chunk never changes; reading the length here saves a cache miss a posting),
 * interleaved in one typed array: most terms occur in a few chunks, and every typed array costs about 200 bytes of
 * its own, so three arrays a term were most of the index's heap.
 */
class Postings {
  /** `chunk, tf, length` for each posting, one after another. */
  entries = new Int32Array(ENTRY);
  size = 0;

  push(chunk: number, tf: number, length: number): void {
    let at = this.size * ENTRY;
    if (at === this.entries.length) {
      const grown = new Int32Array(this.entries.length * 2);
      grown.set(this.entries);
      this.entries = grown;
    }
    this.entries[at++] = chunk;
    this.entries[at++] = tf;
    this.entries[at] = length;
    this.size++;
  }

  pairs(): [number, number][] {
    return Array.from({ length: this.size }, (_, i) => [this.entries[i * ENTRY], this.entries[i * ENTRY + 1]]);
  }
}

/** Numbers a posting takes: its chunk, term frequency and chunk length. */
const ENTRY = 3;

interface Serialized {
  format: string;
  ids: string[];
  lengths: number[][];
  postings: [string, ...[number, number][][]][];
}

/**
 * BM25+ over chunks with the code-aware tokenizer, scored as minisearch 7 scores it (the library this replaced;
 * its per-result objects and full sort were the largest cost of a retrieval): per field the unique-term length,
 * the field boost, and the sum over matched query terms times their number. The accumulators are typed arrays
 * indexed by chunk number, and only the best `limit` hits are sorted.
 */
export class LexicalIndex {
  /** Chunk number → id; undefined once removed. */
  private ids: (string | undefined)[] = [];
  private readonly numbers = new Map<string, number>();
  /** Per field, chunk number → unique terms in that field. */
  private lengths: number[][] = [[], []];
  private readonly totalLength = [0, 0];
  private readonly postings = new Map<string, (Postings | undefined)[]>();
  /** Per chunk number during a query: the score so far, the query terms matched, the last term counted. */
  private scores = new Float64Array(0);
  private matched = new Uint8Array(0);
  private lastTerm = new Uint8Array(0);
  /** One posting list's live chunks and their BM25 term parts, gathered in one pass before the idf is known. */
  private listChunks = new Int32Array(0);
  private listParts = new Float64Array(0);

  constructor(serialized?: string) {
    if (serialized) this.load(JSON.parse(serialized) as Serialized);
  }

  add(chunks: Chunk[]): void {
    for (const chunk of chunks) {
      if (this.numbers.has(chunk.id)) throw new Error(`lexical index: duplicate chunk id ${chunk.id}`);
      const n = this.ids.length;
      this.ids.push(chunk.id);
      this.numbers.set(chunk.id, n);
      [codeTerms(chunk.text), codeTerms(chunk.symbols.join(' '))].forEach((terms, field) => {
        const counts = new Map<string, number>();
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
        this.lengths[field][n] = counts.size;
        this.totalLength[field] += counts.size;
        for (const [term, tf] of counts) {
          let fields = this.postings.get(term);
          if (!fields) this.postings.set(term, (fields = new Array<Postings | undefined>(FIELDS)));
          (fields[field] ??= new Postings()).push(n, tf, counts.size);
        }
      });
    }
  }

  /** Removed chunks stop counting at once; their postings are skipped, and dropped in bulk now and then. */
  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const n = this.numbers.get(id);
      if (n === undefined) continue;
      this.numbers.delete(id);
      this.ids[n] = undefined;
      for (let field = 0; field < FIELDS; field++) this.totalLength[field] -= this.lengths[field][n];
    }
    if (this.ids.length - this.numbers.size > this.ids.length * COMPACT_SHARE) this.compact();
  }

  /** Searches with the query's last distinct terms (nearest the cursor), at most `maxTerms` of them. */
  query(text: string, limit: number, filter?: (id: string) => boolean, maxTerms = 20): LexicalHit[] {
    if (limit <= 0) return [];
    // BM25 cost grows with every term's posting list; the terms nearest the cursor carry the intent.
    // Whole identifiers only: chunks are indexed with identifier parts too, so `renderPage` still matches
    // `renderPage`, while the parts (`render`, `page`) would match half the repository at a high cost.
    const terms = [
      ...new Set(
        identifiers(text)
          .map((w) => w.toLowerCase())
          .reverse(),
      ),
    ]
      .filter((t) => t.length > 1)
      .slice(0, maxTerms);
    const live = this.numbers.size;
    if (terms.length === 0 || live === 0) return [];
    if (this.scores.length < this.ids.length) {
      this.scores = new Float64Array(this.ids.length * 2);
      this.matched = new Uint8Array(this.ids.length * 2);
      this.lastTerm = new Uint8Array(this.ids.length * 2);
    }
    const { scores, matched } = this;
    const everyLive = live === this.ids.length;
    // Chunks with a score, in the order they were first matched (ties keep that order).
    const touched: number[] = [];
    terms.forEach((term, t) => {
      const fields = this.postings.get(term);
      if (!fields) return;
      for (let field = 0; field < FIELDS; field++) {
        const postings = fields[field];
        if (!postings) continue;
        const average = this.totalLength[field] / live;
        if (this.listChunks.length < postings.size) {
          this.listChunks = new Int32Array(postings.size * 2);
          this.listParts = new Float64Array(postings.size * 2);
        }
        const { listChunks, listParts } = this;
        // One pass over the list: the live chunks and their parts, counted for the idf as they are met.
        let matching = 0;
        const { entries, size } = postings;
        for (let i = 0, at = 0; i < size; i++, at += ENTRY) {
          const n = entries[at];
          if (!everyLive && this.ids[n] === undefined) continue;
          const tf = entries[at + 1];
          listChunks[matching] = n;
          listParts[matching++] = DELTA + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * entries[at + 2]) / average));
        }
        const idf = Math.log(1 + (live - matching + 0.5) / (matching + 0.5));
        const boost = FIELD_BOOST[field] * idf;
        for (let i = 0; i < matching; i++) {
          const n = listChunks[i];
          scores[n] += boost * listParts[i];
          if (matched[n] === 0) touched.push(n);
          // The number of query terms a chunk matches multiplies its score; `lastTerm` counts each term once.
          if (this.lastTerm[n] !== t + 1) {
            this.lastTerm[n] = t + 1;
            matched[n]++;
          }
        }
      }
    });
    // The best `limit` hits, best first (ties: first matched first), without sorting them all; only a chunk good
    // enough to be kept is read and filtered (most touched chunks match one rare term).
    const best: LexicalHit[] = [];
    let threshold = -Infinity;
    for (const n of touched) {
      const score = scores[n] * matched[n];
      scores[n] = 0;
      matched[n] = 0;
      this.lastTerm[n] = 0;
      if (best.length >= limit && score <= threshold) continue;
      const id = this.ids[n]!;
      if (filter && !filter(id)) continue;
      best.push({ id, score });
      if (best.length >= limit * 2) {
        best.sort(byScore);
        best.length = limit;
        threshold = best[limit - 1].score;
      }
    }
    return best.sort(byScore).slice(0, limit);
  }

  get size(): number {
    return this.numbers.size;
  }

  toJSON(): string {
    return [...this.jsonPieces()].join('');
  }

  /**
   * The same text as `toJSON` in pieces of one term each, so that a writer never holds the whole index as one
   * string, nor every posting as a pair array, at once: on a large repository that was the build's peak.
   */
  *jsonPieces(): Generator<string> {
    this.compact();
    // Compacted: every number is a live chunk.
    const ids = this.ids as string[];
    yield `{"format":${JSON.stringify(FORMAT)},"ids":${JSON.stringify(ids)},"lengths":${JSON.stringify(this.lengths)},"postings":[`;
    let first = true;
    for (const [term, fields] of this.postings) {
      const entry: Serialized['postings'][number] = [
        term,
        ...Array.from({ length: FIELDS }, (_, f) => fields[f]?.pairs() ?? []),
      ];
      yield `${first ? '' : ','}${JSON.stringify(entry)}`;
      first = false;
    }
    yield ']}';
  }

  private load(data: Serialized): void {
    if (data.format !== FORMAT) throw new Error(`lexical index: unknown format ${String(data.format)}`);
    this.ids = data.ids;
    this.ids.forEach((id, n) => this.numbers.set(id!, n));
    this.lengths = data.lengths;
    for (let field = 0; field < FIELDS; field++) this.totalLength[field] = sum(this.lengths[field]);
    for (const [term, ...fields] of data.postings) {
      this.postings.set(
        term,
        fields.map((pairs, field) => {
          if (!pairs.length) return undefined;
          const postings = new Postings();
          for (const [n, tf] of pairs) postings.push(n, tf, this.lengths[field][n]);
          return postings;
        }),
      );
    }
  }

  /** Renumbers the live chunks densely and drops the removed ones' postings. */
  private compact(): void {
    if (this.numbers.size === this.ids.length) return;
    const renumber = new Int32Array(this.ids.length).fill(-1);
    const ids: string[] = [];
    this.ids.forEach((id, n) => {
      if (id === undefined) return;
      renumber[n] = ids.length;
      ids.push(id);
    });
    this.lengths = this.lengths.map((lengths) => ids.map((id) => lengths[this.numbers.get(id)!]));
    for (const [term, fields] of this.postings) {
      const kept = fields.map((postings) => {
        if (!postings) return undefined;
        const next = new Postings();
        const { entries, size } = postings;
        for (let i = 0, at = 0; i < size; i++, at += ENTRY) {
          const n = entries[at];
          if (renumber[n] >= 0) next.push(renumber[n], entries[at + 1], entries[at + 2]);
        }
        return next.size ? next : undefined;
      });
      if (kept.some(Boolean)) this.postings.set(term, kept);
      else this.postings.delete(term);
    }
    this.ids = ids;
    ids.forEach((id, n) => this.numbers.set(id, n));
  }
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

function byScore(a: LexicalHit, b: LexicalHit): number {
  return b.score - a.score;
}
