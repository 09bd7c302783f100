/**
 * `repogate convert`: a GPTBigCode checkpoint directory (config.json, weights, tokenizer files) to a GGUF that
 * llama.cpp loads as `starcoder`, streamed tensor by tensor in chunks so that memory stays near one chunk whatever
 * the model's size. The output appears under its name only when complete; any failure removes the partial file.
 */
import { promises as fs } from 'fs';
import type { FileHandle } from 'fs/promises';
import * as path from 'path';
import { GGUF_DEFAULT_ALIGNMENT, type GgufTensorInfo } from '../model/gguf';
import { byteLength, elementCount, listTensors, type TensorSource } from './checkpoint';
import { CheckpointError } from './errors';
import { alignmentOf, encodeGgufHeaderAsync, kv, type GgufKv } from './ggufWriter';
import {
  ARCH,
  architectureKvs,
  expectedShape,
  ggufName,
  readConfig,
  requiredNames,
  type GptBigCodeConfig,
} from './gptBigCode';
import { decode, encode, GGML_TYPE_ID, outputBytes, Q8_0_BLOCK, type GgmlOutType } from './numbers';
import { EOF_TOKEN, GATE_TOKEN, readVocabulary, type GgufVocabulary } from './tokenizer';

export type OutputType = 'f16' | 'q8_0';

export interface ConvertOptions {
  /** Checkpoint directory: config.json, weights (.bin or .safetensors, single or sharded), tokenizer.json. */
  dir: string;
  out: string;
  type?: OutputType;
  /** general.name; default the directory's name. */
  name?: string;
  signal?: AbortSignal;
  onProgress?(p: { tensor: string; doneBytes: number; totalBytes: number }): void;
}

export interface ConvertResult {
  out: string;
  tensors: number;
  bytes: number;
  hasGate: boolean;
  ms: number;
}

/** Repoformer's retrieval thresholds on P(<cc>) (arXiv 2403.10059): line and API completion, function bodies. */
export const GATE_THRESHOLD = 0.2;
export const GATE_THRESHOLD_MULTILINE = 0.15;
/**
 * Elements converted per step: 2 MB of f32, small against any model, and about 20 ms of Q8_0 encoding (measured,
 * 2-core machine), so that an extension host running the conversion stays responsive between steps.
 */
const CHUNK_ELEMENTS = 1 << 19;
/** llama_ftype values (llama.h) for general.file_type. */
const FILE_TYPE: Readonly<Record<OutputType, number>> = { f16: 1, q8_0: 7 };
const GGML_QUANTIZATION_VERSION = 2;

interface PlannedTensor {
  info: GgufTensorInfo;
  type: GgmlOutType;
  source: TensorSource;
  bytes: number;
}

export async function convertCheckpoint(options: ConvertOptions): Promise<ConvertResult> {
  const started = performance.now();
  const { dir, out } = options;
  const type = options.type ?? 'q8_0';
  const { config, byName, nInner } = await readCheckpoint(dir);
  const vocab = await readVocabulary(dir, config.vocabSize);
  const plan = planTensors(byName, type);
  const kvs = [
    ...generalKvs(options.name ?? path.basename(path.resolve(dir)), type),
    ...architectureKvs(config, nInner),
    ...tokenizerKvs(vocab),
    ...repogateKvs(vocab),
  ];
  const header = await encodeGgufHeaderAsync(
    kvs,
    plan.map((t) => t.info),
  );
  const align = alignmentOf(kvs);
  const totalBytes = plan.reduce((a, t) => a + t.bytes, 0);

  const partial = `${out}.partial`;
  await fs.mkdir(path.dirname(path.resolve(out)), { recursive: true });
  const handles = new Map<string, FileHandle>();
  const dest = await fs.open(partial, 'w');
  try {
    await dest.write(header);
    let written = 0;
    let doneBytes = 0;
    for (const t of plan) {
      const pad = Number(t.info.offset) - written;
      if (pad > 0) await dest.write(Buffer.alloc(pad));
      written += pad;
      let fh = handles.get(t.source.file);
      if (!fh) handles.set(t.source.file, (fh = await fs.open(t.source.file, 'r')));
      written += await convertTensor(t, fh, dest, options.signal);
      doneBytes += t.bytes;
      options.onProgress?.({ tensor: t.info.name, doneBytes, totalBytes });
    }
    const tail = (align - (written % align)) % align;
    if (tail > 0) await dest.write(Buffer.alloc(tail));
    await dest.sync();
    await dest.close();
    await fs.rename(partial, out);
  } catch (error) {
    await dest.close().catch(() => undefined);
    await fs.rm(partial, { force: true });
    throw error;
  } finally {
    for (const fh of handles.values()) await fh.close().catch(() => undefined);
  }
  return {
    out,
    tensors: plan.length,
    bytes: header.length + totalBytes,
    hasGate: vocab.gate !== undefined,
    ms: performance.now() - started,
  };
}

/** config.json and the weights of dir under their GGUF names, checked against each other. */
async function readCheckpoint(
  dir: string,
): Promise<{ config: GptBigCodeConfig; byName: Map<string, TensorSource>; nInner: number }> {
  const configPath = path.join(dir, 'config.json');
  let configText: string;
  try {
    configText = await fs.readFile(configPath, 'utf8');
  } catch {
    throw new CheckpointError(
      'missing-file',
      `${configPath} is missing: a checkpoint directory needs its config.json.`,
    );
  }
  let configJson: Record<string, unknown>;
  try {
    configJson = JSON.parse(configText);
  } catch (error) {
    throw new CheckpointError('config', `${configPath} is not valid JSON (${(error as Error).message}).`);
  }
  const config = readConfig(configJson, configPath);
  const sources = await listTensors(dir);
  const byName = new Map<string, TensorSource>();
  for (const [name, source] of sources) {
    const target = ggufName(name);
    if (target !== null) byName.set(target, source);
  }
  // A state dict saved from the live model keeps lm_head.weight as a view of the token embedding: tied.
  const output = byName.get('output.weight');
  if (output && output.identity === byName.get('token_embd.weight')?.identity) byName.delete('output.weight');
  const required = requiredNames(config);
  const extra = [...byName.keys()].filter((n) => n !== 'output.weight' && !required.includes(n));
  if (extra.length > 0) {
    throw new CheckpointError(
      'config',
      `The checkpoint has ${extra.slice(0, 3).join(', ')}, beyond config.json's ` +
        `${config.nLayer} blocks: config.json does not belong to these weights.`,
    );
  }
  const missing = required.filter((n) => !byName.has(n));
  if (missing.length > 0) {
    throw new CheckpointError(
      'missing-file',
      `The checkpoint in ${dir} lacks ${missing.slice(0, 3).join(', ')}` +
        `${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}: a weights file is incomplete or missing.`,
    );
  }
  const nInner = byName.get('blk.0.ffn_up.weight')!.shape[0];
  for (const [name, source] of byName) {
    const want = expectedShape(config, name, nInner);
    if (want && want.join('x') !== source.shape.join('x')) {
      throw new CheckpointError(
        'config',
        `${source.name} has shape [${source.shape}], but config.json implies [${want}].`,
      );
    }
  }
  return { config, byName, nInner };
}

/** Types and offsets: 1-D tensors and position embeddings stay f32, as llama.cpp's own converter keeps them. */
function planTensors(byName: Map<string, TensorSource>, type: OutputType): PlannedTensor[] {
  const order = [...byName.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b, 'en', { numeric: true }));
  const plan: PlannedTensor[] = [];
  let offset = 0;
  for (const name of order) {
    const source = byName.get(name)!;
    const dims = [...source.shape].reverse();
    let out: GgmlOutType =
      dims.length === 1 || name === 'position_embd.weight' ? 'F32' : type === 'f16' ? 'F16' : 'Q8_0';
    // Q8_0 blocks run along a row: a row length that is not a multiple of 32 stays f16.
    if (out === 'Q8_0' && dims[0] % Q8_0_BLOCK !== 0) out = 'F16';
    const bytes = outputBytes(out, elementCount(source.shape));
    plan.push({ info: { name, dims, type: GGML_TYPE_ID[out], offset: BigInt(offset) }, type: out, source, bytes });
    offset = Math.ceil((offset + bytes) / GGUF_DEFAULT_ALIGNMENT) * GGUF_DEFAULT_ALIGNMENT;
  }
  return plan;
}

/** Embeddings first, then the blocks in order, then the output: the order llama.cpp's converter writes. */
function rank(name: string): number {
  if (name.startsWith('token_embd') || name.startsWith('position_embd')) return 0;
  return name.startsWith('blk.') ? 1 : 2;
}

async function convertTensor(
  t: PlannedTensor,
  fh: FileHandle,
  dest: FileHandle,
  signal?: AbortSignal,
): Promise<number> {
  const n = elementCount(t.source.shape);
  const elementBytes = byteLength(t.source) / n;
  const chunk = Math.min(n, CHUNK_ELEMENTS);
  const raw = Buffer.from(new ArrayBuffer(chunk * elementBytes));
  const values = new Float32Array(chunk);
  const encoded = Buffer.from(new ArrayBuffer(outputBytes(t.type, chunk)));
  let written = 0;
  for (let start = 0; start < n; start += chunk) {
    if (signal?.aborted) throw new CheckpointError('cancelled', 'The conversion was cancelled.');
    const count = Math.min(chunk, n - start);
    const length = count * elementBytes;
    const { bytesRead } = await fh.read(raw, 0, length, t.source.offset + start * elementBytes);
    if (bytesRead < length) {
      throw new CheckpointError('truncated', `${t.source.file} ends inside ${t.source.name}: the file is truncated.`);
    }
    decode(t.source.dtype, raw, values, count);
    const bytes = encode(t.type, values, count, encoded);
    await dest.write(encoded, 0, bytes);
    written += bytes;
    // Let timers and I/O of the host process run between chunks.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return written;
}

function generalKvs(name: string, type: OutputType): GgufKv[] {
  return [
    kv.str('general.architecture', ARCH),
    kv.str('general.name', name),
    kv.u32('general.file_type', FILE_TYPE[type]),
    ...(type === 'q8_0' ? [kv.u32('general.quantization_version', GGML_QUANTIZATION_VERSION)] : []),
  ];
}

function tokenizerKvs(v: GgufVocabulary): GgufKv[] {
  const id = (text: string): number | undefined => v.ids.get(text);
  const optional = (key: string, text: string): GgufKv[] => {
    const value = id(text);
    return value === undefined ? [] : [kv.u32(key, value)];
  };
  return [
    kv.str('tokenizer.ggml.model', 'gpt2'),
    // Same pre-tokenizer regexes as "starcoder" in llama-vocab.cpp, without its clean-up of spaces before
    // punctuation when detokenizing, which changes code (docs/decisions-convert.md).
    kv.str('tokenizer.ggml.pre', 'command-r'),
    kv.strs('tokenizer.ggml.tokens', v.tokens),
    kv.i32s('tokenizer.ggml.token_type', v.types),
    kv.strs('tokenizer.ggml.merges', v.merges),
    ...optional('tokenizer.ggml.bos_token_id', '<|endoftext|>'),
    ...optional('tokenizer.ggml.eos_token_id', '<|endoftext|>'),
    ...optional('tokenizer.ggml.eot_token_id', '<|endoftext|>'),
    ...optional('tokenizer.ggml.padding_token_id', '<fim_pad>'),
    kv.bool('tokenizer.ggml.add_bos_token', false),
    kv.bool('tokenizer.ggml.add_eos_token', false),
    ...optional('tokenizer.ggml.fim_pre_token_id', '<fim_prefix>'),
    ...optional('tokenizer.ggml.fim_suf_token_id', '<fim_suffix>'),
    ...optional('tokenizer.ggml.fim_mid_token_id', '<fim_middle>'),
    ...optional('tokenizer.ggml.fim_pad_token_id', '<fim_pad>'),
  ];
}

/** What RepoGate reads (families.ts, codeModel.ts): the gate and eof tokens and the paper's thresholds. */
function repogateKvs(v: GgufVocabulary): GgufKv[] {
  if (!v.gate) return [];
  return [
    kv.str(
      'repogate.prompt_layout',
      `<fim_prefix>{left}<fim_suffix>{right}${EOF_TOKEN}[${GATE_TOKEN}{cc}]<fim_middle>{middle}`,
    ),
    kv.str('repogate.gate_token', GATE_TOKEN),
    kv.u32('repogate.gate_token_id', v.gate.cc),
    kv.str('repogate.eof_token', EOF_TOKEN),
    kv.u32('repogate.eof_token_id', v.gate.eof),
    kv.f32('repogate.gate_threshold', GATE_THRESHOLD),
    kv.f32('repogate.gate_threshold_multiline', GATE_THRESHOLD_MULTILINE),
  ];
}
