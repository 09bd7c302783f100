/**
 * The tensors of a Hugging Face checkpoint directory — pytorch_model.bin (torch zip + pickle) or model.safetensors,
 * single or sharded with an index json — as (name, dtype, shape, where the bytes are), without reading any tensor
 * data. Every file is checked before conversion starts: a missing shard, a truncated file or a tensor that runs past
 * its file's end is an error here, not a half-written model later.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { CheckpointError } from './errors';
import { readStateDictPickle, type StorageDtype } from './pickle';
import { readZipIndex } from './zipIndex';

export interface TensorSource {
  name: string;
  dtype: StorageDtype;
  /** torch order: the slowest axis first. */
  shape: number[];
  file: string;
  /** File offset of the first element. */
  offset: number;
  /** Identifies the bytes: two names with the same identity are the same tensor (tied weights in a .bin). */
  identity: string;
}

/** A bare pickle's first byte (PROTO): torch's legacy, pre-zip format. */
const PICKLE_PROTO = 0x80;
const ELEMENT_BYTES: Readonly<Record<StorageDtype, number>> = { F32: 4, F16: 2, BF16: 2 };
const SAFETENSORS_DTYPES: ReadonlySet<string> = new Set(['F32', 'F16', 'BF16']);
/** A safetensors header beyond this is not a weights file (the format's own reference limit is 100 MB). */
const MAX_SAFETENSORS_HEADER = 100_000_000;

/** In order of preference: safetensors (no pickle at all), then torch's .bin. */
const LAYOUTS = [
  { index: 'model.safetensors.index.json', single: 'model.safetensors' },
  { index: 'pytorch_model.bin.index.json', single: 'pytorch_model.bin' },
] as const;

export const elementCount = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
export const byteLength = (t: TensorSource): number => elementCount(t.shape) * ELEMENT_BYTES[t.dtype];

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** The weight files of dir: the shards an index names, or the single file. */
export async function weightFiles(dir: string): Promise<string[]> {
  for (const layout of LAYOUTS) {
    const indexPath = path.join(dir, layout.index);
    if (await exists(indexPath)) {
      let index: { weight_map?: Record<string, string> };
      try {
        index = JSON.parse(await fs.readFile(indexPath, 'utf8'));
      } catch (error) {
        throw new CheckpointError('config', `${indexPath} is not valid JSON: ${(error as Error).message}.`);
      }
      const names = [...new Set(Object.values(index.weight_map ?? {}))];
      if (names.length === 0) throw new CheckpointError('config', `${indexPath} lists no weight files.`);
      const files = names.map((n) => path.join(dir, path.basename(n)));
      const missing: string[] = [];
      for (const f of files) if (!(await exists(f))) missing.push(path.basename(f));
      if (missing.length > 0) {
        throw new CheckpointError(
          'missing-file',
          `Shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} listed in ${layout.index} ` +
            `${missing.length > 1 ? 'are' : 'is'} missing from ${dir}: download every shard the index names.`,
        );
      }
      return files;
    }
    if (await exists(path.join(dir, layout.single))) return [path.join(dir, layout.single)];
  }
  throw new CheckpointError(
    'missing-file',
    `${dir} holds no weights: expected ${LAYOUTS.map((l) => `${l.single} or ${l.index}`).join(', or ')}.`,
  );
}

/** Every tensor of the checkpoint in dir, by name. */
export async function listTensors(dir: string): Promise<Map<string, TensorSource>> {
  const out = new Map<string, TensorSource>();
  for (const file of await weightFiles(dir)) {
    const tensors = file.endsWith('.safetensors') ? await safetensorsTensors(file) : await torchTensors(file);
    for (const t of tensors) out.set(t.name, t);
  }
  return out;
}

function isContiguous(shape: readonly number[], stride: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && stride[i] !== expected) return false;
    expected *= shape[i];
  }
  return true;
}

async function torchTensors(file: string): Promise<TensorSource[]> {
  const fh = await fs.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const magic = Buffer.alloc(2);
    await fh.read(magic, 0, 2, 0);
    if (magic[0] === PICKLE_PROTO) {
      throw new CheckpointError(
        'unsupported',
        `${file} is in torch's legacy format (before torch 1.6), which this ` +
          'converter does not read: save it again with torch.save in a current torch.',
      );
    }
    const entries = await readZipIndex(fh, size, path.basename(file));
    const pkl = [...entries.values()].find((e) => e.name.endsWith('/data.pkl') || e.name === 'data.pkl');
    if (!pkl)
      throw new CheckpointError('unsupported', `${file} is a zip file but not a torch checkpoint (no data.pkl).`);
    const prefix = pkl.name.slice(0, -'data.pkl'.length);
    const byteorder = entries.get(`${prefix}byteorder`);
    if (byteorder) {
      const b = Buffer.alloc(byteorder.size);
      await fh.read(b, 0, b.length, byteorder.dataOffset);
      if (b.toString() !== 'little') throw new CheckpointError('unsupported', `${file} was saved big-endian.`);
    }
    const pickle = Buffer.alloc(pkl.size);
    await fh.read(pickle, 0, pkl.size, pkl.dataOffset);
    const out: TensorSource[] = [];
    for (const [name, t] of readStateDictPickle(pickle, path.basename(file))) {
      const entry = entries.get(`${prefix}data/${t.storageKey}`);
      if (!entry)
        throw new CheckpointError('truncated', `${file}: the data of ${name} is missing: the file is damaged.`);
      if (!isContiguous(t.shape, t.stride)) {
        throw new CheckpointError('unsupported', `${file}: ${name} is not stored contiguously.`);
      }
      const source: TensorSource = {
        name,
        dtype: t.dtype,
        shape: t.shape,
        file,
        offset: entry.dataOffset + t.storageOffset * ELEMENT_BYTES[t.dtype],
        identity: `${file}#${t.storageKey}@${t.storageOffset}:${t.shape.join('x')}`,
      };
      if (source.offset + byteLength(source) > entry.dataOffset + entry.size) {
        throw new CheckpointError('truncated', `${file}: ${name} runs past its storage: the file is damaged.`);
      }
      out.push(source);
    }
    return out;
  } finally {
    await fh.close();
  }
}

async function safetensorsTensors(file: string): Promise<TensorSource[]> {
  const fh = await fs.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const truncated = (): CheckpointError =>
      new CheckpointError('truncated', `${file} is truncated (${size} bytes): download it again.`);
    if (size < 8) throw truncated();
    const head = Buffer.alloc(8);
    await fh.read(head, 0, 8, 0);
    const headerLength = Number(head.readBigUInt64LE(0));
    if (headerLength > MAX_SAFETENSORS_HEADER)
      throw new CheckpointError('unsupported', `${file} is not a safetensors file.`);
    if (8 + headerLength > size) throw truncated();
    const json = Buffer.alloc(headerLength);
    await fh.read(json, 0, headerLength, 8);
    let header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
    try {
      header = JSON.parse(json.toString('utf8'));
    } catch {
      throw new CheckpointError('unsupported', `${file} is not a safetensors file (its header is not JSON).`);
    }
    const base = 8 + headerLength;
    const out: TensorSource[] = [];
    for (const [name, info] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      if (!SAFETENSORS_DTYPES.has(info.dtype)) {
        throw new CheckpointError('unsupported', `${file}: ${name} is ${info.dtype}; only F32, F16 and BF16 are read.`);
      }
      const [begin, end] = info.data_offsets;
      const source: TensorSource = {
        name,
        dtype: info.dtype as StorageDtype,
        shape: info.shape,
        file,
        offset: base + begin,
        identity: `${file}@${begin}`,
      };
      if (end - begin !== byteLength(source))
        throw new CheckpointError('unsupported', `${file}: ${name} has a bad size.`);
      if (base + end > size) throw truncated();
      out.push(source);
    }
    return out;
  } finally {
    await fh.close();
  }
}
