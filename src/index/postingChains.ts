import { ByteWriter, VarintReader } from './varint';

/** Elements the arrays start with: growing from fewer would copy often to save a few KB. */
const MIN_CAPACITY = 1024;
/**
 * Chained postings are folded into the encoded lists once they are this share of the encoded ones (and past a
 * minimum of the index's own): a chained posting takes 8 or 12 bytes against one to three encoded, so they stay a
 * small part of the index, while a fold still follows 1/8 as many appends as the postings it copies (each posting
 * copied about 9 times in all: an append stays amortized O(1)).
 */
export const FOLD_SHARE = 1 / 8;

/**
 * Postings appended to many lists (a list a term or token id), each list's in the order appended, chained in one
 * typed array: an array a list costs an object and slack a list, several times the postings' own bytes in an index of
 * 100,000 files. Posting `r` (numbered from 1; 0 is none) holds `width` numbers at `data[(r - 1) * stride]`, then the
 * number of its list's next posting.
 */
export class PostingChains {
  data = new Int32Array(0);
  /** Postings held. */
  count = 0;
  readonly stride: number;
  /** Per list, the number of its first and last posting (0: none). */
  private head = new Int32Array(0);
  private tail = new Int32Array(0);

  constructor(width: 1 | 2) {
    this.stride = width + 1;
  }

  /** Appends a posting of `first` (and `second`, where postings are two numbers) to `list`. */
  push(list: number, first: number, second = 0): void {
    if (list >= this.head.length) {
      const size = Math.max(list + 1, this.head.length * 2, MIN_CAPACITY);
      this.head = grown(this.head, size);
      this.tail = grown(this.tail, size);
    }
    const { stride } = this;
    const at = this.count * stride;
    if (at === this.data.length) this.data = grown(this.data, Math.max(at * 2, MIN_CAPACITY * stride));
    this.data[at] = first;
    if (stride === 3) this.data[at + 1] = second;
    this.data[at + stride - 1] = 0;
    const posting = ++this.count;
    const last = this.tail[list];
    if (last) this.data[(last - 1) * stride + stride - 1] = posting;
    else this.head[list] = posting;
    this.tail[list] = posting;
  }

  /** The number of `list`'s first posting (0: none). */
  first(list: number): number {
    return list < this.head.length ? this.head[list] : 0;
  }

  /** The number of the posting after `posting` in its list (0: none). */
  next(posting: number): number {
    return this.data[posting * this.stride - 1];
  }

  /** The `k`th number of `posting`. */
  value(posting: number, k = 0): number {
    return this.data[(posting - 1) * this.stride + k];
  }

  clear(): void {
    this.data = new Int32Array(0);
    this.count = 0;
    this.head = new Int32Array(0);
    this.tail = new Int32Array(0);
  }
}

/**
 * Encoded lists with each list's chained postings appended, for `lists` lists. A list is varint numbers from
 * `offsets[list]` to `offsets[list + 1]` in `bytes`, a posting's first number as the gap from the posting before
 * (ascending; a chain holds numbers above its list's encoded ones), then its second. The bytes of lists without
 * chained postings are copied in runs; only a list with some is read, for its last number.
 */
export function appendChains(
  old: Uint32Array,
  bytes: Uint8Array,
  chains: PostingChains,
  lists: number,
): { offsets: Uint32Array; bytes: Uint8Array } {
  const oldLists = old.length - 1;
  const offsets = new Uint32Array(lists + 1);
  const width = chains.stride - 1;
  const writer = new ByteWriter(bytes.length + chains.count * (width + 1));
  // Bytes of `bytes` copied so far, and how far later lists have moved.
  let copied = 0;
  let shift = 0;
  for (let list = 0; list < lists; list++) {
    const start = list < oldLists ? old[list] : bytes.length;
    offsets[list] = start + shift;
    let r = chains.first(list);
    if (r === 0) continue;
    const end = list < oldLists ? old[list + 1] : bytes.length;
    writer.append(bytes.subarray(copied, end));
    copied = end;
    let last = 0;
    for (const reader = new VarintReader(bytes, start); reader.at < end;) {
      last += reader.next();
      if (width === 2) reader.next();
    }
    const before = writer.length;
    for (; r !== 0; r = chains.next(r)) {
      const value = chains.value(r);
      writer.varint(value - last);
      if (width === 2) writer.varint(chains.value(r, 1));
      last = value;
    }
    shift += writer.length - before;
  }
  writer.append(bytes.subarray(copied));
  offsets[lists] = writer.length;
  return { offsets, bytes: writer.length === writer.bytes.length ? writer.bytes : writer.finish() };
}

/** `array` copied into a new one of `size` elements (at least its own). */
export function grown<T extends Int32Array | Uint32Array | Uint16Array | Float64Array | Uint8Array>(
  array: T,
  size: number,
): T {
  const next = new (array.constructor as new (size: number) => T)(Math.max(size, array.length));
  next.set(array);
  return next;
}
