import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'fs';
import { LRUCache } from 'lru-cache';
import { tmpdir } from 'os';
import * as path from 'path';
import type { Chunk, ChunkKind, LineRange } from './types';

/**
 * Characters of recently read texts kept decoded: a query reads its candidates' texts and the next keystroke's query
 * mostly the same ones.
 */
const RECENT_CHARS = 1 << 21;
/** Bytes of replaced texts tolerated in the file, beyond the live ones, before it is rewritten. */
const COMPACT_MIN_BYTES = 64 << 20;

/**
 * The indexed chunks' texts in a file of this process's own, read back for the few chunks a query ranks or packs:
 * the texts were the index's largest part (about 6 KB a file, issue 41), and the page cache serves them better
 * than the heap. The file is unlinked once open where the system allows it, so it never outlives the process.
 * When it cannot be written (a full disk), texts stay in memory: nothing is lost.
 */
export class ChunkTexts {
  /** Replaced bytes tolerated beyond the live ones (`COMPACT_MIN_BYTES`; small only in tests). */
  constructor(private readonly compactAfter = COMPACT_MIN_BYTES) {}

  private fd: number | undefined;
  private dir: string | undefined;
  private failed = false;
  private size = 0;
  private live = 0;
  /** Reservations whose texts are not all attached yet (`reserve`): compacting would drop them. */
  private reservations = 0;
  private readonly recent = new LRUCache<number, string>({
    maxSize: RECENT_CHARS,
    sizeCalculation: (text) => Math.max(1, text.length),
  });

  /** `chunks` with their texts written to the file, or as they are if it cannot be written. */
  store(chunks: readonly Chunk[]): Chunk[] {
    const encoded = chunks.map((c) => Buffer.from(c.text, 'utf8'));
    const at = this.append(Buffer.concat(encoded));
    if (at === undefined) return [...chunks];
    let offset = at;
    return chunks.map((chunk, i) => {
      const stored = new StoredChunk(chunk, this, offset, encoded[i].length);
      offset += encoded[i].length;
      return stored;
    });
  }

  /**
   * Sets `bytes` bytes of the file's end aside for texts written later (`writeAt`) and attached (`attach`): a cache's
   * texts are copied whole, not chunk by chunk. Returns where, or undefined when the file cannot be written; until
   * `unreserve`, `compact` waits.
   */
  reserve(bytes: number): number | undefined {
    if (!this.opened()) return undefined;
    const at = this.size;
    this.size += bytes;
    this.reservations++;
    return at;
  }

  unreserve(): void {
    this.reservations--;
  }

  /** Whether a reservation is open: `compact` must wait for it. */
  get reserved(): boolean {
    return this.reservations > 0;
  }

  /** Writes reserved bytes; false when the file cannot be written (later texts then stay in memory). */
  writeAt(at: number, bytes: Uint8Array): boolean {
    try {
      for (let written = 0; written < bytes.length;)
        written += writeSync(this.fd!, bytes, written, bytes.length - written, at + written);
      return true;
    } catch {
      this.failed = true;
      return false;
    }
  }

  /** `chunk` read from `bytes` bytes at `at` of the file, written there earlier (`reserve`, `writeAt`). */
  attach(chunk: Omit<Chunk, 'text'>, at: number, bytes: number): StoredChunk {
    this.live += bytes;
    return new StoredChunk(chunk, this, at, bytes);
  }

  /** A chunk's text as UTF-8, read from the file without decoding when it is stored there. */
  bytesOf(chunk: Chunk): Buffer {
    if (chunk instanceof StoredChunk && chunk.bytes > 0) return readBytes(this.fd, chunk.offset, chunk.bytes);
    return Buffer.from(chunk.text, 'utf8');
  }

  /**
   * The texts of `chunks` as `bytesOf` gives them, each run of texts stored one after another (a file's chunks) read
   * at once: a save reads every text, and a read each cost a tenth of a save at 100,000 files.
   */
  bytesOfAll(chunks: readonly Chunk[]): Buffer[] {
    const texts: Buffer[] = [];
    for (let i = 0; i < chunks.length;) {
      const first = chunks[i];
      if (!(first instanceof StoredChunk) || first.bytes === 0) {
        texts.push(this.bytesOf(first));
        i++;
        continue;
      }
      let end = i + 1;
      let length = first.bytes;
      for (let next = chunks[end]; next instanceof StoredChunk && next.bytes > 0; next = chunks[end]) {
        if (next.offset !== first.offset + length) break;
        length += next.bytes;
        end++;
      }
      const run = readBytes(this.fd, first.offset, length);
      for (let at = 0; i < end; i++) {
        const bytes = (chunks[i] as StoredChunk).bytes;
        texts.push(run.subarray(at, at + bytes));
        at += bytes;
      }
    }
    return texts;
  }

  /** Forgets chunks no longer indexed; `compact` is then due when it returns true. */
  release(chunks: readonly Chunk[]): boolean {
    for (const chunk of chunks) if (chunk instanceof StoredChunk) this.live -= chunk.bytes;
    return this.size - this.live > Math.max(this.live, this.compactAfter);
  }

  /** Copies the texts of `live` chunks (every stored chunk still indexed) to a new file, text by text. */
  compact(live: Iterable<Chunk>): void {
    const old = this.fd;
    const oldDir = this.dir;
    this.fd = this.dir = undefined;
    this.failed = false;
    this.size = this.live = 0;
    this.recent.clear();
    for (const chunk of live) {
      if (!(chunk instanceof StoredChunk) || chunk.bytes === 0) continue;
      const text = readBytes(old, chunk.offset, chunk.bytes);
      chunk.moveTo(this.append(text) ?? text.toString('utf8'));
    }
    if (old !== undefined) closeSync(old);
    if (oldDir) rmSync(oldDir, { recursive: true, force: true });
  }

  read(at: number, bytes: number): string {
    // An empty text shares its offset with the next text: remembered under that offset, it would stand for both.
    if (bytes === 0) return '';
    let text = this.recent.get(at);
    if (text === undefined) {
      text = readBytes(this.fd, at, bytes).toString('utf8');
      this.recent.set(at, text);
    }
    return text;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.fd = this.dir = undefined;
    this.recent.clear();
  }

  /** Writes `bytes` at the file's end and returns where, or undefined when the file cannot be written. */
  private append(bytes: Buffer): number | undefined {
    const at = this.size;
    if (!this.opened() || !this.writeAt(at, bytes)) return undefined;
    this.size += bytes.length;
    this.live += bytes.length;
    return at;
  }

  /** Whether the file is open, opening it first; false once it could not be (or written). */
  private opened(): boolean {
    if (this.failed) return false;
    try {
      if (this.fd === undefined) this.open();
      return true;
    } catch {
      // A full disk or a read-only temp folder: this and later texts stay in memory.
      this.failed = true;
      return false;
    }
  }

  private open(): void {
    this.dir = mkdtempSync(path.join(tmpdir(), 'repogate-texts-'));
    const file = path.join(this.dir, 'chunks');
    this.fd = openSync(file, 'w+', 0o600);
    try {
      unlinkSync(file);
      rmSync(this.dir, { recursive: true, force: true });
      this.dir = undefined;
    } catch {
      // Windows keeps an open file: it is removed on `close`.
    }
  }
}

/** `bytes` bytes of `fd` from `at`; fewer (none) when the read fails, which leaves a chunk without its text. */
function readBytes(fd: number | undefined, at: number, bytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(bytes);
  try {
    return buffer.subarray(0, fd === undefined ? 0 : readSync(fd, buffer, 0, bytes, at));
  } catch {
    return buffer.subarray(0, 0);
  }
}

/** A chunk whose text is read from `ChunkTexts` when asked for; JSON and copies get the text as a plain chunk has it. */
export class StoredChunk implements Chunk {
  readonly id: string;
  readonly path: string;
  readonly kind: ChunkKind;
  readonly range: LineRange;
  readonly symbols: string[];
  #texts: ChunkTexts;
  #at: number | string;
  #bytes: number;

  constructor(chunk: Omit<Chunk, 'text'>, texts: ChunkTexts, at: number, bytes: number) {
    this.id = chunk.id;
    this.path = chunk.path;
    this.kind = chunk.kind;
    this.range = chunk.range;
    this.symbols = chunk.symbols;
    this.#texts = texts;
    this.#at = at;
    this.#bytes = bytes;
  }

  get text(): string {
    return typeof this.#at === 'string' ? this.#at : this.#texts.read(this.#at, this.#bytes);
  }

  /** The text's bytes in the file; 0 when the chunk holds its text. */
  get bytes(): number {
    return typeof this.#at === 'string' ? 0 : this.#bytes;
  }

  get offset(): number {
    return typeof this.#at === 'string' ? 0 : this.#at;
  }

  /** Where `compact` put the text: an offset in the new file, or the text itself when it could not be written. */
  moveTo(at: number | string): void {
    this.#at = at;
  }

  toJSON(): Chunk {
    return { id: this.id, path: this.path, kind: this.kind, range: this.range, text: this.text, symbols: this.symbols };
  }
}
