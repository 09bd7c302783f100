import { ownString } from './ownStrings';
import { codeTerms, identifiers } from './tokenize';
import type { Chunk } from './types';
import { appendChains, FOLD_SHARE, grown, PostingChains } from './postingChains';
import type { ByteSource } from './byteSource';
import { ByteWriter, VarintReader, writeString } from './varint';

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
/**
 * Recent postings (both fields) are folded into the encoded lists once there are this many, at the least: a live
 * edit adds a few hundred, and a fold copies every list.
 */
const FOLD_MIN = 1 << 16;
/** Elements a growable typed array starts with: doubling from fewer would copy often to save a few KB. */
const MIN_CAPACITY = 1024;
/** Search scopes whose chunk membership is kept (`LexicalIndex.membersOf`), least recently queried dropped first. */
const SCOPES_KEPT = 4;
/** Numbers a recent posting takes in its chain (`FieldPostings.recent`): its chunk, term frequency, and the link. */
const RECENT = 3;
/** The first bytes of the persisted form (`writeBinary`), a varint-prefixed string: another format is not read. */
const FORMAT = 'repogate-bm25-2';

/**
 * One field's posting lists, a list per term id: chunk numbers ascending, each with its term frequency. The chunk's
 * length is not repeated here but read from the index's lengths by chunk number.
 *
 * Nothing is an object a term (one typed array a list cost about 300 bytes, most of the index's heap): the lists are
 * varint `(chunk gap, tf)` pairs in one byte array, from `offsets[term]` to `offsets[term + 1]`. Postings added
 * since are chained apart in `recent` (each list's chain holds chunks above all its encoded ones, ascending), and
 * folded in when they are many (`FOLD_MIN`, `FOLD_SHARE`).
 */
class FieldPostings {
  /** Postings in the encoded lists, dead ones included: what decides when to fold. */
  encoded = 0;
  offsets: Uint32Array = new Uint32Array(1);
  bytes: Uint8Array = new Uint8Array(0);
  /** Postings added since the last fold: `chunk, tf` each (`RECENT` numbers with the chain's link). */
  readonly recent = new PostingChains(2);

  /** Appends a posting to `term`'s list; `chunk` is above every chunk in it. */
  push(term: number, chunk: number, tf: number): void {
    this.recent.push(term, chunk, tf);
  }

  /** The index + 1 of `term`'s first recent posting (0: none). */
  firstRecent(term: number): number {
    return this.recent.first(term);
  }

  get recentCount(): number {
    return this.recent.count;
  }

  /** Where `term`'s encoded list starts and ends in `bytes`. */
  start(term: number): number {
    return term + 1 < this.offsets.length ? this.offsets[term] : 0;
  }

  end(term: number): number {
    return term + 1 < this.offsets.length ? this.offsets[term + 1] : 0;
  }

  /** Bytes of the encoded lists. */
  used(): number {
    return this.offsets[this.offsets.length - 1];
  }

  /** Appends every list's recent postings to its encoded ones (`appendChains`) and empties `recent`. */
  fold(terms: number): void {
    if (this.recent.count === 0) return;
    const { offsets, bytes } = appendChains(this.offsets, this.bytes, this.recent, terms);
    this.offsets = offsets;
    this.bytes = bytes;
    this.encoded += this.recent.count;
    this.recent.clear();
  }

  /** Every posting of `term`'s list, encoded then recent: chunks ascending. */
  each(term: number, visit: (chunk: number, tf: number) => void): void {
    const end = this.end(term);
    for (let reader = new VarintReader(this.bytes, this.start(term)), chunk = 0; reader.at < end;) {
      chunk += reader.next();
      visit(chunk, reader.next());
    }
    for (let r = this.firstRecent(term); r !== 0; r = this.recent.next(r))
      visit(this.recent.value(r), this.recent.value(r, 1));
  }

  /** Takes encoded lists built elsewhere (a compaction, a load), with no recent postings. */
  set(offsets: Uint32Array, bytes: Uint8Array, encoded: number): void {
    this.offsets = offsets;
    this.bytes = bytes;
    this.encoded = encoded;
    this.recent.clear();
  }
}

/** A search scope's chunks: which numbers (1 each), how many are live, and their fields' total lengths. */
interface ScopeChunks {
  member: Uint8Array;
  live: number;
  totalLength: number[];
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
  /**
   * Per field, chunk number → unique terms in that field; Int32Array, not Uint32Array: the scoring loop reads them
   * as small integers (measured ~5% faster a query).
   */
  private lengths: Int32Array[] = [new Int32Array(0), new Int32Array(0)];
  private readonly totalLength = [0, 0];
  /** Term → id, the same in both fields; ids are numbered in the map's order. */
  private terms = new Map<string, number>();
  private readonly fields = Array.from({ length: FIELDS }, () => new FieldPostings());
  /** Per chunk number during a query: the score so far, the query terms matched, the last term counted. */
  private scores = new Float64Array(0);
  private matched = new Uint8Array(0);
  private lastTerm = new Uint8Array(0);
  /**
   * The search scopes (chunk id prefixes) last queried, each with its chunks: a scoped query skips the other chunks'
   * postings before scoring them, and scores as BM25 over the scope's chunks alone would. Kept up to date as chunks
   * are added and removed; dropped when the chunks are renumbered.
   */
  private readonly scopes = new Map<string, ScopeChunks>();
  /** One posting list's live chunks and their BM25 term parts, gathered in one pass before the idf is known. */
  private listChunks = new Int32Array(0);
  private listParts = new Float64Array(0);

  add(chunks: Chunk[]): void {
    for (const chunk of chunks) {
      if (this.numbers.has(chunk.id)) throw new Error(`lexical index: duplicate chunk id ${chunk.id}`);
      const n = this.ids.length;
      this.ids.push(chunk.id);
      this.numbers.set(chunk.id, n);
      if (n === this.lengths[0].length) this.lengths = this.lengths.map((l) => grown(l, Math.max(n * 2, MIN_CAPACITY)));
      [codeTerms(chunk.text), codeTerms(chunk.symbols.join(' '))].forEach((terms, field) => {
        const counts = new Map<string, number>();
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
        this.lengths[field][n] = counts.size;
        this.totalLength[field] += counts.size;
        for (const [term, tf] of counts) {
          let id = this.terms.get(term);
          // A new term is a slice of the chunk's text, which it would keep alive.
          if (id === undefined) this.terms.set(ownString(term), (id = this.terms.size));
          this.fields[field].push(id, n, tf);
        }
      });
      for (const [scope, chunks] of this.scopes) {
        if (n >= chunks.member.length) chunks.member = grown(chunks.member, Math.max(n * 2, MIN_CAPACITY));
        const under = chunk.id.startsWith(scope);
        chunks.member[n] = under ? 1 : 0;
        if (under) this.count(chunks, n, 1);
      }
    }
    // Both fields at once, on their sum: a field with few postings (the names) would otherwise stay recent.
    const count = (key: 'recentCount' | 'encoded'): number => this.fields.reduce((sum, f) => sum + f[key], 0);
    if (count('recentCount') > Math.max(FOLD_MIN, count('encoded') * FOLD_SHARE))
      for (const postings of this.fields) postings.fold(this.terms.size);
  }

  /** Removed chunks stop counting at once; their postings are skipped, and dropped in bulk now and then. */
  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const n = this.numbers.get(id);
      if (n === undefined) continue;
      this.numbers.delete(id);
      this.ids[n] = undefined;
      for (let field = 0; field < FIELDS; field++) this.totalLength[field] -= this.lengths[field][n];
      for (const chunks of this.scopes.values()) {
        if (chunks.member[n] === 0) continue;
        chunks.member[n] = 0;
        this.count(chunks, n, -1);
      }
    }
    if (this.ids.length - this.numbers.size > this.ids.length * COMPACT_SHARE) this.compact();
  }

  /**
   * Searches with the query's last distinct terms (nearest the cursor), at most `maxTerms` of them, among the chunks
   * whose id starts with `scope` and that `filter` keeps, scored as an index of the scope's chunks alone scores them.
   */
  query(text: string, limit: number, filter?: (id: string) => boolean, scope = '', maxTerms = 20): LexicalHit[] {
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
    const scoped = scope ? this.chunksUnder(scope) : undefined;
    if (scoped?.live === 0) return [];
    // BM25's statistics are the scope's when it has one: the chunk count, the average length, each term's chunks.
    const all = scoped?.live ?? live;
    // Chunks with a score, in the order they were first matched (ties keep that order).
    const touched: number[] = [];
    terms.forEach((term, t) => {
      const id = this.terms.get(term);
      if (id === undefined) return;
      for (let field = 0; field < FIELDS; field++) {
        const average = (scoped?.totalLength ?? this.totalLength)[field] / all;
        const kept = this.gather(field, id, average, everyLive, scoped?.member);
        if (kept <= 0) continue;
        const { listChunks, listParts } = this;
        const idf = Math.log(1 + (all - kept + 0.5) / (kept + 0.5));
        const boost = FIELD_BOOST[field] * idf;
        for (let i = 0; i < kept; i++) {
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

  /**
   * Term `id`'s postings in `field` as parallel lists of live chunk numbers (those `member` marks, when given) and
   * their BM25 term parts against the `average` length, in `listChunks` and `listParts`; returns how many.
   */
  private gather(field: number, id: number, average: number, everyLive: boolean, member?: Uint8Array): number {
    const postings = this.fields[field];
    const start = postings.start(id);
    const end = postings.end(id);
    const firstRecent = postings.firstRecent(id);
    if (start === end && firstRecent === 0) return 0;
    const lengths = this.lengths[field];
    const { bytes } = postings;
    const recent = postings.recent.data;
    // Room for the list: an encoded posting takes two bytes at the least.
    let bound = (end - start) >> 1;
    for (let r = firstRecent; r !== 0; r = recent[(r - 1) * RECENT + 2]) bound++;
    this.reserve(bound);
    const { listChunks, listParts } = this;
    // One pass over the list: the live chunks and their parts, counted for the idf as they are met. The varints
    // are read inline: this loop is most of a query's time.
    let kept = 0;
    for (let at = start, n = 0; at < end;) {
      // Most gaps and nearly every tf take one byte: the loop is entered only past it.
      let gap = bytes[at++];
      if (gap > 0x7f) {
        gap &= 0x7f;
        for (let shift = 7, byte = 0x80; byte > 0x7f; shift += 7) gap |= ((byte = bytes[at++]) & 0x7f) << shift;
      }
      let tf = bytes[at++];
      if (tf > 0x7f) {
        tf &= 0x7f;
        for (let shift = 7, byte = 0x80; byte > 0x7f; shift += 7) tf |= ((byte = bytes[at++]) & 0x7f) << shift;
      }
      n += gap;
      if ((!everyLive && this.ids[n] === undefined) || (member && member[n] === 0)) continue;
      listChunks[kept] = n;
      listParts[kept++] = DELTA + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[n]) / average));
    }
    for (let r = firstRecent; r !== 0; r = recent[(r - 1) * RECENT + 2]) {
      const n = recent[(r - 1) * RECENT];
      if ((!everyLive && this.ids[n] === undefined) || (member && member[n] === 0)) continue;
      const tf = recent[(r - 1) * RECENT + 1];
      listChunks[kept] = n;
      listParts[kept++] = DELTA + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[n]) / average));
    }
    return kept;
  }

  /**
   * The live chunks under `scope`, made on a scope's first query (one pass over the ids) and kept for the few scopes
   * last queried: an editor asks from one or two projects at a time.
   */
  private chunksUnder(scope: string): ScopeChunks {
    let chunks = this.scopes.get(scope);
    if (chunks) {
      this.scopes.delete(scope);
    } else {
      const made: ScopeChunks = {
        member: new Uint8Array(Math.max(this.ids.length, MIN_CAPACITY)),
        live: 0,
        totalLength: [0, 0],
      };
      this.ids.forEach((id, n) => {
        if (!id?.startsWith(scope)) return;
        made.member[n] = 1;
        this.count(made, n, 1);
      });
      chunks = made;
      if (this.scopes.size >= SCOPES_KEPT) this.scopes.delete(this.scopes.keys().next().value!);
    }
    this.scopes.set(scope, chunks);
    return chunks;
  }

  /** Chunk `n` counted in (1) or out of (-1) a scope's statistics. */
  private count(chunks: ScopeChunks, n: number, sign: 1 | -1): void {
    chunks.live += sign;
    for (let field = 0; field < FIELDS; field++) chunks.totalLength[field] += sign * this.lengths[field][n];
  }

  get size(): number {
    return this.numbers.size;
  }

  /**
   * The index in its persisted form (`readBinary`), in pieces: the encoded lists are written as they are held, so a
   * writer never holds a second copy of them. Compacts and folds first. Layout, varints unless said:
   * the FORMAT string; chunks N; terms T; N chunk ids; per field N lengths; T terms; per field its byte count and T
   * list byte counts; then per field its bytes. A string is its UTF-8 byte count and bytes.
   */
  *writeBinary(): Generator<Uint8Array> {
    if (this.numbers.size !== this.ids.length) this.compact();
    for (const postings of this.fields) postings.fold(this.terms.size);
    const terms = this.terms.size;
    const head = new ByteWriter();
    writeString(head, FORMAT);
    head.varint(this.ids.length);
    head.varint(terms);
    // Compacted: every number is a live chunk.
    for (const id of this.ids as string[]) writeString(head, id);
    for (const lengths of this.lengths) for (let n = 0; n < this.ids.length; n++) head.varint(lengths[n]);
    for (const term of this.terms.keys()) writeString(head, term);
    // A field's lists may stop short of the last terms (those it has no posting of): they count 0 bytes.
    for (const postings of this.fields) {
      head.varint(postings.used());
      for (let term = 0; term < terms; term++) head.varint(postings.end(term) - postings.start(term));
    }
    yield head.bytes.subarray(0, head.length);
    for (const postings of this.fields) yield postings.bytes.subarray(0, postings.used());
  }

  /**
   * The index `writeBinary` wrote. `canonical` may give an id string held elsewhere (the chunk's own) to keep in
   * place of the one read, which is then garbage. Throws on another format or bytes that do not add up.
   */
  static readBinary(source: ByteSource, canonical?: (id: string) => string | undefined): LexicalIndex {
    const format = source.string();
    if (format !== FORMAT) throw new Error(`lexical index: unknown format ${format}`);
    const index = new LexicalIndex();
    const counted = (count: number): number => {
      if (count > source.remaining) throw new Error('lexical index: truncated');
      return count;
    };
    const chunks = counted(source.varint());
    const terms = counted(source.varint());
    for (let n = 0; n < chunks; n++) {
      const read = source.string();
      const id = canonical?.(read) ?? read;
      index.ids.push(id);
      index.numbers.set(id, n);
    }
    index.lengths = index.lengths.map((_, field) => {
      const lengths = new Int32Array(chunks);
      for (let n = 0; n < chunks; n++) index.totalLength[field] += lengths[n] = source.varint();
      return lengths;
    });
    for (let term = 0; term < terms; term++) index.terms.set(source.string(), term);
    const offsets = index.fields.map(() => {
      const total = source.varint();
      const offsets = new Uint32Array(terms + 1);
      for (let term = 0; term < terms; term++) offsets[term + 1] = offsets[term] + source.varint();
      if (offsets[terms] !== total) throw new Error('lexical index: list sizes do not add up');
      return offsets;
    });
    index.fields.forEach((postings, field) => {
      // An array of its own: the lists keep no read buffer alive.
      const bytes = source.bytes(offsets[field][terms]);
      postings.set(offsets[field], bytes, countPostings(bytes));
    });
    if (source.remaining !== 0) throw new Error('lexical index: trailing bytes');
    return index;
  }

  /** Renumbers the live chunks densely, drops the removed ones' postings and the terms left without any. */
  private compact(): void {
    this.scopes.clear();
    const renumber = new Int32Array(this.ids.length).fill(-1);
    const ids: string[] = [];
    this.ids.forEach((id, n) => {
      if (id === undefined) return;
      renumber[n] = ids.length;
      ids.push(id);
    });
    this.lengths = this.lengths.map((lengths) => {
      const kept = new Int32Array(Math.max(ids.length, MIN_CAPACITY));
      renumber.forEach((to, n) => {
        if (to >= 0) kept[to] = lengths[n];
      });
      return kept;
    });
    const writers = this.fields.map(({ bytes }) => new ByteWriter(Math.max(bytes.length, MIN_CAPACITY)));
    const offsets = this.fields.map(() => new Uint32Array(this.terms.size + 1));
    const counts = this.fields.map(() => 0);
    const terms = new Map<string, number>();
    for (const [term, id] of this.terms) {
      const next = terms.size;
      this.fields.forEach((postings, field) => {
        const writer = writers[field];
        offsets[field][next] = writer.length;
        let last = 0;
        postings.each(id, (chunk, tf) => {
          const to = renumber[chunk];
          if (to < 0) return;
          writer.varint(to - last);
          writer.varint(tf);
          last = to;
          counts[field]++;
        });
      });
      if (this.fields.some((_, field) => writers[field].length > offsets[field][next])) terms.set(term, next);
    }
    this.fields.forEach((postings, field) => {
      offsets[field][terms.size] = writers[field].length;
      postings.set(offsets[field].slice(0, terms.size + 1), writers[field].finish(), counts[field]);
    });
    this.terms = terms;
    this.ids = ids;
    ids.forEach((id, n) => this.numbers.set(id, n));
  }

  /** Room for `size` postings in the list buffers. */
  private reserve(size: number): void {
    if (this.listChunks.length >= size) return;
    this.listChunks = grown(this.listChunks, size * 2);
    this.listParts = grown(this.listParts, size * 2);
  }
}

/** The postings in encoded lists: every byte but a number's last has the high bit set, and a posting is two numbers. */
function countPostings(bytes: Uint8Array): number {
  let numbers = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] < 0x80) numbers++;
  return numbers / 2;
}

function byScore(a: LexicalHit, b: LexicalHit): number {
  return b.score - a.score;
}
