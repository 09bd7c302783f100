/**
 * GPTBigCode (StarCoderBase, Repoformer) as llama.cpp's `starcoder` architecture: the config checks, the tensor
 * names (gguf-py MODEL_ARCH.STARCODER) and the hyperparameter keys that llama-model.cpp reads for it. The weights
 * need no rearranging: the fused c_attn already holds Q | K | V for one key/value head, in the order llama.cpp
 * splits it, and torch's [out, in] matrices are ggml's [in, out] with the same bytes.
 */
import { CheckpointError } from './errors';
import { kv, type GgufKv } from './ggufWriter';

export const ARCH = 'starcoder';

export interface GptBigCodeConfig {
  nEmbd: number;
  nHead: number;
  nLayer: number;
  nPositions: number;
  layerNormEpsilon: number;
  vocabSize: number;
}

/** GELU variants that are the tanh approximation, which is what ggml_gelu computes. */
const TANH_GELU = new Set(['gelu_pytorch_tanh', 'gelu_new', 'gelu_fast']);

/** Checks config.json (parsed) describes a multi-query GPTBigCode model and returns its shape. */
export function readConfig(config: Record<string, unknown>, file: string): GptBigCodeConfig {
  const type = config.model_type;
  const architectures = Array.isArray(config.architectures) ? config.architectures.join(', ') : undefined;
  if (type !== 'gpt_bigcode') {
    throw new CheckpointError(
      'architecture',
      `${file} describes a ${String(type ?? 'unknown')} model${architectures ? ` (${architectures})` : ''}, not ` +
        'GPTBigCode: this converter reads Repoformer and StarCoderBase checkpoints only. For other models use a ' +
        'published GGUF.',
    );
  }
  if (config.multi_query === false) {
    throw new CheckpointError('unsupported', `${file}: multi_query is false; llama.cpp's starcoder needs one KV head.`);
  }
  const activation = config.activation_function ?? 'gelu_pytorch_tanh';
  if (typeof activation !== 'string' || !TANH_GELU.has(activation)) {
    throw new CheckpointError(
      'unsupported',
      `${file}: activation ${String(activation)} is not the tanh GELU llama.cpp uses.`,
    );
  }
  const int = (key: string): number => {
    const v = config[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new CheckpointError('config', `${file}: ${key} is ${JSON.stringify(v)}, not a positive integer.`);
    }
    return v;
  };
  const eps = config.layer_norm_epsilon ?? 1e-5;
  if (typeof eps !== 'number') throw new CheckpointError('config', `${file}: layer_norm_epsilon is not a number.`);
  return {
    nEmbd: int('n_embd'),
    nHead: int('n_head'),
    nLayer: int('n_layer'),
    nPositions: int('n_positions'),
    layerNormEpsilon: eps,
    vocabSize: int('vocab_size'),
  };
}

/** Buffers some versions saved with the weights: the causal mask, rebuilt by llama.cpp itself. */
const IGNORED = /^(?:transformer\.)?h\.\d+\.attn\.(?:bias|masked_bias)$/;

const LAYER_NAMES: Readonly<Record<string, string>> = {
  ln_1: 'attn_norm',
  'attn.c_attn': 'attn_qkv',
  'attn.c_proj': 'attn_output',
  ln_2: 'ffn_norm',
  'mlp.c_fc': 'ffn_up',
  'mlp.c_proj': 'ffn_down',
};
const TOP_NAMES: Readonly<Record<string, string>> = {
  'wte.weight': 'token_embd.weight',
  'wpe.weight': 'position_embd.weight',
  'ln_f.weight': 'output_norm.weight',
  'ln_f.bias': 'output_norm.bias',
};

/** The GGUF name of a checkpoint tensor; null for a buffer to skip; throws for a tensor GPTBigCode does not have. */
export function ggufName(name: string): string | null {
  if (IGNORED.test(name)) return null;
  if (name === 'lm_head.weight') return 'output.weight';
  const bare = name.replace(/^transformer\./, '');
  if (Object.hasOwn(TOP_NAMES, bare)) return TOP_NAMES[bare];
  const m = /^h\.(\d+)\.(.+)\.(weight|bias)$/.exec(bare);
  const mapped = m && Object.hasOwn(LAYER_NAMES, m[2]) ? LAYER_NAMES[m[2]] : undefined;
  if (m && mapped) return `blk.${m[1]}.${mapped}.${m[3]}`;
  throw new CheckpointError('unsupported', `The checkpoint has a tensor ${name} that GPTBigCode does not have.`);
}

/** The GGUF names a complete model has (output.weight is optional: absent = tied to the token embedding). */
export function requiredNames(c: GptBigCodeConfig): string[] {
  const names = ['token_embd.weight', 'position_embd.weight', 'output_norm.weight', 'output_norm.bias'];
  for (let i = 0; i < c.nLayer; i++) {
    for (const t of Object.values(LAYER_NAMES)) names.push(`blk.${i}.${t}.weight`, `blk.${i}.${t}.bias`);
  }
  return names;
}

/** The shape (torch order) each tensor must have. */
export function expectedShape(c: GptBigCodeConfig, gguf: string, nInner: number): number[] | undefined {
  const headDim = c.nEmbd / c.nHead;
  const qkv = c.nEmbd + 2 * headDim;
  const table: Record<string, number[]> = {
    'token_embd.weight': [c.vocabSize, c.nEmbd],
    'output.weight': [c.vocabSize, c.nEmbd],
    'position_embd.weight': [c.nPositions, c.nEmbd],
    'output_norm.weight': [c.nEmbd],
    'output_norm.bias': [c.nEmbd],
    'attn_norm.weight': [c.nEmbd],
    'attn_norm.bias': [c.nEmbd],
    'ffn_norm.weight': [c.nEmbd],
    'ffn_norm.bias': [c.nEmbd],
    'attn_qkv.weight': [qkv, c.nEmbd],
    'attn_qkv.bias': [qkv],
    'attn_output.weight': [c.nEmbd, c.nEmbd],
    'attn_output.bias': [c.nEmbd],
    'ffn_up.weight': [nInner, c.nEmbd],
    'ffn_up.bias': [nInner],
    'ffn_down.weight': [c.nEmbd, nInner],
    'ffn_down.bias': [c.nEmbd],
  };
  const key = gguf.replace(/^blk\.\d+\./, '');
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Hyperparameters as llama.cpp's starcoder loader reads them (llama-model.cpp, llama-hparams). */
export function architectureKvs(c: GptBigCodeConfig, nInner: number): GgufKv[] {
  return [
    kv.u32(`${ARCH}.context_length`, c.nPositions),
    kv.u32(`${ARCH}.embedding_length`, c.nEmbd),
    kv.u32(`${ARCH}.feed_forward_length`, nInner),
    kv.u32(`${ARCH}.block_count`, c.nLayer),
    kv.u32(`${ARCH}.attention.head_count`, c.nHead),
    kv.u32(`${ARCH}.attention.head_count_kv`, 1),
    kv.f32(`${ARCH}.attention.layer_norm_epsilon`, c.layerNormEpsilon),
    kv.u32(`${ARCH}.vocab_size`, c.vocabSize),
  ];
}
