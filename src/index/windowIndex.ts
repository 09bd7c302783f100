import { ownString } from './ownStrings';
import { appendChains, FOLD_SHARE, grown, PostingChains } from './postingChains';
import type { ByteSource } from './byteSource';
import { ByteWriter, GROWTH, VarintReader, writeString } from './varint';

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

  /** The vocabulary's own copy of `word`, if it holds the word. */
  canonical(word: string): string | undefined {
    const id = this.ids.get(word);
    return id === undefined ? undefined : this.names[id];
  }

  /** Every word by its id. */
  words(): readonly string[] {
    return this.names;
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
        // A word is a slice of the text it was read from, which it would keep alive.
        const own = ownString(word);
        this.ids.set(own, id);
        this.names.push(own);
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
/** Postings added since the last fold before they are folded into the encoded lists, at the least. */
const FOLD_MIN = 1 << 16;
/**
 * An owner's slots are consecutive (added together, renumbered in order), held as one number: the first slot times
 * this, plus how many. An owner is at most a 1 MiB file, 100,000 windows at a stride of 10 lines; slots stay below
 * 2^32 (their offsets are `Uint32Array`s), so the number stays exact (below 2^53).
 */
const SPAN = 2 ** 21;

/** The first bytes of the persisted form (`writeBinary`): another format is not read. */
const FORMAT = 'repogate-windows-1';

export interface WindowIndexOptions<T> {
  /**
   * Keeps postings per token, so that `search` finds the most similar windows anywhere; without it the index only
   * scores the windows of a given owner (`best`) and costs half the memory.
   */
  search?: { order: (a: T, aStart: number, b: T, bStart: number) => number };
  /** Dead slots tolerated beyond the live ones before a compaction (small only in tests). */
  compactAfter?: number;
  /** New postings held apart before they are folded into the encoded lists, at the least (small only in tests). */
  foldAfter?: number;
}

/**
 * Identifier sets of line windows, grouped by owner (a chunk, a file) under a key, searchable by Jaccard
 * similarity (RepoCoder's sparse retriever) through an inverted index: candidates proposed by the query's rarer
 * tokens, then scored exactly. Updates replace an owner's windows; removed windows leave dead slots that a
 * compaction drops once they outnumber the live.
 *
 * Memory is what bounds a monorepo's index (issue 41), so nothing is an object a window or a token: a window's
 * sorted token ids are varint gaps in one byte pool; a token's postings (slots, ascending) are varint gaps in one
 * byte array at the token's offset, and the postings added since are chained apart (`PostingChains`) until they
 * are an eighth of the encoded ones, when both are folded into new encoded lists (`FOLD_SHARE`).
 */
export class WindowIndex<T> {
  /** Every slot's sorted token ids as varint gaps, one slot after another. */
  private pool = new ByteWriter(1 << 16);
  private slotOffset = new Uint32Array(1 << 12);
  private slotLength = new Uint32Array(1 << 12);
  private slotStart = new Uint32Array(1 << 12);
  /**
   * 1 for a live slot: what the posting walk tests, since testing `slotOwner` reads each owner object (a cache miss
   * a posting, most of the search's time).
   */
  private slotLive = new Uint8Array(1 << 12);
  /** Per slot: its owner, or undefined once removed. */
  private slotOwner: (T | undefined)[] = [];
  /** Per key, its slots as one number (`SPAN`): no array an owner. */
  private readonly keySlots = new Map<string, number>();
  private live = 0;
  /** Encoded postings: token id's slots as varint gaps in `postingBytes` from `postingOffset[id]` to `[id + 1]`. */
  private postingOffset: Uint32Array = new Uint32Array(1);
  private postingBytes: Uint8Array = new Uint8Array(0);
  private encodedPostings = 0;
  /** Postings added since the last fold, chained per token id: slots above every encoded one, ascending. */
  private readonly recent = new PostingChains(1);
  /** Live windows per token id (postings may still hold dead slots): what decides which tokens propose. */
  private liveCount = new Int32Array(1 << 12);
  private counts = new Uint16Array(0);
  private readonly compactAfter: number;
  private readonly foldAfter: number;

  constructor(
    readonly vocabulary: Vocabulary,
    private readonly options: WindowIndexOptions<T> = {},
  ) {
    this.compactAfter = options.compactAfter ?? 4096;
    this.foldAfter = options.foldAfter ?? FOLD_MIN;
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
    const first = this.slotOwner.length;
    for (const { start, ids } of windows) {
      if (ids.length === 0) continue;
      const slot = this.addSlot(owner, start, ids);
      if (this.options.search) {
        if (this.liveCount.length < this.vocabulary.size)
          this.liveCount = grown(this.liveCount, Math.ceil(this.vocabulary.size * GROWTH));
        for (const id of ids) {
          this.recent.push(id, slot);
          this.liveCount[id]++;
        }
      }
      this.live++;
    }
    this.keySlots.set(key, first * SPAN + (this.slotOwner.length - first));
    if (this.recent.count > Math.max(this.foldAfter, this.encodedPostings * FOLD_SHARE)) this.fold();
  }

  remove(keys: Iterable<string>): void {
    for (const key of keys) {
      const span = this.keySlots.get(key);
      if (span === undefined) continue;
      this.keySlots.delete(key);
      for (const slot of slotsOf(span)) {
        if (this.options.search) for (const id of this.slotIds(slot)) this.liveCount[id]--;
        this.slotOwner[slot] = undefined;
        this.slotLive[slot] = 0;
        this.live--;
      }
    }
    if (this.slotOwner.length - this.live > Math.max(this.live, this.compactAfter)) this.compact();
  }

  /** The windows held under `key`, in order. */
  windows(key: string): StoredWindow[] {
    const span = this.keySlots.get(key);
    return span === undefined
      ? []
      : slotsOf(span).map((slot) => ({ start: this.slotStart[slot], ids: this.slotIds(slot) }));
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
    const visit = (slot: number): void => {
      if (slotLive[slot] !== 0 && counts[slot]++ === 0) touched.push(slot);
    };
    let visits = 0;
    for (const id of proposers) {
      if (visits + live[id] > MAX_VISITS) break;
      visits += live[id];
      if (id + 1 < this.postingOffset.length) {
        const reader = new VarintReader(this.postingBytes, this.postingOffset[id]);
        const end = this.postingOffset[id + 1];
        for (let slot = 0; reader.at < end;) visit((slot += reader.next()));
      }
      for (let r = this.recent.first(id); r !== 0; r = this.recent.next(r)) visit(this.recent.value(r));
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
    const span = this.keySlots.get(key);
    if (span === undefined) return undefined;
    const slots = slotsOf(span);
    if (slots.length > 0 && this.slotOwner[slots[0]] !== owner) return undefined;
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
    const common = intersectionSize(query.ids, new VarintReader(this.pool.bytes, this.slotOffset[slot]), length);
    return common / (query.size + length - common);
  }

  private slotIds(slot: number): Int32Array {
    return decodeIds(this.pool.bytes, this.slotOffset[slot], this.slotLength[slot]);
  }

  private addSlot(owner: T, start: number, ids: Int32Array): number {
    const slot = this.slotOwner.length;
    if (slot === this.slotOffset.length) {
      const size = Math.ceil((slot + 1) * GROWTH);
      this.slotOffset = grown(this.slotOffset, size);
      this.slotLength = grown(this.slotLength, size);
      this.slotStart = grown(this.slotStart, size);
      this.slotLive = grown(this.slotLive, size);
    }
    this.slotOffset[slot] = this.pool.length;
    this.slotLength[slot] = ids.length;
    this.slotStart[slot] = start;
    this.slotLive[slot] = 1;
    this.slotOwner.push(owner);
    let previous = 0;
    for (const id of ids) {
      this.pool.varint(id - previous);
      previous = id;
    }
    return slot;
  }

  /**
   * The index in its persisted form (`restoreBinary`), in pieces: a head written here, then views of the pool and the
   * encoded postings, whose bytes later changes never overwrite (they append, or replace the arrays). Folds first.
   * Head, varints: FORMAT; slots S, and per slot its pool offset's gap, id count, start and live flag; live windows;
   * keys K, and per key its string, first slot and slot count; pool bytes; with postings (1, else 0): postings
   * encoded, tokens T, T list byte counts, live counts L and the L counts.
   */
  *writeBinary(): Generator<Uint8Array> {
    if (this.options.search && this.recent.count > 0) this.fold();
    const slots = this.slotOwner.length;
    const head = new ByteWriter(1 << 16);
    writeString(head, FORMAT);
    head.varint(slots);
    for (let slot = 0, previous = 0; slot < slots; slot++) {
      head.varint(this.slotOffset[slot] - previous);
      previous = this.slotOffset[slot];
      head.varint(this.slotLength[slot]);
      head.varint(this.slotStart[slot]);
      head.varint(this.slotLive[slot]);
    }
    head.varint(this.live);
    head.varint(this.keySlots.size);
    for (const [key, span] of this.keySlots) {
      const count = span % SPAN;
      writeString(head, key);
      head.varint((span - count) / SPAN);
      head.varint(count);
    }
    head.varint(this.pool.length);
    const tokens = this.postingOffset.length - 1;
    const postingBytes = this.postingOffset[tokens];
    if (this.options.search) {
      head.varint(1);
      head.varint(this.encodedPostings);
      head.varint(tokens);
      for (let token = 0; token < tokens; token++)
        head.varint(this.postingOffset[token + 1] - this.postingOffset[token]);
      head.varint(this.vocabulary.size);
      for (let id = 0; id < this.vocabulary.size; id++) head.varint(this.liveCount[id] ?? 0);
    } else {
      head.varint(0);
    }
    yield head.bytes.subarray(0, head.length);
    yield this.pool.bytes.subarray(0, this.pool.length);
    if (this.options.search) yield this.postingBytes.subarray(0, postingBytes);
  }

  /**
   * Adds the windows `writeBinary` wrote, the next `length` bytes of `source`, with the same vocabulary's ids, of the
   * keys whose owner `ownerOf` finds (giving the key string to keep, the owner's own): an empty index takes the
   * arrays as they are read, the others' windows are dropped; an index that holds windows already (a file updated
   * meanwhile), or whose vocabulary gave the saved words other ids (`remap`, saved id to id here), adds the keys it
   * lacks one by one. Throws on another format or bytes that do not add up.
   */
  restoreBinary(
    source: ByteSource,
    length: number,
    ownerOf: (key: string) => { key: string; owner: T } | undefined,
    remap?: Int32Array,
  ): void {
    const start = source.position;
    const sizes = (count: number): number => {
      if (count > length) throw new Error('window index: sizes do not add up');
      return count;
    };
    const format = source.string();
    if (format !== FORMAT) throw new Error(`window index: unknown format ${format}`);
    const slots = sizes(source.varint());
    const capacity = Math.max(slots, 1 << 12);
    const offsets = new Uint32Array(capacity);
    const lengths = new Uint32Array(capacity);
    const starts = new Uint32Array(capacity);
    const liveFlags = new Uint8Array(capacity);
    for (let slot = 0, offset = 0; slot < slots; slot++) {
      offsets[slot] = offset += source.varint();
      lengths[slot] = source.varint();
      starts[slot] = source.varint();
      liveFlags[slot] = source.varint();
    }
    let live = source.varint();
    const keys: { key: string; first: number; count: number }[] = [];
    for (let k = sizes(source.varint()); k > 0; k--) {
      const key = source.string();
      keys.push({ key, first: source.varint(), count: source.varint() });
    }
    const poolBytes = sizes(source.varint());
    const search = source.varint() === 1;
    let encoded = 0;
    let postingOffset = new Uint32Array(1);
    let liveCount = new Int32Array(1 << 12);
    if (search) {
      encoded = source.varint();
      const tokens = sizes(source.varint());
      postingOffset = new Uint32Array(tokens + 1);
      for (let token = 0; token < tokens; token++) postingOffset[token + 1] = postingOffset[token] + source.varint();
      const counted = sizes(source.varint());
      liveCount = new Int32Array(Math.max(counted, 1 << 12));
      for (let id = 0; id < counted; id++) liveCount[id] = source.varint();
    }
    const postingBytes = postingOffset[postingOffset.length - 1];
    if (source.position - start + poolBytes + postingBytes !== length || search !== Boolean(this.options.search))
      throw new Error('window index: sizes do not add up');
    const pool = source.bytes(poolBytes);
    const postings = search ? source.bytes(postingBytes) : undefined;
    if (remap || this.slotOwner.length > 0 || this.keySlots.size > 0) {
      for (const { key, first, count } of keys) {
        const found = ownerOf(key);
        if (!found || this.keySlots.has(found.key)) continue;
        const windows = Array.from({ length: count }, (_, i) => {
          const ids = decodeIds(pool, offsets[first + i], lengths[first + i]);
          return { start: starts[first + i], ids: remap ? remapIds(ids, remap) : ids };
        });
        this.add(found.key, found.owner, windows);
      }
      return;
    }
    const owners: (T | undefined)[] = new Array<T | undefined>(slots).fill(undefined);
    this.pool = ByteWriter.over(pool);
    for (const { key, first, count } of keys) {
      const found = ownerOf(key);
      if (found) {
        this.keySlots.set(found.key, first * SPAN + count);
        owners.fill(found.owner, first, first + count);
        continue;
      }
      // A file gone since the save: its windows are dead slots, as a removal leaves them.
      for (let slot = first; slot < first + count; slot++) {
        if (search) for (const id of decodeIds(pool, offsets[slot], lengths[slot])) liveCount[id]--;
        liveFlags[slot] = 0;
        live--;
      }
    }
    this.slotOffset = offsets;
    this.slotLength = lengths;
    this.slotStart = starts;
    this.slotLive = liveFlags;
    this.slotOwner = owners;
    this.live = live;
    if (search) {
      this.postingOffset = postingOffset;
      this.postingBytes = postings!;
      this.encodedPostings = encoded;
      this.liveCount = liveCount;
    }
  }

  /** Appends every token's recent postings to its encoded ones, and empties the recent lists. */
  private fold(): void {
    const tokens = Math.max(this.postingOffset.length - 1, this.vocabulary.size);
    const { offsets, bytes } = appendChains(this.postingOffset, this.postingBytes, this.recent, tokens);
    this.postingOffset = offsets;
    this.postingBytes = bytes;
    this.encodedPostings += this.recent.count;
    this.recent.clear();
  }

  /** Renumbers the live slots densely and rebuilds the pool and the postings without the dead ones. */
  private compact(): void {
    const { slotOwner: owners, slotOffset: offsets, slotLength: lengths, slotStart: starts } = this;
    const pool = this.pool.bytes;
    const capacity = this.slotOffset.length;
    this.pool = new ByteWriter(Math.max(1 << 16, this.pool.length));
    this.slotOffset = new Uint32Array(capacity);
    this.slotLength = new Uint32Array(capacity);
    this.slotStart = new Uint32Array(capacity);
    this.slotLive = new Uint8Array(capacity);
    this.slotOwner = [];
    this.postingOffset = new Uint32Array(1);
    this.postingBytes = new Uint8Array(0);
    this.encodedPostings = 0;
    this.recent.clear();
    const renumbered = new Int32Array(owners.length).fill(-1);
    owners.forEach((owner, slot) => {
      if (owner === undefined) return;
      const ids = decodeIds(pool, offsets[slot], lengths[slot]);
      const next = this.addSlot(owner, starts[slot], ids);
      renumbered[slot] = next;
      if (this.options.search) for (const id of ids) this.recent.push(id, next);
    });
    if (this.options.search) this.fold();
    for (const [key, span] of this.keySlots) {
      const count = span % SPAN;
      if (count > 0) this.keySlots.set(key, renumbered[(span - count) / SPAN] * SPAN + count);
    }
  }
}

/** The `length` sorted ids stored as varint gaps in `bytes` from `offset`. */
function decodeIds(bytes: Uint8Array, offset: number, length: number): Int32Array {
  const ids = new Int32Array(length);
  const reader = new VarintReader(bytes, offset);
  for (let i = 0, id = 0; i < length; i++) ids[i] = id += reader.next();
  return ids;
}

/** Sorted ids under another numbering: a window's ids are distinct, and stay so under a one-to-one remap. */
function remapIds(ids: Int32Array, remap: Int32Array): Int32Array {
  return ids.map((id) => remap[id]).sort();
}

/** The slots of a key's span (`SPAN`). */
function slotsOf(span: number): number[] {
  const count = span % SPAN;
  const first = (span - count) / SPAN;
  return Array.from({ length: count }, (_, i) => first + i);
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

/** Size of the intersection of sorted `a` and the `length` sorted ids that `reader` reads as gaps. */
function intersectionSize(a: Int32Array, reader: VarintReader, length: number): number {
  let i = 0;
  let common = 0;
  for (let k = 0, id = 0; k < length && i < a.length; k++) {
    id += reader.next();
    while (i < a.length && a[i] < id) i++;
    if (a[i] === id) {
      common++;
      i++;
    }
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
