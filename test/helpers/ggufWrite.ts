/**
 * A GGUF v3 writer for tests: rewrites a real model's metadata (keys, values, types) and copies its tensor data
 * bytes unchanged behind the new header, so that a modified copy is a valid GGUF apart from the intended edit.
 */
import { promises as fs } from 'fs';
import { readGguf, type GgufHeader, type GgufTensorInfo } from '../../src/model/gguf';
import { encodeGgufHeader, type GgufKv } from '../../src/convert/ggufWriter';

export type { GgufKv };

/** The header's metadata as an ordered, typed list. */
export function kvsOf(header: GgufHeader): GgufKv[] {
  return [...header.metadata].map(([key, value]) => ({ key, value, type: header.metadataTypes.get(key)! }));
}

/**
 * Writes header + KVs + tensor infos, pads to general.alignment, then appends `data` — the tensor data section,
 * whose offsets the tensor infos already give relative to its start.
 */
export async function writeGguf(dest: string, kvs: GgufKv[], tensors: GgufTensorInfo[], data: Buffer): Promise<void> {
  await fs.writeFile(dest, Buffer.concat([encodeGgufHeader(kvs, tensors), data]));
}

/** Copies the GGUF `source` to `dest` with its metadata passed through `edit`; tensor infos and data unchanged. */
export async function rewriteGguf(source: string, dest: string, edit: (kvs: GgufKv[]) => GgufKv[]): Promise<void> {
  const header = await readGguf(source);
  const file = await fs.readFile(source);
  await writeGguf(dest, edit(kvsOf(header)), header.tensors, file.subarray(header.dataOffset));
}
