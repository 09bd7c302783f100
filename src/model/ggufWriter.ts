/**
 * GGUF v3 writing: the header (metadata with its stored types, tensor infos) encoded in memory, then the tensor
 * data streamed through a file handle one piece at a time, so that a multi-gigabyte model never sits in memory.
 * The layout is the one src/model/gguf.ts reads.
 */
import { promises as fs } from 'fs';
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufType,
  type GgufTensorInfo,
  type GgufTypeInfo,
  type GgufValue,
} from './gguf';

export interface GgufKv {
  key: string;
  type: GgufTypeInfo;
  value: GgufValue;
}

/** Little-endian byte sink that grows as needed. */
class ByteWriter {
  private chunks: Buffer[] = [];
  length = 0;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }

  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }

  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }

  scalar(type: GgufType, v: GgufValue): void {
    if (type === GgufType.STRING) return this.string(v as string);
    const b = Buffer.alloc(8);
    let end: number; // Buffer's write methods return the offset after what they wrote
    switch (type) {
      case GgufType.UINT8:
        end = b.writeUInt8(v as number);
        break;
      case GgufType.INT8:
        end = b.writeInt8(v as number);
        break;
      case GgufType.UINT16:
        end = b.writeUInt16LE(v as number);
        break;
      case GgufType.INT16:
        end = b.writeInt16LE(v as number);
        break;
      case GgufType.UINT32:
        end = b.writeUInt32LE(v as number);
        break;
      case GgufType.INT32:
        end = b.writeInt32LE(v as number);
        break;
      case GgufType.FLOAT32:
        end = b.writeFloatLE(v as number);
        break;
      case GgufType.BOOL:
        end = b.writeUInt8(v ? 1 : 0);
        break;
      case GgufType.UINT64:
        end = b.writeBigUInt64LE(BigInt(v as bigint));
        break;
      case GgufType.INT64:
        end = b.writeBigInt64LE(BigInt(v as bigint));
        break;
      case GgufType.FLOAT64:
        end = b.writeDoubleLE(v as number);
        break;
      default:
        throw new Error(`cannot write GGUF type ${type} as a scalar`);
    }
    this.push(b.subarray(0, end));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

/** The alignment the KVs declare (general.alignment), else GGUF's default. */
export function alignmentOf(kvs: readonly GgufKv[]): number {
  const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value;
  return typeof alignment === 'number' ? alignment : GGUF_DEFAULT_ALIGNMENT;
}

/** Magic, version, counts, KVs and tensor infos, padded to the alignment: everything before the tensor data. */
export function encodeGgufHeader(kvs: readonly GgufKv[], tensors: readonly GgufTensorInfo[]): Buffer {
  const w = new ByteWriter();
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
      for (const item of items) w.scalar(type.elementType!, item);
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
  w.push(Buffer.alloc((align - (w.length % align)) % align));
  return w.toBuffer();
}

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
