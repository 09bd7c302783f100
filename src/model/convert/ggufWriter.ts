/**
 * The GGUF v3 header as bytes: magic, counts, typed metadata and tensor infos, padded to general.alignment, so
 * that tensor data can follow it in a stream. Layout: see ../gguf.ts, whose reader reads what this writes.
 */
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufType,
  type GgufTensorInfo,
  type GgufTypeInfo,
  type GgufValue,
} from '../gguf';

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

/** general.alignment from kvs, or GGUF's default. */
export function alignmentOf(kvs: readonly GgufKv[]): number {
  const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value;
  return typeof alignment === 'number' ? alignment : GGUF_DEFAULT_ALIGNMENT;
}

/** Header + KVs + tensor infos (offsets relative to the data section), padded to the alignment. */
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
