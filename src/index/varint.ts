/**
 * Unsigned LEB128 varints: seven bits a byte, the high bit set on every byte but a number's last. Sorted ids stored
 * as gaps take one or two bytes each instead of four.
 */

/**
 * Growable arrays that last (a writer's bytes, an index's slot arrays) grow by this factor: an index of 100,000 files
 * keeps about 2 million windows, and doubling would leave up to half of each array unused, for 4 copies of a byte
 * in all instead of 1.
 */
export const GROWTH = 1.25;

/** A growable byte buffer that numbers are appended to as varints. */
export class ByteWriter {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity = 1 << 12) {
    this.bytes = new Uint8Array(capacity);
  }

  /** A writer that has written `bytes`, holding that array itself (never written into): its next write copies. */
  static over(bytes: Uint8Array): ByteWriter {
    const writer = new ByteWriter(0);
    writer.bytes = bytes;
    writer.length = bytes.length;
    return writer;
  }

  varint(value: number): void {
    if (this.length + 5 > this.bytes.length) this.grow(this.length + 5);
    let rest = value >>> 0;
    while (rest >= 0x80) {
      this.bytes[this.length++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.bytes[this.length++] = rest;
  }

  append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.bytes.length) this.grow(this.length + bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes written, in an array of their exact length. */
  finish(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  private grow(needed: number): void {
    const grown = new Uint8Array(Math.max(needed, Math.ceil(this.bytes.length * GROWTH)));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

/** Reads varints from `bytes` at `at`, which it advances. */
export class VarintReader {
  constructor(
    private readonly bytes: Uint8Array,
    public at = 0,
  ) {}

  next(): number {
    const bytes = this.bytes;
    let byte = bytes[this.at++];
    let value = byte & 0x7f;
    for (let shift = 7; byte & 0x80; shift += 7) {
      byte = bytes[this.at++];
      value |= (byte & 0x7f) << shift;
    }
    return value >>> 0;
  }
}

/** A string as its UTF-8 byte count and bytes. */
export function writeString(writer: ByteWriter, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  writer.varint(bytes.length);
  writer.append(bytes);
}
