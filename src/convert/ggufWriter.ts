/**
 * GGUF v3 writing: the header as bytes (magic, counts, typed metadata and tensor infos, padded to
 * general.alignment), so that tensor data can follow it in a stream; and a whole file streamed tensor by tensor.
 * Layout: see ../gguf.ts, whose reader reads what this writes.
 */
import { promises as fs } from 'fs';
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufType,
  type GgufTensorInfo,
  type GgufTypeInfo,
  type GgufValue,
} from '../model/gguf';

export interface GgufKv {
  key: string;
  type: GgufTypeInfo;
  value: GgufValue;
}

/** Initial capacity: a StarCoder vocabulary's header is about 2 MB. */
const INITIAL_BYTES = 1 << 16;

/**
 * Little-endian byte sink in one buffer that doubles as needed: a vocabulary of 50k strings costs no allocation per
 * string (the header of a real model is encoded in milliseconds, not the ~200 ms of a buffer per string).
 */
class ByteWriter {
  private buf = Buffer.alloc(INITIAL_BYTES);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.alloc(size);
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  push(b: Buffer): void {
    this.reserve(b.length);
    b.copy(this.buf, this.length);
    this.length += b.length;
  }

  zeros(n: number): void {
    this.reserve(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }

  u32(v: number): void {
    this.reserve(4);
    this.length = this.buf.writeUInt32LE(v, this.length);
  }

  /** As two u32s for a number: a BigInt per string length costs more than the rest of the string. */
  u64(v: number | bigint): void {
    this.reserve(8);
    if (typeof v === 'bigint') {
      this.length = this.buf.writeBigUInt64LE(v, this.length);
      return;
    }
    this.buf.writeUInt32LE(v % 0x1_0000_0000, this.length);
    this.length = this.buf.writeUInt32LE(Math.floor(v / 0x1_0000_0000), this.length + 4);
  }

  string(s: string): void {
    this.reserve(8 + s.length * 3); // at most 3 UTF-8 bytes per UTF-16 unit
    const at = this.length;
    const n = this.buf.write(s, at + 8, 'utf8');
    this.u64(n);
    this.length = at + 8 + n;
  }

  scalar(type: GgufType, v: GgufValue): void {
    if (type === GgufType.STRING) return this.string(v as string);
    this.reserve(8);
    const b = this.buf;
    const at = this.length;
    // Buffer's write methods return the offset after what they wrote.
    switch (type) {
      case GgufType.UINT8:
        this.length = b.writeUInt8(v as number, at);
        break;
      case GgufType.INT8:
        this.length = b.writeInt8(v as number, at);
        break;
      case GgufType.UINT16:
        this.length = b.writeUInt16LE(v as number, at);
        break;
      case GgufType.INT16:
        this.length = b.writeInt16LE(v as number, at);
        break;
      case GgufType.UINT32:
        this.length = b.writeUInt32LE(v as number, at);
        break;
      case GgufType.INT32:
        this.length = b.writeInt32LE(v as number, at);
        break;
      case GgufType.FLOAT32:
        this.length = b.writeFloatLE(v as number, at);
        break;
      case GgufType.BOOL:
        this.length = b.writeUInt8(v ? 1 : 0, at);
        break;
      case GgufType.UINT64:
        this.length = b.writeBigUInt64LE(BigInt(v as bigint), at);
        break;
      case GgufType.INT64:
        this.length = b.writeBigInt64LE(BigInt(v as bigint), at);
        break;
      case GgufType.FLOAT64:
        this.length = b.writeDoubleLE(v as number, at);
        break;
      default:
        throw new Error(`cannot write GGUF type ${type} as a scalar`);
    }
  }

  toBuffer(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** general.alignment from kvs, or GGUF's default. */
export function alignmentOf(kvs: readonly GgufKv[]): number {
  const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value;
  return typeof alignment === 'number' ? alignment : GGUF_DEFAULT_ALIGNMENT;
}

/** Array elements encoded between two pauses of encodeGgufHeaderAsync: a few milliseconds of work. */
const ELEMENTS_PER_STEP = 4096;

/** Writes the header into w, yielding after every ELEMENTS_PER_STEP array elements. */
function* headerSteps(w: ByteWriter, kvs: readonly GgufKv[], tensors: readonly GgufTensorInfo[]): Generator<void> {
  w.push(Buffer.from(GGUF_MAGIC, 'latin1'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kvs.length);
  for (const { key, type, value } of kvs) {
    w.string(key);
    w.u32(type.type);
    if (type.type === GgufType.ARRAY) {
      const items = value as GgufValue[];
      w.u32(type.elementType!);
      w.u64(items.length);
      for (let i = 0; i < items.length; i++) {
        w.scalar(type.elementType!, items[i]);
        if (i % ELEMENTS_PER_STEP === ELEMENTS_PER_STEP - 1) yield;
      }
    } else {
      w.scalar(type.type, value);
    }
  }
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(t.offset);
  }
  const align = alignmentOf(kvs);
  w.zeros((align - (w.length % align)) % align);
}

/** Header + KVs + tensor infos (offsets relative to the data section), padded to the alignment. */
export function encodeGgufHeader(kvs: readonly GgufKv[], tensors: readonly GgufTensorInfo[]): Buffer {
  const w = new ByteWriter();
  for (const _ of headerSteps(w, kvs, tensors));
  return w.toBuffer();
}

/**
 * The same bytes, letting the event loop run between steps: a real vocabulary's 100k strings take longer than an
 * editor's event loop may be held.
 */
export async function encodeGgufHeaderAsync(
  kvs: readonly GgufKv[],
  tensors: readonly GgufTensorInfo[],
): Promise<Buffer> {
  const w = new ByteWriter();
  for (const _ of headerSteps(w, kvs, tensors)) await new Promise((resolve) => setImmediate(resolve));
  return w.toBuffer();
}

/** Typed KV constructors, so that a list of metadata reads as key, value. */
export const kv = {
  str: (key: string, value: string): GgufKv => ({ key, type: { type: GgufType.STRING }, value }),
  u32: (key: string, value: number): GgufKv => ({ key, type: { type: GgufType.UINT32 }, value }),
  f32: (key: string, value: number): GgufKv => ({ key, type: { type: GgufType.FLOAT32 }, value }),
  bool: (key: string, value: boolean): GgufKv => ({ key, type: { type: GgufType.BOOL }, value }),
  strs: (key: string, value: string[]): GgufKv => ({
    key,
    type: { type: GgufType.ARRAY, elementType: GgufType.STRING },
    value,
  }),
  i32s: (key: string, value: number[]): GgufKv => ({
    key,
    type: { type: GgufType.ARRAY, elementType: GgufType.INT32 },
    value,
  }),
};

/** A tensor to stream: its shape and type, its size in bytes, and its data as pieces produced on demand. */
export interface StreamedTensor {
  name: string;
  dims: number[];
  type: number;
  bytes: number;
  data(): Iterable<Buffer>;
}

/**
 * Writes a GGUF whose tensor data is produced piece by piece. Each tensor starts at an aligned offset; the file
 * is written under a temporary name and renamed when complete, so an interrupted write never looks finished.
 */
export async function writeGgufStreamed(
  dest: string,
  kvs: readonly GgufKv[],
  tensors: readonly StreamedTensor[],
): Promise<void> {
  const align = alignmentOf(kvs);
  const padded = (n: number): number => Math.ceil(n / align) * align;
  let offset = 0;
  const infos: GgufTensorInfo[] = tensors.map((t) => {
    const info = { name: t.name, dims: t.dims, type: t.type, offset: BigInt(offset) };
    offset += padded(t.bytes);
    return info;
  });
  const partial = `${dest}.partial`;
  const fh = await fs.open(partial, 'w');
  try {
    await fh.write(encodeGgufHeader(kvs, infos));
    for (const tensor of tensors) {
      let written = 0;
      for (const piece of tensor.data()) {
        await fh.write(piece);
        written += piece.length;
      }
      if (written !== tensor.bytes)
        throw new Error(`tensor ${tensor.name}: ${written} bytes written, ${tensor.bytes} declared`);
      if (padded(written) > written) await fh.write(Buffer.alloc(padded(written) - written));
    }
  } catch (error) {
    await fh.close();
    await fs.rm(partial, { force: true });
    throw error;
  }
  await fh.close();
  await fs.rename(partial, dest);
}
