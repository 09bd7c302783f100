/**
 * Checks a model file before llama.cpp sees it, so that the usual mistakes — a wrong path, a saved web page, an
 * unfinished download, a model llama.cpp cannot run, a chat model without fill-in-the-middle tokens — fail at
 * once with a message that says what is wrong and how to fix it, instead of a native error or a crash.
 */
import { promises as fs } from 'fs';
import { GgufError, controlTokens, readGguf, type GgufHeader, type GgufTensorInfo } from './gguf';
import { FIM_MARKERS_TRIED } from './fimMarkers';

export type ModelFileErrorCode =
  | 'missing'
  | 'not-gguf'
  | 'unsupported-version'
  | 'truncated'
  | 'corrupt'
  | 'unsupported-architecture'
  | 'no-fim'
  | 'context-too-large';

/** `message` says what is wrong and ends with `hint`, the fix, which a UI may also show on its own. */
export class ModelFileError extends Error {
  constructor(
    readonly code: ModelFileErrorCode,
    readonly file: string,
    problem: string,
    readonly hint: string,
  ) {
    super(`${problem} ${hint}`);
    this.name = 'ModelFileError';
  }
}

export interface ModelFileInfo {
  architecture: string;
  /** general.name, when the file has one. */
  name: string | undefined;
  /** `<architecture>.context_length`: the context the model was trained for. */
  contextLength: number | undefined;
  fileSize: number;
  header: GgufHeader;
}

/**
 * The architectures that the llama.cpp bundled with node-llama-cpp 3.21.1 can load: the names of
 * LLM_ARCH_NAMES in src/llama-arch.cpp of node_modules/node-llama-cpp/llama/gitRelease.bundle, sorted, without
 * "(unknown)" and "clip" (a vision projector that llama.cpp refuses to load as a model).
 */
export const LLAMA_CPP_ARCHITECTURES: readonly string[] = [
  'afmoe',
  'apertus',
  'arcee',
  'arctic',
  'arwkv7',
  'baichuan',
  'bailingmoe',
  'bailingmoe2',
  'bailingmoe3',
  'bert',
  'bitnet',
  'bloom',
  'chameleon',
  'chatglm',
  'codeshell',
  'cogvlm',
  'cohere2',
  'cohere2moe',
  'command-r',
  'dbrx',
  'deci',
  'deepseek',
  'deepseek2',
  'deepseek2-ocr',
  'deepseek32',
  'deepseek4',
  'dflash',
  'dots1',
  'dots3note',
  'dream',
  'eagle3',
  'ernie4_5',
  'ernie4_5-moe',
  'eurobert',
  'exaone',
  'exaone-moe',
  'exaone4',
  'falcon',
  'falcon-h1',
  'gemma',
  'gemma-embedding',
  'gemma2',
  'gemma3',
  'gemma3n',
  'gemma4',
  'gemma4-assistant',
  'glm-dsa',
  'glm4',
  'glm4moe',
  'gpt-oss',
  'gpt2',
  'gptj',
  'gptneox',
  'granite',
  'granite_swa',
  'granitehybrid',
  'granitemoe',
  'graniteswitch',
  'grok',
  'grovemoe',
  'hunyuan-dense',
  'hunyuan-moe',
  'hunyuan_vl',
  'hy_v3',
  'internlm2',
  'jais',
  'jais2',
  'jamba',
  'jina-bert-v2',
  'jina-bert-v3',
  'kimi-k3',
  'kimi-linear',
  'laguna',
  'lfm2',
  'lfm2moe',
  'llada',
  'llada-moe',
  'llama',
  'llama-embed',
  'llama4',
  'maincoder',
  'mamba',
  'mamba2',
  'mellum',
  'mimo2',
  'minicpm',
  'minicpm3',
  'minimax-01',
  'minimax-m2',
  'minimax-m3',
  'mistral3',
  'mistral4',
  'modern-bert',
  'mpt',
  'muse-glimmer',
  'nanbeige',
  'nemotron',
  'nemotron_h',
  'nemotron_h_moe',
  'neo-bert',
  'nomic-bert',
  'nomic-bert-moe',
  'olmo',
  'olmo2',
  'olmoe',
  'openelm',
  'orion',
  'paddleocr',
  'pangu-embedded',
  'phi2',
  'phi3',
  'phimoe',
  'plamo',
  'plamo2',
  'plamo3',
  'plm',
  'pockettts',
  'qwen',
  'qwen2',
  'qwen2moe',
  'qwen2vl',
  'qwen3',
  'qwen35',
  'qwen35moe',
  'qwen3moe',
  'qwen3next',
  'qwen3tts',
  'qwen3vl',
  'qwen3vlmoe',
  'qwen4exp',
  'refact',
  'rnd1',
  'rwkv6',
  'rwkv6qwen2',
  'rwkv7',
  'seed_oss',
  'smallthinker',
  'smollm3',
  'stablelm',
  'starcoder',
  'starcoder2',
  'step35',
  't5',
  't5encoder',
  'talkie',
  'wavtokenizer-dec',
  'xverse',
];
const KNOWN_ARCHITECTURES = new Set(LLAMA_CPP_ARCHITECTURES);

/**
 * [elements per block, bytes per block] by ggml_type id, from type_traits in ggml/src/ggml.c and the block
 * structs of ggml/src/ggml-common.h of the same bundled llama.cpp.
 */
const GGML_BLOCKS: Readonly<Record<number, readonly [number, number]>> = {
  0: [1, 4], // F32
  1: [1, 2], // F16
  2: [32, 18], // Q4_0
  3: [32, 20], // Q4_1
  6: [32, 22], // Q5_0
  7: [32, 24], // Q5_1
  8: [32, 34], // Q8_0
  9: [32, 36], // Q8_1
  10: [256, 84], // Q2_K
  11: [256, 110], // Q3_K
  12: [256, 144], // Q4_K
  13: [256, 176], // Q5_K
  14: [256, 210], // Q6_K
  15: [256, 292], // Q8_K
  16: [256, 66], // IQ2_XXS
  17: [256, 74], // IQ2_XS
  18: [256, 98], // IQ3_XXS
  19: [256, 50], // IQ1_S
  20: [32, 18], // IQ4_NL
  21: [256, 110], // IQ3_S
  22: [256, 82], // IQ2_S
  23: [256, 136], // IQ4_XS
  24: [1, 1], // I8
  25: [1, 2], // I16
  26: [1, 4], // I32
  27: [1, 8], // I64
  28: [1, 8], // F64
  29: [256, 56], // IQ1_M
  30: [1, 2], // BF16
  34: [256, 54], // TQ1_0
  35: [256, 66], // TQ2_0
  39: [32, 17], // MXFP4
  40: [64, 36], // NVFP4
  41: [128, 18], // Q1_0
  42: [64, 18], // Q2_0
};

/** Bytes of a tensor's data, or undefined for a ggml type not in the table. */
export function tensorByteSize(tensor: Pick<GgufTensorInfo, 'dims' | 'type'>): number | undefined {
  const blocks = GGML_BLOCKS[tensor.type];
  if (!blocks) return undefined;
  const [perBlock, bytes] = blocks;
  const [row = 1, ...rest] = tensor.dims;
  return (row / perBlock) * bytes * rest.reduce((a, b) => a * b, 1);
}

/** The FIM marker texts by role, in the order they are tried. */
const FIM_TEXTS = {
  prefix: FIM_MARKERS_TRIED.map((m) => m.prefix),
  suffix: FIM_MARKERS_TRIED.map((m) => m.suffix),
  middle: FIM_MARKERS_TRIED.map((m) => m.middle),
};

/** The metadata keys of the FIM ids, current and deprecated. */
const FIM_KEYS = {
  prefix: ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.prefix_token_id'],
  suffix: ['tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.suffix_token_id'],
  middle: ['tokenizer.ggml.fim_mid_token_id', 'tokenizer.ggml.middle_token_id'],
} as const;

export type FimTokens = Record<keyof typeof FIM_TEXTS, number | undefined>;

/**
 * The FIM token ids, found much as llama.cpp finds them: the metadata ids when inside the vocabulary (llama.cpp
 * ignores others), else the first known marker text present, whatever its token type.
 */
export function fimTokens(header: GgufHeader): FimTokens {
  const tokens = header.metadata.get('tokenizer.ggml.tokens');
  const vocabSize = Array.isArray(tokens) ? tokens.length : 0;
  const special = controlTokens(header);
  const find = (kind: keyof typeof FIM_TEXTS): number | undefined => {
    for (const key of FIM_KEYS[kind]) {
      const raw = header.metadata.get(key);
      const id = typeof raw === 'bigint' ? Number(raw) : raw;
      if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id < vocabSize) return id;
    }
    for (const text of FIM_TEXTS[kind]) {
      const id = special.get(text);
      if (id !== undefined) return id;
    }
    return undefined;
  };
  return { prefix: find('prefix'), suffix: find('suffix'), middle: find('middle') };
}

const REDOWNLOAD = 'The download did not finish: delete the file and download it again.';

export async function checkModelFile(file: string): Promise<ModelFileInfo> {
  const fileSize = await statModelFile(file);
  let header: GgufHeader;
  try {
    header = await readGguf(file);
  } catch (e) {
    if (e instanceof GgufError) throw describeGgufError(file, fileSize, e);
    throw unreadable(file, e);
  }
  checkTensorData(file, header);

  const architecture = header.metadata.get('general.architecture');
  if (typeof architecture !== 'string' || architecture === '') {
    throw new ModelFileError(
      'unsupported-architecture',
      file,
      `${file} does not say which model architecture it is (general.architecture is missing).`,
      "Use a .gguf made by llama.cpp's converter (convert_hf_to_gguf.py) or one published for llama.cpp.",
    );
  }
  if (architecture === 'clip') {
    throw new ModelFileError(
      'unsupported-architecture',
      file,
      `${file} is a vision projector (an mmproj file, architecture 'clip'), not a language model.`,
      "Choose the model's main .gguf file instead.",
    );
  }
  if (!KNOWN_ARCHITECTURES.has(architecture)) {
    throw new ModelFileError(
      'unsupported-architecture',
      file,
      `${file} is a '${architecture}' model, an architecture that the llama.cpp bundled with node-llama-cpp 3.21.1 cannot run.`,
      `Choose a model of a supported architecture (for example llama, qwen2, starcoder2, deepseek2 or gemma), or a RepoGate whose llama.cpp supports '${architecture}'.`,
    );
  }

  const fim = fimTokens(header);
  const missing = (['prefix', 'suffix'] as const).filter((kind) => fim[kind] === undefined);
  if (missing.length > 0) {
    throw new ModelFileError(
      'no-fim',
      file,
      `${file} has no fill-in-the-middle ${missing.length === 2 ? 'tokens' : `${missing[0]} token`} (neither tokenizer.ggml.fim_pre_token_id / fim_suf_token_id ` +
        'nor tokens such as <fim_prefix>, <|fim_prefix|> or ▁<PRE>), so it cannot complete code between the text before and after the cursor.',
      'Use a code model trained for fill-in-the-middle, such as a Qwen2.5-Coder, StarCoder2, DeepSeek-Coder or CodeLlama GGUF (chat-only models lack these tokens).',
    );
  }

  const name = header.metadata.get('general.name');
  const context = header.metadata.get(`${architecture}.context_length`);
  return {
    architecture,
    name: typeof name === 'string' ? name : undefined,
    contextLength: typeof context === 'number' || typeof context === 'bigint' ? Number(context) : undefined,
    fileSize,
    header,
  };
}

/** The file's size, or a 'missing' error for anything that is not a readable regular file. */
async function statModelFile(file: string): Promise<number> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ModelFileError(
        'missing',
        file,
        `${file} does not exist.`,
        'Check the model path: it must name a .gguf file on this machine.',
      );
    }
    throw unreadable(file, e);
  }
  if (stat.isDirectory()) {
    const ggufs = (await fs.readdir(file).catch(() => [])).filter((f) => f.toLowerCase().endsWith('.gguf'));
    const inside =
      ggufs.length > 0 ? ` It contains ${ggufs.slice(0, 3).join(', ')}${ggufs.length > 3 ? ', …' : ''}.` : '';
    throw new ModelFileError(
      'missing',
      file,
      `${file} is a folder, not a model file.${inside}`,
      'Point the model path at the .gguf file itself.',
    );
  }
  if (!stat.isFile()) {
    throw new ModelFileError(
      'missing',
      file,
      `${file} is not a regular file.`,
      'Point the model path at a .gguf file.',
    );
  }
  return stat.size;
}

function unreadable(file: string, e: unknown): ModelFileError {
  const reason = (e as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (e as Error).message;
  return new ModelFileError(
    'missing',
    file,
    `${file} cannot be read (${reason}).`,
    'Check that the file exists and that your user may read it.',
  );
}

function describeGgufError(file: string, fileSize: number, e: GgufError): ModelFileError {
  switch (e.reason) {
    case 'not-gguf':
      return notGguf(file, e.details.head ?? Buffer.alloc(0));
    case 'unsupported-version':
      return badVersion(file, e.details.version ?? 0);
    case 'truncated':
      return fileSize === 0
        ? new ModelFileError('truncated', file, `${file} is empty (0 bytes).`, REDOWNLOAD)
        : new ModelFileError(
            'truncated',
            file,
            `${file} is cut short: it ends after ${humanSize(fileSize)}, inside its GGUF header (in ${e.details.where}).`,
            REDOWNLOAD,
          );
    case 'corrupt':
      return new ModelFileError(
        'corrupt',
        file,
        `${file} is a damaged GGUF file: ${e.message}.`,
        'Download the model again; if the error stays, the converter that wrote the file is broken.',
      );
  }
}

/** Names what the file is instead, from its first bytes, and the usual way to get the real model. */
function notGguf(file: string, head: Buffer): ModelFileError {
  const text = head.toString('utf8').replace(/\uFFFD+$/, ''); // a character cut at the end of the sample
  const isText = !/[\u0000-\u0008\u000E-\u001F\uFFFD]/.test(text);
  const problem = (what: string): string => `${file} is not a GGUF model file (${what}).`;
  const convert =
    "RepoGate needs a GGUF model: download a .gguf of the model, or convert it with llama.cpp's convert_hf_to_gguf.py.";
  if (isText) {
    const trimmed = text.trimStart();
    const start = `'${trimmed.split(/\s/)[0].slice(0, 24)}'`;
    if (/^<(!doctype|html|head|body|\?xml)/i.test(trimmed)) {
      return new ModelFileError(
        'not-gguf',
        file,
        problem(`it starts with ${start}`),
        "Download the .gguf file itself, not the web page (on Hugging Face use the file's download link, …/resolve/main/…, not …/blob/main/…).",
      );
    }
    if (trimmed.startsWith('version https://git-lfs')) {
      return new ModelFileError(
        'not-gguf',
        file,
        problem('it is a Git LFS pointer, not the file it points to'),
        'Run `git lfs pull` in the clone, or download the .gguf file directly.',
      );
    }
    if (/^[{[]/.test(trimmed)) {
      return new ModelFileError(
        'not-gguf',
        file,
        problem(`it is a JSON reply starting with ${start}, often an error from the download server`),
        'Check the download URL and any access token, then download the .gguf file again.',
      );
    }
    return new ModelFileError(
      'not-gguf',
      file,
      problem(`it is a text file starting with ${start}`),
      "Download the model's .gguf file (usually several gigabytes) and point the model path at it.",
    );
  }
  if (head.subarray(0, 4).equals(Buffer.from('PK\u0003\u0004', 'latin1'))) {
    return new ModelFileError('not-gguf', file, problem('it is a zip archive, as PyTorch checkpoints are'), convert);
  }
  // safetensors: a u64 length, then the JSON header.
  if (head.length > 9 && head.toString('latin1', 8, 10) === '{"') {
    return new ModelFileError('not-gguf', file, problem('it is a safetensors file'), convert);
  }
  const bytes = [...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return new ModelFileError(
    'not-gguf',
    file,
    problem(`its first bytes are ${bytes}, not 'GGUF'`),
    "Download the model's .gguf file again and point the model path at it.",
  );
}

function badVersion(file: string, version: number): ModelFileError {
  const swapped =
    (((version & 0xff) << 24) | ((version & 0xff00) << 8) | ((version >>> 8) & 0xff00) | (version >>> 24)) >>> 0;
  if (version === 1) {
    return new ModelFileError(
      'unsupported-version',
      file,
      `${file} is a GGUF version 1 file, which llama.cpp no longer reads.`,
      'Download a current conversion of the model (GGUF version 3).',
    );
  }
  if (swapped >= 1 && swapped <= 3) {
    return new ModelFileError(
      'unsupported-version',
      file,
      `${file} is a big-endian GGUF file (version ${swapped} with its bytes swapped), made for machines such as s390x.`,
      'Download the ordinary little-endian .gguf of the model.',
    );
  }
  return new ModelFileError(
    'unsupported-version',
    file,
    `${file} is GGUF version ${version}; the bundled llama.cpp reads versions 2 and 3.`,
    'Use a file written as GGUF version 3, or a RepoGate with a newer llama.cpp.',
  );
}

/** Every tensor's data must lie inside the file: the tell-tale of a download that stopped early. */
function checkTensorData(file: string, header: GgufHeader): void {
  let needed = header.dataOffset;
  let cut: string | undefined;
  for (const tensor of header.tensors) {
    const blocks = GGML_BLOCKS[tensor.type];
    if (blocks && (tensor.dims[0] ?? 1) % blocks[0] !== 0) {
      throw new ModelFileError(
        'corrupt',
        file,
        `${file} is a damaged GGUF file: tensor '${tensor.name}' has rows of ${tensor.dims[0]} values, not a multiple of its type's block of ${blocks[0]}.`,
        'Download the model again; if the error stays, the converter that wrote the file is broken.',
      );
    }
    const size = tensorByteSize(tensor);
    if (size === undefined) continue;
    const end = header.dataOffset + Number(tensor.offset) + size;
    if (end > header.fileSize) cut ??= tensor.name;
    needed = Math.max(needed, end);
  }
  if (cut !== undefined) {
    // Exact byte counts when rounding would show two equal sizes.
    const [have, need] =
      humanSize(header.fileSize) === humanSize(needed)
        ? [`${header.fileSize} bytes`, `${needed} bytes`]
        : [humanSize(header.fileSize), humanSize(needed)];
    throw new ModelFileError(
      'truncated',
      file,
      `${file} is incomplete: it is ${have} but its tensors need ${need} (tensor '${cut}' is cut off).`,
      REDOWNLOAD,
    );
  }
}

function humanSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} bytes`;
}
