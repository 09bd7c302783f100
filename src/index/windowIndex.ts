/**
 * Token interning shared by the window stores of one index, so that one query's ids serve all of them. Tokens are
 * never forgotten: a removed file's words cost a map entry each, and an id stays valid for every store.
 */
export class Vocabulary {
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [];

  get size(): number {
    return this.names.length;
  }

  name(id: number): string {
    return this.names[id];
  }

  /** The distinct ids of `words`, sorted, interning the new ones. */
  intern(words: Iterable<string>): Int32Array {
    return distinctSorted(this.internAll(words));
  }

  /** The id of each of `words`, in order (duplicates kept), interning the new ones. */
  internAll(words: Iterable<string>): Int32Array {
    const ids: number[] = [];
    for (const word of words) {
      let id = this.ids.get(word);
      if (id === undefined) {
        id = this.names.length;
        this.ids.set(word, id);
        this.names.push(word);
      }
      ids.push(id);
    }
    return Int32Array.from(ids);
  }

  /** A token set as sorted ids, once per request for every window it is compared with. */
  query(tokens: Iterable<string>): WindowQuery {
    const distinct = new Set(tokens);
    const ids: number[] = [];
    for (const token of distinct) {
      const id = this.ids.get(token);
      if (id !== undefined) ids.push(id);
    }
    return new WindowQuery(distinct, Int32Array.from(ids).sort(), distinct.size);
  }
}

/**
 * A query's distinct tokens, and the same as sorted ids of the vocabulary (`size` counts the tokens the vocabulary
 * lacks too).
 */
export class WindowQuery {
  constructor(
    readonly tokens: ReadonlySet<string>,
    readonly ids: Int32Array,
    readonly size: number,
  ) {}
}

/** One window: its first line (relative to what owns it) and its sorted token ids. */
export interface StoredWindow {
  start: number;
  ids: Int32Array;
}

export interface WindowHit<T> {
  owner: T;
  /** First line of the window, relative to its owner. */
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
/** A token's posting list before its first window: shared, replaced on the first post. */
const EMPTY = new Int32Array(0);

export interface WindowIndexOptions<T> {
  /**
   * Keeps postings per token, so that `search` finds the most similar windows anywhere; without it the index only
   * scores the windows of a given owner (`best`) and costs half the memory.
   */
  search?: { order: (a: T, aStart: number, b: T, bStart: number) => number };
  /** Dead slots tolerated beyond the live ones before a compaction (small only in tests). */
  compactAfter?: number;
}

/**
 * Identifier sets of line windows, grouped by owner (a chunk, a file) under a key, searchable by Jaccard
 * similarity (RepoCoder's sparse retriever) through an inverted index: window slots in typed arrays, postings per
 * interned token, candidates proposed by the query's rarer tokens and then scored exactly. Updates replace an
 * owner's windows; removed windows leave dead slots that a compaction drops once they outnumber the live.
 */
export class WindowIndex<T> {
  private postings: Int32Array[] = [];
  private postingLength: number[] = [];
  /** Live windows per token (postings may still hold dead slots): what decides which tokens propose. */
  private liveCount: number[] = [];
  /** Every slot's sorted token ids, one after another (one typed array, not one object a window). */
  private pool = new Int32Array(1 << 16);
  private poolLength = 0;
  private slotOffset: number[] = [];
  private slotLength: number[] = [];
  /** Per slot: its owner, or undefined once removed. */
  private slotOwner: (T | undefined)[] = [];
  /**
   * 1 for a live slot: what the posting walk tests, since testing `slotOwner` reads each owner object (a cache miss
   * a posting, most of the search's time).
   */
  private slotLive = new Uint8Array(1 << 12);
  private slotStart: number[] = [];
  private readonly keySlots = new Map<string, number[]>();
  private live = 0;
  private counts = new Uint16Array(0);
  private readonly compactAfter: number;

  constructor(
    readonly vocabulary: Vocabulary,
    private readonly options: WindowIndexOptions<T> = {},
  ) {
    this.compactAfter = options.compactAfter ?? 4096;
  }

  get size(): number {
    return this.live;
  }

  has(key: string): boolean {
    return this.keySlots.has(key);
  }

  /** Adds an owner's windows under `key` (nothing when the key is held already); windows without tokens are left out. */
  add(key: string, owner: T, windows: Iterable<StoredWindow>): void {
    if (this.keySlots.has(key)) return;
    const slots: number[] = [];
    for (const { start, ids } of windows) {
      if (ids.length === 0) continue;
      const slot = this.slotOwner.length;
      this.store(ids);
      this.slotOwner.push(owner);
      this.markLive(slot);
      this.slotStart.push(start);
      if (this.options.search) {
        this.coverVocabulary();
        for (const id of ids) {
          this.post(id, slot);
          this.liveCount[id]++;
        }
      }
      slots.push(slot);
      this.live++;
    }
    this.keySlots.set(key, slots);
  }

  remove(keys: Iterable<string>): void {
    for (const key of keys) {
      const slots = this.keySlots.get(key);
      if (!slots) continue;
      this.keySlots.delete(key);
      for (const slot of slots) {
        if (this.options.search) {
          const end = this.slotOffset[slot] + this.slotLength[slot];
          for (let i = this.slotOffset[slot]; i < end; i++) this.liveCount[this.pool[i]]--;
        }
        this.slotOwner[slot] = undefined;
        this.slotLive[slot] = 0;
        this.live--;
      }
    }
    if (this.slotOwner.length - this.live > Math.max(this.live, this.compactAfter)) this.compact();
  }

  /** The windows held under `key`, in order (their ids are views of the pool: copy them to keep them). */
  windows(key: string): StoredWindow[] {
    return (this.keySlots.get(key) ?? []).map((slot) => ({
      start: this.slotStart[slot],
      ids: this.pool.subarray(this.slotOffset[slot], this.slotOffset[slot] + this.slotLength[slot]),
    }));
  }

  /**
   * The `limit` windows most similar to `query`, best first; `skip` leaves out owners (the current file). Ties go
   * to the owners' order (`options.search.order`), so that the answer never depends on the order of updates.
   */
  search(query: WindowQuery, limit: number, skip?: (owner: T) => boolean): WindowHit<T>[] {
    const order = this.options.search?.order;
    if (!order) throw new Error('this window index keeps no postings');
    if (query.size === 0) return [];
    const proposerLimit = Math.max(PROPOSER_MIN, this.live * PROPOSER_SHARE);
    const live = this.liveCount;
    const proposers = [...query.ids]
      .filter((id) => live[id] > 0 && live[id] <= proposerLimit)
      .sort((a, b) => live[a] - live[b] || compareText(this.vocabulary.name(a), this.vocabulary.name(b)));
    // Shared-token counts per slot in a reused typed array; `touched` lists the slots to reset afterwards.
    if (this.counts.length < this.slotOwner.length) this.counts = new Uint16Array(this.slotOwner.length * 2);
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
    const hits: WindowHit<T>[] = [];
    for (const slot of candidates) {
      const owner = this.slotOwner[slot]!;
      if (skip?.(owner)) continue;
      hits.push({ owner, start: this.slotStart[slot], score: this.similarity(query, slot) });
    }
    hits.sort((a, b) => b.score - a.score || order(a.owner, a.start, b.owner, b.start));
    return hits.slice(0, limit);
  }

  /**
   * The window under `key` most similar to `query` (the first of equals; the first window when none shares a
   * token), from the stored ids: no text is tokenized. Undefined unless `owner` is the object held under `key`.
   */
  best(key: string, owner: T, query: WindowQuery): { start: number; score: number } | undefined {
    const slots = this.keySlots.get(key);
    if (!slots || (slots.length > 0 && this.slotOwner[slots[0]] !== owner)) return undefined;
    let best = { start: 0, score: 0 };
    if (query.size === 0) return best;
    for (const slot of slots) {
      const score = this.similarity(query, slot);
      if (score > best.score) best = { start: this.slotStart[slot], score };
    }
    return best;
  }

  private similarity(query: WindowQuery, slot: number): number {
    const length = this.slotLength[slot];
    const common = intersectionSize(query.ids, this.pool, this.slotOffset[slot], length);
    return common / (query.size + length - common);
  }

  private markLive(slot: number): void {
    if (slot >= this.slotLive.length) {
      const grown = new Uint8Array(this.slotLive.length * 2);
      grown.set(this.slotLive);
      this.slotLive = grown;
    }
    this.slotLive[slot] = 1;
  }

  /** Posting lists for every token interned so far (the vocabulary is shared: others may have added tokens). */
  private coverVocabulary(): void {
    for (let id = this.postings.length; id < this.vocabulary.size; id++) {
      this.postings.push(EMPTY);
      this.postingLength.push(0);
      this.liveCount.push(0);
    }
  }

  private post(id: number, slot: number): void {
    let list = this.postings[id];
    const length = this.postingLength[id];
    if (length === list.length) {
      const grown = new Int32Array(Math.max(4, list.length * 2));
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
    const { pool, slotOffset, slotLength, slotOwner, slotStart } = this;
    this.pool = new Int32Array(Math.max(1 << 16, this.poolLength));
    this.poolLength = 0;
    this.slotOffset = [];
    this.slotLength = [];
    this.slotOwner = [];
    this.slotLive = new Uint8Array(Math.max(1 << 12, this.live * 2));
    this.slotStart = [];
    this.postingLength = this.postingLength.map(() => 0);
    const renumbered = new Int32Array(slotOwner.length).fill(-1);
    slotOwner.forEach((owner, slot) => {
      if (owner === undefined) return;
      const next = this.slotOwner.length;
      renumbered[slot] = next;
      const ids = pool.subarray(slotOffset[slot], slotOffset[slot] + slotLength[slot]);
      this.store(ids);
      this.slotOwner.push(owner);
      this.markLive(next);
      this.slotStart.push(slotStart[slot]);
      if (this.options.search) for (const id of ids) this.post(id, next);
    });
    for (const slots of this.keySlots.values()) slots.forEach((slot, i) => (slots[i] = renumbered[slot]));
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

/** `ids` sorted with each id once (sorts `ids` in place; the result is a copy the length of the distinct ids). */
export function distinctSorted(ids: Int32Array): Int32Array {
  ids.sort();
  let length = 0;
  for (let i = 0; i < ids.length; i++) if (i === 0 || ids[i] !== ids[i - 1]) ids[length++] = ids[i];
  return ids.slice(0, length);
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
