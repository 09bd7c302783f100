/**
 * A GGUF v2/v3 header reader in plain Node: metadata, tensor infos and where the tensor data starts, read
 * incrementally through a file handle so that a multi-gigabyte model costs only its header. It answers "what is
 * this file" (family, vocabulary, context length) in milliseconds, long before llama.cpp maps the weights.
 * Layout (both versions are little-endian with u64 counts; v1's u32 counts are not supported, as in llama.cpp):
 * "GGUF", u32 version, u64 tensor count, u64 KV count, KVs (u64-length string key, u32 type, value; arrays are
 * u32 element type + u64 count + elements), tensor infos (name, u32 n_dims, u64 dims, u32 ggml type, u64 offset
 * relative to the data section), padding to general.alignment, data.
 */
import { promises as fs } from 'fs';

export type GgufValue = string | number | bigint | boolean | GgufValue[];

/** GGUF metadata value types (gguf.h `enum gguf_type`). */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufType = (typeof GgufType)[keyof typeof GgufType];

/** The stored type of a metadata value: kept so that a file can be written back with the same types. */
export interface GgufTypeInfo {
  type: GgufType;
  /** The element type, for arrays. */
  elementType?: GgufType;
}

export interface GgufTensorInfo {
  name: string;
  /** Fastest-varying axis first (ggml's ne[0]). */
  dims: number[];
  /** ggml_type id. */
  type: number;
  /** Relative to `dataOffset`. */
  offset: bigint;
}

export interface GgufHeader {
  version: number;
  /** In file order. 64-bit integers are bigints; everything else is a number, string, boolean or array. */
  metadata: Map<string, GgufValue>;
  metadataTypes: Map<string, GgufTypeInfo>;
  tensors: GgufTensorInfo[];
  /** Start of the tensor data (the header end aligned to general.alignment, default 32). */
  dataOffset: number;
  fileSize: number;
}

export type GgufErrorReason = 'not-gguf' | 'unsupported-version' | 'truncated' | 'corrupt';

/**
 * Why a file could not be read as GGUF. `head` (the first bytes), `version` and `where` (what was being read
 * when the file ended) let the caller describe it.
 */
export class GgufError extends Error {
  constructor(
    readonly reason: GgufErrorReason,
    message: string,
    readonly details: { head?: Buffer; version?: number; where?: string } = {},
  ) {
    super(message);
    this.name = 'GgufError';
  }
}

function truncated(where: string, end: number): GgufError {
  return new GgufError('truncated', `the file ends at byte ${end}, in ${where}`, { where });
}

export const GGUF_MAGIC = 'GGUF';
export const GGUF_DEFAULT_ALIGNMENT = 32;
const SUPPORTED_VERSIONS = [2, 3];
/** ggml's GGML_MAX_DIMS: llama.cpp rejects tensors with more. */
const MAX_DIMS = 4;
const CHUNK = 1 << 20;

const SCALAR_SIZE: Partial<Record<GgufType, number>> = {
  [GgufType.UINT8]: 1,
  [GgufType.INT8]: 1,
  [GgufType.UINT16]: 2,
  [GgufType.INT16]: 2,
  [GgufType.UINT32]: 4,
  [GgufType.INT32]: 4,
  [GgufType.FLOAT32]: 4,
  [GgufType.BOOL]: 1,
  [GgufType.UINT64]: 8,
  [GgufType.INT64]: 8,
  [GgufType.FLOAT64]: 8,
};

/** A forward-only buffered reader: `has` is synchronous so that hot loops await only when a refill is due. */
class FileReader {
  private buf = Buffer.alloc(0);
  private pos = 0;
  private bufStart = 0;

  constructor(
    private readonly fh: fs.FileHandle,
    readonly fileSize: number,
  ) {}

  get offset(): number {
    return this.bufStart + this.pos;
  }

  has(n: number): boolean {
    return this.buf.length - this.pos >= n;
  }

  async fill(n: number, what: string): Promise<void> {
    const offset = this.offset;
    if (offset + n > this.fileSize) throw truncated(what, this.fileSize);
    const next = Buffer.allocUnsafe(Math.min(Math.max(n, CHUNK), this.fileSize - offset));
    const kept = this.buf.copy(next, 0, this.pos);
    let filled = kept;
    while (filled < next.length) {
      const { bytesRead } = await this.fh.read(next, filled, next.length - filled, offset + filled);
      if (bytesRead === 0) throw truncated(what, offset + filled); // the file shrank while being read
      filled += bytesRead;
    }
    this.buf = next;
    this.bufStart = offset;
    this.pos = 0;
  }

  async need(n: number, what: string): Promise<void> {
    if (!this.has(n)) await this.fill(n, what);
  }

  remaining(): number {
    return this.fileSize - this.offset;
  }

  peek(n: number): Buffer {
    return this.buf.subarray(this.pos, this.pos + n);
  }

  skip(n: number): void {
    this.pos += n;
  }

  u32(): number {
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  u64(): bigint {
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }

  /**
   * A u64 length or count as a number, read as two u32s because a BigInt per vocabulary string is slow; a value
   * beyond 2^53 loses precision but is far past any file's end, which the callers' size checks report.
   */
  count(): number {
    const low = this.buf.readUInt32LE(this.pos);
    const high = this.buf.readUInt32LE(this.pos + 4);
    this.pos += 8;
    return high * 0x1_0000_0000 + low;
  }

  utf8(n: number): string {
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  scalar(type: GgufType): GgufValue {
    const b = this.buf;
    const p = this.pos;
    this.pos += SCALAR_SIZE[type]!;
    switch (type) {
      case GgufType.UINT8:
        return b.readUInt8(p);
      case GgufType.INT8:
        return b.readInt8(p);
      case GgufType.UINT16:
        return b.readUInt16LE(p);
      case GgufType.INT16:
        return b.readInt16LE(p);
      case GgufType.UINT32:
        return b.readUInt32LE(p);
      case GgufType.INT32:
        return b.readInt32LE(p);
      case GgufType.FLOAT32:
        return b.readFloatLE(p);
      case GgufType.BOOL:
        return b.readUInt8(p) !== 0;
      case GgufType.UINT64:
        return b.readBigUInt64LE(p);
      case GgufType.INT64:
        return b.readBigInt64LE(p);
      default:
        return b.readDoubleLE(p);
    }
  }
}

async function readString(r: FileReader, what: string): Promise<string> {
  await r.need(8, what);
  const n = r.count();
  if (n > r.remaining()) throw truncated(what, r.fileSize);
  await r.need(n, what);
  return r.utf8(n);
}

function checkType(type: number, key: string): GgufType {
  if (!Number.isInteger(type) || type < 0 || type > GgufType.FLOAT64) {
    throw new GgufError('corrupt', `metadata key '${key}' has an invalid value type ${type}`);
  }
  return type as GgufType;
}

async function readArray(r: FileReader, key: string): Promise<{ value: GgufValue[]; elementType: GgufType }> {
  await r.need(12, `the array header of '${key}'`);
  const elementType = checkType(r.u32(), key);
  const count = r.count();
  if (elementType === GgufType.ARRAY)
    throw new GgufError('corrupt', `metadata key '${key}' is an array of arrays, which llama.cpp does not read`);
  const size = SCALAR_SIZE[elementType] ?? 8; // a string takes at least its 8-byte length
  if (count * size > r.remaining()) throw truncated(`the ${count} elements of '${key}'`, r.fileSize);
  const value: GgufValue[] = new Array<GgufValue>(count);
  if (elementType === GgufType.STRING) {
    // Vocabularies hold ~150k strings: check the buffer synchronously and await only for a refill.
    for (let i = 0; i < count; i++) {
      if (!r.has(8)) await r.fill(8, `element ${i} of '${key}'`);
      const n = r.count();
      if (!r.has(n)) {
        if (n > r.remaining()) throw truncated(`element ${i} of '${key}'`, r.fileSize);
        await r.fill(n, `element ${i} of '${key}'`);
      }
      value[i] = r.utf8(n);
    }
  } else {
    for (let i = 0; i < count; i++) {
      if (!r.has(size)) await r.fill(Math.min(count - i, Math.floor(CHUNK / size)) * size, `element ${i} of '${key}'`);
      value[i] = r.scalar(elementType);
    }
  }
  return { value, elementType };
}

export async function readGguf(path: string): Promise<GgufHeader> {
  const fh = await fs.open(path, 'r');
  try {
    const fileSize = (await fh.stat()).size;
    const r = new FileReader(fh, fileSize);

    const headLength = Math.min(fileSize, 64);
    if (headLength > 0) await r.fill(headLength, 'the magic');
    const head = Buffer.from(r.peek(headLength));
    const magic = head.subarray(0, 4);
    if (!Buffer.from(GGUF_MAGIC).subarray(0, magic.length).equals(magic)) {
      throw new GgufError(
        'not-gguf',
        `the file starts with ${JSON.stringify(magic.toString('latin1'))}, not "${GGUF_MAGIC}"`,
        { head },
      );
    }
    if (magic.length < 4) throw truncated('the magic', fileSize);
    r.skip(4);

    await r.need(4, 'the version');
    const version = r.u32();
    if (!SUPPORTED_VERSIONS.includes(version)) {
      throw new GgufError(
        'unsupported-version',
        `GGUF version ${version} (supported: ${SUPPORTED_VERSIONS.join(', ')})`,
        { version },
      );
    }
    await r.need(16, 'the tensor and key counts');
    const tensorCount = r.count();
    const kvCount = r.count();

    const metadata = new Map<string, GgufValue>();
    const metadataTypes = new Map<string, GgufTypeInfo>();
    for (let i = 0; i < kvCount; i++) {
      const key = await readString(r, `metadata key ${i}`);
      await r.need(4, `the type of '${key}'`);
      const type = checkType(r.u32(), key);
      if (type === GgufType.ARRAY) {
        const { value, elementType } = await readArray(r, key);
        metadata.set(key, value);
        metadataTypes.set(key, { type, elementType });
      } else if (type === GgufType.STRING) {
        metadata.set(key, await readString(r, `the value of '${key}'`));
        metadataTypes.set(key, { type });
      } else {
        await r.need(SCALAR_SIZE[type]!, `the value of '${key}'`);
        metadata.set(key, r.scalar(type));
        metadataTypes.set(key, { type });
      }
    }

    const tensors: GgufTensorInfo[] = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = await readString(r, `the name of tensor ${i}`);
      await r.need(4, `the dimensions of '${name}'`);
      const nDims = r.u32();
      if (nDims > MAX_DIMS)
        throw new GgufError('corrupt', `tensor '${name}' has ${nDims} dimensions (at most ${MAX_DIMS})`);
      await r.need(8 * nDims + 12, `the shape of '${name}'`);
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(Number(r.u64()));
      const type = r.u32();
      const offset = r.u64();
      tensors.push({ name, dims, type, offset });
    }

    const alignment = metadata.get('general.alignment') ?? GGUF_DEFAULT_ALIGNMENT;
    if (typeof alignment !== 'number' || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
      throw new GgufError('corrupt', `general.alignment is ${String(alignment)}, not a power of two`);
    }
    const dataOffset = Math.ceil(r.offset / alignment) * alignment;
    return { version, metadata, metadataTypes, tensors, dataOffset, fileSize };
  } finally {
    await fh.close();
  }
}

/** tokenizer.ggml.token_type values (llama.cpp `llama_token_type`). */
const TOKEN_TYPE_CONTROL = 3;
const TOKEN_TYPE_USER_DEFINED = 4;

/**
 * Marker-shaped texts: <|x|>, <｜x｜> (DeepSeek's full-width bars), <x> (word-like, not <0x0A> byte tokens),
 * [X] (upper case, as Mistral's [PREFIX] and BERT's [SEP]) and SentencePiece's ▁<PRE> (CodeLlama, whose FIM
 * tokens are often typed as plain text).
 */
const MARKER =
  /^(?:<\|[^\s|]{1,48}\|>|<｜[^\s｜]{1,48}｜>|<\/?[A-Za-z][\w.:-]{0,30}>|\[\/?[A-Z][A-Z0-9_]{0,30}\]|▁<[A-Z]{2,8}>)$/u;

/**
 * Text → id of the tokens that identify a model family: CONTROL and USER_DEFINED tokens, and tokens whose text
 * looks like a special marker whatever their type. The first id wins when a text occurs twice.
 */
export function controlTokens(header: GgufHeader): Map<string, number> {
  const tokens = header.metadata.get('tokenizer.ggml.tokens');
  const types = header.metadata.get('tokenizer.ggml.token_type');
  const out = new Map<string, number>();
  if (!Array.isArray(tokens)) return out;
  const typeOf = Array.isArray(types) ? types : [];
  for (let id = 0; id < tokens.length; id++) {
    const text = tokens[id];
    if (typeof text !== 'string' || out.has(text)) continue;
    const type = typeOf[id];
    if (type === TOKEN_TYPE_CONTROL || type === TOKEN_TYPE_USER_DEFINED || MARKER.test(text)) out.set(text, id);
  }
  return out;
}
