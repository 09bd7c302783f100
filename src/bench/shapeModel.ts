/**
 * Timing-only models: random-weight GGUFs with the exact dimensions of real code models, so that speed is
 * measured at the sizes people run without downloading gigabytes. Llama architecture (what llama.cpp runs
 * fastest on every backend), Q8_0 matrices, and the demo model's tokenizer padded to the real vocabulary size,
 * its special tokens renamed to the real model's family (Qwen2.5-Coder's `<|fim_prefix|>` and `<|file_sep|>`,
 * StarCoder2's `<file_sep>`, ...), so that the engine builds that family's prompt; the Repoformer shapes keep
 * the demo model's `<cc>` gate and prompt metadata. Models with a GELU MLP (StarCoder, StarCoder2) get a gated
 * FFN of the same parameter count, so a token costs the same arithmetic.
 * The weights are random: the text they write is noise, and the metadata says so (repogate.timing_only).
 */
import { existsSync, promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FAMILIES, type SpecialRole } from '../model/families';
import { readGguf, type GgufValue } from '../model/gguf';
import { kv, writeGgufStreamed, type GgufKv, type StreamedTensor } from '../convert/ggufWriter';
import { f32ToF16, GGML_TYPE_ID, outputBytes, Q8_0_BLOCK, Q8_0_BLOCK_BYTES } from '../convert/numbers';

export interface ModelShape {
  name: string;
  /** The real model whose dimensions these are. */
  of: string;
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  vocab: number;
  contextLength: number;
  ropeBase: number;
  /** Output projection shared with the token embedding (no output.weight), as in the real model. */
  tied: boolean;
  /** The real model's family (src/model/families.ts): its special tokens and so its prompt layout. */
  family: ShapeFamily;
}

/** The families a shape can carry; 'repoformer' is the demo model's own layout (its tokens and metadata kept). */
export type ShapeFamily = 'repoformer' | 'qwen2.5-coder' | 'starcoder2' | 'deepseek-coder';

/** Bumped when the files this module writes change, so that cached files are rewritten. */
const SHAPE_VERSION = 2;
/** llama_ftype LLAMA_FTYPE_MOSTLY_Q8_0. */
const FILE_TYPE_Q8_0 = 7;
const TOKEN_TYPE_CONTROL = 3;
/** Blocks of random quants written over and over (about 8 MB): random enough for timing, cheap to make. */
const TEMPLATE_BLOCKS = 1 << 18;
/** Standard deviation of int8 quants uniform on [-128, 127]. */
const QUANT_STD = 73.9;
/** Metadata of the demo model that describes its training, not the timing model. */
const DROPPED_KEY = /^(repogate\.train\.|general\.(name|description|file_type)$|llama\.)/;
/** The demo model's prompt metadata (its Repoformer layout and gate): dropped when a shape carries another family. */
const DEMO_PROMPT_KEY = /^repogate\./;
/** The demo model's special tokens by role (the tokenizer every shape is made from). */
const DEMO_FAMILY = 'repogate-tiny';

/** A gated FFN with the parameters of a GELU MLP of width `inner`: 3·d·f = 2·d·inner, f rounded to Q8_0 blocks. */
const gatedEquivalent = (inner: number): number => Math.round((2 * inner) / 3 / Q8_0_BLOCK) * Q8_0_BLOCK;

/** Dimensions from each model's config.json on the Hugging Face hub. */
export const SHAPES: readonly ModelShape[] = [
  {
    name: 'qwen2.5-coder-0.5b',
    of: 'Qwen/Qwen2.5-Coder-0.5B',
    embedding: 896,
    layers: 24,
    heads: 14,
    kvHeads: 2,
    feedForward: 4864,
    vocab: 151936,
    contextLength: 32768,
    ropeBase: 1e6,
    tied: true,
    family: 'qwen2.5-coder',
  },
  {
    name: 'qwen2.5-coder-1.5b',
    of: 'Qwen/Qwen2.5-Coder-1.5B',
    embedding: 1536,
    layers: 28,
    heads: 12,
    kvHeads: 2,
    feedForward: 8960,
    vocab: 151936,
    contextLength: 32768,
    ropeBase: 1e6,
    tied: true,
    family: 'qwen2.5-coder',
  },
  {
    name: 'qwen2.5-coder-7b',
    of: 'Qwen/Qwen2.5-Coder-7B',
    embedding: 3584,
    layers: 28,
    heads: 28,
    kvHeads: 4,
    feedForward: 18944,
    vocab: 152064,
    contextLength: 32768,
    ropeBase: 1e6,
    tied: false,
    family: 'qwen2.5-coder',
  },
  {
    name: 'repoformer-1b',
    of: 'xiaowu0162/repoformer-1b (StarCoderBase-1B + 2 tokens)',
    embedding: 2048,
    layers: 24,
    heads: 16,
    kvHeads: 1,
    feedForward: gatedEquivalent(8192),
    vocab: 49154,
    contextLength: 8192,
    ropeBase: 1e4,
    tied: true,
    family: 'repoformer',
  },
  {
    name: 'repoformer-3b',
    of: 'xiaowu0162/repoformer-3b (StarCoderBase-3B + 2 tokens)',
    embedding: 2816,
    layers: 36,
    heads: 22,
    kvHeads: 1,
    feedForward: gatedEquivalent(11264),
    vocab: 49154,
    contextLength: 8192,
    ropeBase: 1e4,
    tied: true,
    family: 'repoformer',
  },
  {
    name: 'repoformer-7b',
    of: 'xiaowu0162/repoformer-7B (StarCoderBase-7B + 2 tokens)',
    embedding: 4096,
    layers: 42,
    heads: 32,
    kvHeads: 1,
    feedForward: gatedEquivalent(16384),
    vocab: 49154,
    contextLength: 8192,
    ropeBase: 1e4,
    tied: true,
    family: 'repoformer',
  },
  {
    name: 'starcoder2-3b',
    of: 'bigcode/starcoder2-3b',
    embedding: 3072,
    layers: 30,
    heads: 24,
    kvHeads: 2,
    feedForward: gatedEquivalent(12288),
    vocab: 49152,
    contextLength: 16384,
    ropeBase: 999999.4,
    tied: true,
    family: 'starcoder2',
  },
  {
    name: 'deepseek-coder-1.3b',
    of: 'deepseek-ai/deepseek-coder-1.3b-base',
    embedding: 2048,
    layers: 24,
    heads: 16,
    kvHeads: 16,
    feedForward: 5504,
    vocab: 32256,
    contextLength: 16384,
    ropeBase: 1e5,
    tied: false,
    family: 'deepseek-coder',
  },
];

export function findShape(name: string): ModelShape {
  const shape = SHAPES.find((s) => s.name === name);
  if (!shape) throw new Error(`unknown shape "${name}"; known: ${SHAPES.map((s) => s.name).join(', ')}`);
  return shape;
}

/** ~/.cache/repogate/shapes, or $XDG_CACHE_HOME/repogate/shapes: outside any clone, kept between runs. */
export function shapeCacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'repogate', 'shapes');
}

/** Bytes of the Q8_0 file (for a fits-in-memory check before writing or loading). */
export function shapeBytes(shape: ModelShape): number {
  const d = shape.embedding;
  const headDim = d / shape.heads;
  const perLayer = d * d * 2 + 2 * d * shape.kvHeads * headDim + 3 * d * shape.feedForward;
  const matrices = shape.layers * perLayer + d * shape.vocab * (shape.tied ? 1 : 2);
  return outputBytes('Q8_0', matrices);
}

/**
 * The timing model for `shape` at `dest` (default: in the shape cache), written unless a file of this shape and
 * version is already there. `tokenizerModel` is the GGUF whose tokenizer and repogate.* metadata are used.
 */
export async function ensureShapeModel(shape: ModelShape, tokenizerModel: string, dest?: string): Promise<string> {
  const file = dest ?? path.join(shapeCacheDir(), `${shape.name}-q8_0.gguf`);
  if (existsSync(file) && (await isCurrent(file, shape))) return file;
  await fs.mkdir(path.dirname(file), { recursive: true });
  const source = await readGguf(tokenizerModel);
  const tokens = source.metadata.get('tokenizer.ggml.tokens');
  const types = source.metadata.get('tokenizer.ggml.token_type');
  if (!Array.isArray(tokens) || !Array.isArray(types)) throw new Error(`${tokenizerModel} has no tokenizer`);
  if (tokens.length > shape.vocab)
    throw new Error(`${tokenizerModel}'s ${tokens.length} tokens exceed ${shape.name}'s vocabulary`);
  const padding = shape.vocab - tokens.length;
  const named = familyTokens(tokens as string[], shape.family);
  const kvs: GgufKv[] = [];
  for (const [key, value] of source.metadata) {
    if (DROPPED_KEY.test(key) || (shape.family !== 'repoformer' && DEMO_PROMPT_KEY.test(key))) continue;
    const type = source.metadataTypes.get(key)!;
    if (key === 'tokenizer.ggml.tokens')
      kvs.push({
        key,
        type,
        value: [...named, ...Array.from({ length: padding }, (_, i) => `<|repogate_pad_${i}|>`)],
      });
    else if (key === 'tokenizer.ggml.token_type')
      kvs.push({ key, type, value: [...types, ...new Array<GgufValue>(padding).fill(TOKEN_TYPE_CONTROL)] });
    else kvs.push({ key, type, value });
  }
  kvs.push(...shapeKvs(shape));
  // Output rows of control and padding tokens are zero, so that greedy decoding picks text tokens, as a trained
  // model would: otherwise noise picks a padding token (nothing to show) or a stop token (nothing generated).
  const silent = new Set<number>();
  for (let id = 0; id < shape.vocab; id++) if (id >= tokens.length || types[id] === TOKEN_TYPE_CONTROL) silent.add(id);
  await writeGgufStreamed(file, kvs, shapeTensors(shape, silent));
  return file;
}

/**
 * The demo tokenizer's tokens with its special tokens renamed to `family`'s: each role the family shares (the FIM
 * markers, end of text) gets the family's first name for it; the demo's other specials (`<cc>`, `<eof>`) become
 * the roles the family has and the demo lacks (file separator, repository name), or unused names.
 */
export function familyTokens(tokens: readonly string[], family: ShapeFamily): string[] {
  if (family === 'repoformer') return [...tokens];
  const demo = FAMILIES.find((f) => f.id === DEMO_FAMILY)!.tokens;
  const target = FAMILIES.find((f) => f.id === family)!.tokens;
  const roleOf = new Map<string, SpecialRole>();
  for (const [role, names] of Object.entries(demo) as [SpecialRole, readonly string[]][])
    for (const name of names) roleOf.set(name, role);
  const extra = (Object.keys(target) as SpecialRole[]).filter((role) => !demo[role]);
  return tokens.map((token, id) => {
    const role = roleOf.get(token);
    if (role === undefined) return token;
    const name = target[role]?.[0] ?? target[extra.shift() ?? role]?.[0];
    return name ?? `<|repogate_unused_${id}|>`;
  });
}

async function isCurrent(file: string, shape: ModelShape): Promise<boolean> {
  try {
    const meta = (await readGguf(file)).metadata;
    return meta.get('repogate.shape') === shape.name && meta.get('repogate.shape_version') === SHAPE_VERSION;
  } catch {
    return false;
  }
}

function shapeKvs(shape: ModelShape): GgufKv[] {
  const { u32, f32, str } = kv;
  return [
    str('general.name', `repogate-shape ${shape.name}`),
    str(
      'general.description',
      `TIMING ONLY: random weights with the dimensions of ${shape.of}; writes noise. Made by RepoGate for speed benchmarks.`,
    ),
    u32('general.file_type', FILE_TYPE_Q8_0),
    kv.bool('repogate.timing_only', true),
    str('repogate.shape', shape.name),
    str('repogate.shape_family', shape.family),
    u32('repogate.shape_version', SHAPE_VERSION),
    u32('llama.context_length', shape.contextLength),
    u32('llama.embedding_length', shape.embedding),
    u32('llama.block_count', shape.layers),
    u32('llama.feed_forward_length', shape.feedForward),
    u32('llama.attention.head_count', shape.heads),
    u32('llama.attention.head_count_kv', shape.kvHeads),
    f32('llama.attention.layer_norm_rms_epsilon', 1e-6),
    u32('llama.rope.dimension_count', shape.embedding / shape.heads),
    f32('llama.rope.freq_base', shape.ropeBase),
    u32('llama.vocab_size', shape.vocab),
  ];
}

function shapeTensors(shape: ModelShape, silentRows: ReadonlySet<number>): StreamedTensor[] {
  const d = shape.embedding;
  const kv = shape.kvHeads * (d / shape.heads);
  const ff = shape.feedForward;
  const norm = (name: string): StreamedTensor => {
    const ones = Buffer.alloc(d * 4);
    for (let i = 0; i < d; i++) ones.writeFloatLE(1, i * 4);
    return { name, dims: [d], type: GGML_TYPE_ID.F32, bytes: ones.length, data: () => [ones] };
  };
  const out: StreamedTensor[] = [q8Matrix('token_embd.weight', d, shape.vocab, shape.tied ? silentRows : undefined)];
  for (let i = 0; i < shape.layers; i++) {
    const blk = `blk.${i}`;
    out.push(
      norm(`${blk}.attn_norm.weight`),
      q8Matrix(`${blk}.attn_q.weight`, d, d),
      q8Matrix(`${blk}.attn_k.weight`, d, kv),
      q8Matrix(`${blk}.attn_v.weight`, d, kv),
      q8Matrix(`${blk}.attn_output.weight`, d, d),
      norm(`${blk}.ffn_norm.weight`),
      q8Matrix(`${blk}.ffn_gate.weight`, d, ff),
      q8Matrix(`${blk}.ffn_up.weight`, d, ff),
      q8Matrix(`${blk}.ffn_down.weight`, ff, d),
    );
  }
  out.push(norm('output_norm.weight'));
  if (!shape.tied) out.push(q8Matrix('output.weight', d, shape.vocab, silentRows));
  return out;
}

const templates = new Map<number, Buffer>();

/** Q8_0 blocks of random quants whose scale gives weights of standard deviation 1/sqrt(fanIn). */
function template(fanIn: number): Buffer {
  let buf = templates.get(fanIn);
  if (buf) return buf;
  buf = Buffer.alloc(TEMPLATE_BLOCKS * Q8_0_BLOCK_BYTES);
  const scale = f32ToF16(1 / (Math.sqrt(fanIn) * QUANT_STD));
  let state = 0x9e3779b9 ^ fanIn; // xorshift32: the same file every time
  for (let b = 0; b < TEMPLATE_BLOCKS; b++) {
    const at = b * Q8_0_BLOCK_BYTES;
    buf.writeUInt16LE(scale, at);
    for (let q = 0; q < Q8_0_BLOCK; q++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      buf[at + 2 + q] = state & 0xff;
    }
  }
  templates.set(fanIn, buf);
  return buf;
}

/** A Q8_0 matrix of `rows` rows of `cols` weights (ggml dims [cols, rows]); `zeroRows` are all zero. */
function q8Matrix(name: string, cols: number, rows: number, zeroRows?: ReadonlySet<number>): StreamedTensor {
  const rowBytes = (cols / Q8_0_BLOCK) * Q8_0_BLOCK_BYTES;
  return {
    name,
    dims: [cols, rows],
    type: GGML_TYPE_ID.Q8_0,
    bytes: rowBytes * rows,
    *data() {
      const random = template(cols);
      const zeros = Buffer.alloc(random.length);
      const rowsPerPiece = Math.max(1, Math.floor(random.length / rowBytes));
      let row = 0;
      let cursor = 0;
      while (row < rows) {
        // A run of rows of one kind (random or zero), at most one template long.
        const zero = zeroRows?.has(row) ?? false;
        let end = row + 1;
        while (end < rows && end - row < rowsPerPiece && (zeroRows?.has(end) ?? false) === zero) end++;
        const bytes = (end - row) * rowBytes;
        if (zero) {
          yield zeros.subarray(0, bytes);
        } else {
          if (cursor + bytes > random.length) cursor = 0;
          yield random.subarray(cursor, cursor + bytes);
          cursor += bytes;
        }
        row = end;
      }
    },
  };
}
