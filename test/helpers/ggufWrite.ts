/**
 * A GGUF v3 writer for tests: rewrites a real model's metadata (keys, values, types) and copies its tensor data
 * bytes unchanged behind the new header, so that a modified copy is a valid GGUF apart from the intended edit.
 */
import { promises as fs } from 'fs';
import {
  GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufType, readGguf,
  type GgufHeader, type GgufTensorInfo, type GgufTypeInfo, type GgufValue,
} from '../../src/model/gguf';

export interface GgufKv {
  key: string;
  type: GgufTypeInfo;
  value: GgufValue;
}

/** The header's metadata as an ordered, typed list. */
export function kvsOf(header: GgufHeader): GgufKv[] {
  return [...header.metadata].map(([key, value]) => ({ key, value, type: header.metadataTypes.get(key)! }));
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
      case GgufType.UINT8: end = b.writeUInt8(v as number); break;
      case GgufType.INT8: end = b.writeInt8(v as number); break;
      case GgufType.UINT16: end = b.writeUInt16LE(v as number); break;
      case GgufType.INT16: end = b.writeInt16LE(v as number); break;
      case GgufType.UINT32: end = b.writeUInt32LE(v as number); break;
      case GgufType.INT32: end = b.writeInt32LE(v as number); break;
      case GgufType.FLOAT32: end = b.writeFloatLE(v as number); break;
      case GgufType.BOOL: end = b.writeUInt8(v ? 1 : 0); break;
      case GgufType.UINT64: end = b.writeBigUInt64LE(BigInt(v as bigint)); break;
      case GgufType.INT64: end = b.writeBigInt64LE(BigInt(v as bigint)); break;
      case GgufType.FLOAT64: end = b.writeDoubleLE(v as number); break;
      default: throw new Error(`cannot write GGUF type ${type} as a scalar`);
    }
    this.push(b.subarray(0, end));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

/**
 * Writes header + KVs + tensor infos, pads to general.alignment, then appends `data` — the tensor data section,
 * whose offsets the tensor infos already give relative to its start.
 */
export async function writeGguf(dest: string, kvs: GgufKv[], tensors: GgufTensorInfo[], data: Buffer): Promise<void> {
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
  const alignment = kvs.find((kv) => kv.key === 'general.alignment')?.value;
  const align = typeof alignment === 'number' ? alignment : GGUF_DEFAULT_ALIGNMENT;
  w.push(Buffer.alloc((align - (w.length % align)) % align));
  w.push(data);
  await fs.writeFile(dest, w.toBuffer());
}

/** Copies the GGUF `source` to `dest` with its metadata passed through `edit`; tensor infos and data unchanged. */
export async function rewriteGguf(source: string, dest: string, edit: (kvs: GgufKv[]) => GgufKv[]): Promise<void> {
  const header = await readGguf(source);
  const file = await fs.readFile(source);
  await writeGguf(dest, edit(kvsOf(header)), header.tensors, file.subarray(header.dataOffset));
}
