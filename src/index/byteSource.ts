/**
 * Bytes read in order, from memory or from a section of a file: what the lexical index and the window stores are
 * restored from. A file's section is checked whole against its checksum, then read again a mebibyte at a time, so
 * that no section is held whole beside the arrays made from it (decisions-memory.md, M15).
 */
import { createHash } from 'crypto';
import { closeSync, openSync, readSync } from 'fs';
import { VarintReader } from './varint';

export interface ByteSource {
  /** Bytes given so far. */
  readonly position: number;
  /** Bytes left. */
  readonly remaining: number;
  varint(): number;
  /** A string as `writeString` wrote it: its UTF-8 byte count, then the bytes. */
  string(): string;
  /** The next `count` bytes, in an array of their own. */
  bytes(count: number): Uint8Array;
}

/** `data` as a source; `what` names it in errors. */
export function memorySource(data: Uint8Array, what: string): ByteSource {
  return new MemorySource(data, what);
}

class MemorySource implements ByteSource {
  private readonly reader: VarintReader;

  constructor(
    private readonly data: Uint8Array,
    private readonly what: string,
  ) {
    this.reader = new VarintReader(data);
  }

  get position(): number {
    return this.reader.at;
  }

  get remaining(): number {
    return this.data.length - this.reader.at;
  }

  varint(): number {
    const value = this.reader.next();
    if (this.reader.at > this.data.length) throw new Error(`${this.what}: truncated`);
    return value;
  }

  string(): string {
    const count = this.varint();
    return Buffer.from(this.take(count)).toString('utf8');
  }

  bytes(count: number): Uint8Array {
    return new Uint8Array(this.take(count));
  }

  private take(count: number): Uint8Array {
    if (count > this.remaining) throw new Error(`${this.what}: truncated`);
    this.reader.at += count;
    return this.data.subarray(this.reader.at - count, this.reader.at);
  }
}

/** Bytes read from a file at a time: few calls, and no section held whole. */
const READ_BYTES = 1 << 20;
/** The longest varint: a `varint` call has this many bytes at hand unless the section ends first. */
const VARINT_MAX_BYTES = 5;

/**
 * Runs `use` on the `bytes` bytes of `file` at `offset` once they match `checksum` (SHA-256, hex); throws
 * `what truncated` or `what checksum mismatch` before `use` reads any. The file is opened once for both passes, so a
 * cache replaced meanwhile is read as it was checked.
 */
export function withFileSection<T>(
  file: string,
  offset: number,
  section: { bytes: number; checksum: string },
  what: string,
  use: (source: ByteSource) => T,
): T {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(section.bytes, VARINT_MAX_BYTES)));
    const hash = createHash('sha256');
    for (let done = 0; done < section.bytes;) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, section.bytes - done), offset + done);
      if (read === 0) throw new Error(`${what} truncated`);
      hash.update(buffer.subarray(0, read));
      done += read;
    }
    if (hash.digest('hex') !== section.checksum) throw new Error(`${what} checksum mismatch`);
    return use(new FileSource(fd, offset, section.bytes, buffer, what));
  } finally {
    closeSync(fd);
  }
}

class FileSource implements ByteSource {
  /** Where the next byte to give lies in `buffer`. */
  private readonly reader: VarintReader;
  /** The end of what `buffer` holds. */
  private filled = 0;
  /** Bytes of the section read from the file so far. */
  private read = 0;

  constructor(
    private readonly fd: number,
    private readonly offset: number,
    private readonly length: number,
    private readonly buffer: Buffer,
    private readonly what: string,
  ) {
    this.reader = new VarintReader(buffer);
  }

  get position(): number {
    return this.read - (this.filled - this.reader.at);
  }

  get remaining(): number {
    return this.length - this.position;
  }

  varint(): number {
    if (this.filled - this.reader.at < VARINT_MAX_BYTES) this.refill();
    const value = this.reader.next();
    if (this.reader.at > this.filled) throw new Error(`${this.what}: truncated`);
    return value;
  }

  string(): string {
    const count = this.varint();
    if (count > this.remaining) throw new Error(`${this.what}: truncated`);
    if (count > this.buffer.length) return Buffer.from(this.bytes(count)).toString('utf8');
    if (this.filled - this.reader.at < count) this.refill();
    this.reader.at += count;
    return this.buffer.toString('utf8', this.reader.at - count, this.reader.at);
  }

  bytes(count: number): Uint8Array {
    if (count > this.remaining) throw new Error(`${this.what}: truncated`);
    const out = new Uint8Array(count);
    const buffered = Math.min(count, this.filled - this.reader.at);
    out.set(this.buffer.subarray(this.reader.at, this.reader.at + buffered));
    this.reader.at += buffered;
    for (let done = buffered; done < count;) {
      const read = readSync(this.fd, out, done, count - done, this.offset + this.read);
      if (read === 0) throw new Error(`${this.what}: truncated`);
      this.read += read;
      done += read;
    }
    return out;
  }

  /** Moves what is left to the buffer's start and fills the rest from the file, as far as the section goes. */
  private refill(): void {
    this.buffer.copyWithin(0, this.reader.at, this.filled);
    this.filled -= this.reader.at;
    this.reader.at = 0;
    while (this.filled < this.buffer.length && this.read < this.length) {
      const want = Math.min(this.buffer.length - this.filled, this.length - this.read);
      const read = readSync(this.fd, this.buffer, this.filled, want, this.offset + this.read);
      if (read === 0) throw new Error(`${this.what}: truncated`);
      this.filled += read;
      this.read += read;
    }
  }
}
