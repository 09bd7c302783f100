import { identifiers } from './tokenize';
import type { Chunk } from './types';

/** Fallback chunking for files without a grammar (or without declarations): overlapping line windows. */
export function lineWindows(filePath: string, text: string, size = 30, stride = 20): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (let start = 0; start < lines.length; start += stride) {
    const end = Math.min(lines.length, start + size);
    const body = lines.slice(start, end).join('\n');
    if (body.trim()) {
      chunks.push({
        id: `${filePath}#${start}-${end}:window`,
        path: filePath,
        kind: 'window',
        range: { start, end },
        text: body,
        symbols: [],
      });
    }
    if (end === lines.length) break;
  }
  return chunks;
}

/** RepoCoder's retrieval unit: 20-line windows with a stride of 10. */
export const WINDOW_LINES = 20;
export const WINDOW_STRIDE = 10;
/** A chunk this many lines longer than a window still counts as one window (no 5-line tail window). */
const WINDOW_SLACK = 5;

/** Start lines (relative to the chunk) of a chunk's windows. */
export function windowStarts(lineCount: number): number[] {
  if (lineCount <= WINDOW_LINES + WINDOW_SLACK) return [0];
  const starts: number[] = [];
  for (let start = 0; start < lineCount; start += WINDOW_STRIDE) starts.push(start);
  return starts;
}

/**
 * A query's distinct tokens, and the same as sorted ids of the index's vocabulary (`size` counts the tokens the
 * vocabulary lacks too).
 */
export class WindowQuery {
  constructor(
    readonly tokens: ReadonlySet<string>,
    readonly ids: Int32Array,
    readonly size: number,
  ) {}
}

export interface WindowHit {
  chunk: Chunk;
  /** First line of the window, relative to the chunk. */
  start: number;
  /** Jaccard similarity of the window's identifier set to the query's. */
  score: number;
}

/**
 * Tokens whose posting list is longer than this share of all windows do not propose candidates (they still
 * count in the exact Jaccard of the candidates that rarer tokens propose): `const`, `this`, `return` would
 * make every query visit most of the repository.
 */
const PROPOSER_SHARE = 0.05;
/** …but never fewer than this many postings per token, so that small repositories are searched exhaustively. */
const PROPOSER_MIN = 256;
/** Postings visited per query at most, rarest tokens first: bounds the cost on huge repositories. */
const MAX_VISITS = 20000;
/** Candidates scored exactly at most (those sharing the most rare tokens). */
const MAX_SCORED = 400;

/**
 * Every 20-line window of every non-outline chunk of the repository, searchable by Jaccard similarity of
 * identifier sets (RepoCoder's sparse retriever) through an inverted index: window slots in typed arrays,
 * postings per interned token, candidates proposed by the query's rarer tokens and then scored exactly.
 * Updates are per chunk; removed windows leave dead slots that a compaction drops once they outnumber the live.
 */
export class WindowIndex {
  private readonly tokenIds = new Map<string, number>();
  private postings: Int32Array[] = [];
  private postingLength: number[] = [];
  /** Live windows per token (postings may still hold dead slots): what decides which tokens propose. */
  private liveCount: number[] = [];
  private tokenNames: string[] = [];
  /** Every slot's sorted token ids, one after another (one typed array, not one object a window). */
  private pool = new Int32Array(1 << 16);
  private poolLength = 0;
  private slotOffset: number[] = [];
  private slotLength: number[] = [];
  /** Per slot: its chunk, or undefined once removed. */
  private slotChunk: (Chunk | undefined)[] = [];
  /**
   * 1 for a live slot: what the posting walk tests, since testing `slotChunk` reads each chunk object (a cache miss
   * a posting, most of the search's time).
   */
  private slotLive = new Uint8Array(1 << 12);
  private slotStart: number[] = [];
  private readonly chunkSlots = new Map<string, number[]>();
  private live = 0;
  private counts = new Uint16Array(0);

  /** `compactAfter`: dead slots tolerated beyond the live ones before a compaction (small only in tests). */
  constructor(private readonly compactAfter = 4096) {}

  get size(): number {
    return this.live;
  }

  add(chunks: readonly Chunk[]): void {
    for (const chunk of chunks) {
      if (chunk.kind === 'outline' || this.chunkSlots.has(chunk.id)) continue;
      const lines = chunk.text.split('\n');
      const slots: number[] = [];
      for (const start of windowStarts(lines.length)) {
        const ids = this.intern(identifiers(lines.slice(start, start + WINDOW_LINES).join('\n')));
        if (ids.length === 0) continue;
        const slot = this.slotChunk.length;
        this.store(ids);
        this.slotChunk.push(chunk);
        this.markLive(slot);
        this.slotStart.push(start);
        for (const id of ids) {
          this.post(id, slot);
          this.liveCount[id]++;
        }
        slots.push(slot);
        this.live++;
      }
      this.chunkSlots.set(chunk.id, slots);
    }
  }

  remove(chunkIds: Iterable<string>): void {
    for (const id of chunkIds) {
      const slots = this.chunkSlots.get(id);
      if (!slots) continue;
      this.chunkSlots.delete(id);
      for (const slot of slots) {
        const end = this.slotOffset[slot] + this.slotLength[slot];
        for (let i = this.slotOffset[slot]; i < end; i++) this.liveCount[this.pool[i]]--;
        this.slotChunk[slot] = undefined;
        this.slotLive[slot] = 0;
        this.live--;
      }
    }
    if (this.slotChunk.length - this.live > Math.max(this.live, this.compactAfter)) this.compact();
  }

  /**
   * The `limit` windows most similar to `tokens`, best first; `skip` leaves out chunks (the current file).
   * Ties go to the earlier path and line, so that the answer never depends on the order of updates.
   */
  search(tokens: Iterable<string> | WindowQuery, limit: number, skip?: (chunk: Chunk) => boolean): WindowHit[] {
    const { ids: sortedQuery, size: querySize } = tokens instanceof WindowQuery ? tokens : this.query(tokens);
    if (querySize === 0) return [];
    const query = [...sortedQuery];
    const proposerLimit = Math.max(PROPOSER_MIN, this.live * PROPOSER_SHARE);
    const live = this.liveCount;
    const proposers = query
      .filter((id) => live[id] > 0 && live[id] <= proposerLimit)
      .sort((a, b) => live[a] - live[b] || compareText(this.tokenNames[a], this.tokenNames[b]));
    // Shared-token counts per slot in a reused typed array; `touched` lists the slots to reset afterwards.
    if (this.counts.length < this.slotChunk.length) this.counts = new Uint16Array(this.slotChunk.length * 2);
    const counts = this.counts;
    const slotLive = this.slotLive;
    const touched: number[] = [];
    let visits = 0;
    for (const id of proposers) {
      if (visits + live[id] > MAX_VISITS) break;
      visits += live[id];
      const list = this.postings[id];
      const length = this.postingLength[id];
      for (let i = 0; i < length; i++) {
        const slot = list[i];
        if (slotLive[slot] === 0) continue;
        if (counts[slot]++ === 0) touched.push(slot);
      }
    }
    const candidates = mostShared(touched, counts, MAX_SCORED);
    for (const slot of touched) counts[slot] = 0;
    const hits: WindowHit[] = [];
    for (const slot of candidates) {
      const chunk = this.slotChunk[slot]!;
      if (skip?.(chunk)) continue;
      const length = this.slotLength[slot];
      const common = intersectionSize(sortedQuery, this.pool, this.slotOffset[slot], length);
      hits.push({ chunk, start: this.slotStart[slot], score: common / (querySize + length - common) });
    }
    hits.sort((a, b) => b.score - a.score || comparePlaces(a.chunk, a.start, b.chunk, b.start));
    return hits.slice(0, limit);
  }

  /** A token set as this index's sorted ids, once per request for every window it is compared with. */
  query(tokens: Iterable<string>): WindowQuery {
    const distinct = new Set(tokens);
    const ids: number[] = [];
    for (const token of distinct) {
      const id = this.tokenIds.get(token);
      if (id !== undefined) ids.push(id);
    }
    return new WindowQuery(distinct, Int32Array.from(ids).sort(), distinct.size);
  }

  /**
   * The window of `chunk` most similar to `query` (the first of equals; the first window when none shares a
   * token), from the stored ids: no chunk text is tokenized. Undefined for a chunk this index does not hold.
   */
  bestWindow(chunk: Chunk, query: WindowQuery): { start: number; score: number } | undefined {
    const slots = this.chunkSlots.get(chunk.id);
    if (!slots || (slots.length > 0 && this.slotChunk[slots[0]] !== chunk)) return undefined;
    let best = { start: 0, score: 0 };
    if (query.size === 0) return best;
    for (const slot of slots) {
      const length = this.slotLength[slot];
      const common = intersectionSize(query.ids, this.pool, this.slotOffset[slot], length);
      const score = common / (query.size + length - common);
      if (score > best.score) best = { start: this.slotStart[slot], score };
    }
    return best;
  }

  private intern(words: string[]): Int32Array {
    const ids = new Set<number>();
    for (const word of words) {
      let id = this.tokenIds.get(word);
      if (id === undefined) {
        id = this.postings.length;
        this.tokenIds.set(word, id);
        this.postings.push(new Int32Array(4));
        this.postingLength.push(0);
        this.liveCount.push(0);
        this.tokenNames.push(word);
      }
      ids.add(id);
    }
    return Int32Array.from(ids).sort();
  }

  private markLive(slot: number): void {
    if (slot >= this.slotLive.length) {
      const grown = new Uint8Array(this.slotLive.length * 2);
      grown.set(this.slotLive);
      this.slotLive = grown;
    }
    this.slotLive[slot] = 1;
  }

  private post(id: number, slot: number): void {
    let list = this.postings[id];
    const length = this.postingLength[id];
    if (length === list.length) {
      const grown = new Int32Array(list.length * 2);
      grown.set(list);
      this.postings[id] = list = grown;
    }
    list[length] = slot;
    this.postingLength[id] = length + 1;
  }

  private store(ids: Int32Array): void {
    if (this.poolLength + ids.length > this.pool.length) {
      const grown = new Int32Array(Math.max(this.pool.length * 2, this.poolLength + ids.length));
      grown.set(this.pool.subarray(0, this.poolLength));
      this.pool = grown;
    }
    this.pool.set(ids, this.poolLength);
    this.slotOffset.push(this.poolLength);
    this.slotLength.push(ids.length);
    this.poolLength += ids.length;
  }

  /** Renumbers the live slots densely and rebuilds the pool and the postings without the dead ones. */
  private compact(): void {
    const { pool, slotOffset, slotLength, slotChunk, slotStart } = this;
    this.pool = new Int32Array(Math.max(1 << 16, this.poolLength));
    this.poolLength = 0;
    this.slotOffset = [];
    this.slotLength = [];
    this.slotChunk = [];
    this.slotLive = new Uint8Array(Math.max(1 << 12, this.live * 2));
    this.slotStart = [];
    this.postingLength = this.postingLength.map(() => 0);
    const renumbered = new Int32Array(slotChunk.length).fill(-1);
    slotChunk.forEach((chunk, slot) => {
      if (!chunk) return;
      const next = this.slotChunk.length;
      renumbered[slot] = next;
      const ids = pool.subarray(slotOffset[slot], slotOffset[slot] + slotLength[slot]);
      this.store(ids);
      this.slotChunk.push(chunk);
      this.markLive(next);
      this.slotStart.push(slotStart[slot]);
      for (const id of ids) this.post(id, next);
    });
    for (const slots of this.chunkSlots.values()) slots.forEach((slot, i) => (slots[i] = renumbered[slot]));
  }
}

/**
 * The slots sharing the most proposing tokens, whole count levels only (all slots sharing k tokens or none of
 * them), so that which ones are kept never depends on slot numbering; at least the top level, at most `limit`
 * otherwise.
 */
function mostShared(touched: number[], counts: Uint16Array, limit: number): number[] {
  if (touched.length <= limit) return touched;
  const perLevel: number[] = [];
  for (const slot of touched) perLevel[counts[slot]] = (perLevel[counts[slot]] ?? 0) + 1;
  let level = perLevel.length - 1;
  let kept = perLevel[level] ?? 0;
  while (level > 1 && kept + (perLevel[level - 1] ?? 0) <= limit) kept += perLevel[--level] ?? 0;
  return touched.filter((slot) => counts[slot] >= level);
}

/** Size of the intersection of sorted `a` and the sorted run of `pool` at `offset` of `length`. */
function intersectionSize(a: Int32Array, pool: Int32Array, offset: number, length: number): number {
  const b = pool;
  const end = offset + length;
  let i = 0;
  let j = offset;
  let common = 0;
  while (i < a.length && j < end) {
    if (a[i] === b[j]) {
      common++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return common;
}

/** Path, then line, then chunk id (nested chunks can share a first line): the same order however built. */
function comparePlaces(a: Chunk, aStart: number, b: Chunk, bStart: number): number {
  return compareText(a.path, b.path) || a.range.start + aStart - (b.range.start + bStart) || compareText(a.id, b.id);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
