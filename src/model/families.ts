/**
 * Code-model families: how each one lays out a fill-in-the-middle (FIM) prompt and presents cross-file context
 * (CC), as data in one table. A family is recognised from its vocabulary (the special tokens of the GGUF), and a
 * prompt is a list of text pieces and special tokens by role, so that the runtime tokenizes code text without
 * special-token parsing: code that contains "<fim_prefix>" cannot inject a control token.
 *
 * To add a family, add one entry to FAMILIES (before any family whose tokens are a subset of its tokens).
 *
 * Left to the runtime: a BOS token where the GGUF asks for one (tokenizer.ggml.add_bos_token: Code Llama,
 * Codestral, DeepSeek-Coder), and, for SentencePiece vocabularies that prefix every tokenized text with a space
 * (Code Llama, Codestral), tokenizing the suffix without that space, as their reference code does
 * (encode_infilling / _encode_infilling).
 */
import { shownPath, type Snippet } from '../retrieval/types';
import { renderCommentBlocks } from '../retrieval/verbalize';
import { FIM_MARKERS, type FimMarkers } from './fimMarkers';

export type SpecialRole = 'fimPrefix' | 'fimSuffix' | 'fimMiddle' | 'eot' | 'eof' | 'cc' | 'fileSep' | 'repoName';

/** A prompt is text pieces (tokenized WITHOUT special-token parsing, so code containing "<fim_prefix>" cannot inject control tokens) and special tokens by role. */
export type PromptPiece = { text: string } | { special: SpecialRole };

/** How the 'files' families write a repository: `<repo>name{afterRepoName}` then `<sep>path\ncode{afterFile}` per file. */
export interface RepoLayout {
  afterRepoName: string;
  afterFile: string;
  /**
   * Where the current file's path goes: inside the FIM prefix (StarCoder2: `<file_sep><fim_prefix>path\nleft`) or
   * between the separator and the FIM prefix (Qwen2.5-Coder: `<|file_sep|>path\n<|fim_prefix|>left`).
   */
  pathInPrefix: boolean;
}

export interface ModelFamily {
  id: string;
  label: string;
  /** Accepted texts (aliases) per role; the first one present in the vocabulary is used. */
  tokens: Partial<Record<SpecialRole, readonly string[]>>;
  /**
   * 'psm': `PRE left SUF right MID`. 'spm': Mistral's suffix-first layout `[SUFFIX]right[PREFIX]left`, which
   * ends with the prefix and has no middle token in the prompt (mistral-common InstructTokenizerV2.encode_fim).
   */
  order: 'psm' | 'spm';
  /** How CC is presented: Repoformer's gate layout (<eof><cc>CC<fim_middle>, CC = renderCommentBlocks), comment blocks at the start of the prefix, or one <file_sep>-style pseudo-file per snippet before the current file. */
  context: 'gate' | 'comment-blocks' | 'files';
  /** Roles beyond the three FIM markers that must be in the vocabulary: what tells this family from one with a subset of its tokens. */
  requires: readonly SpecialRole[];
  /** GGUF metadata that must have these values (flat keys, as in the file). */
  metadata?: Readonly<Record<string, string>>;
  /** Other special tokens that end a completion when generated (not used to build prompts). */
  stops?: readonly string[];
  /** For context 'files'. */
  repo?: RepoLayout;
  /** Where the layout was checked. */
  source: string;
}

export interface VocabularyInfo {
  /** Special/control token text -> id (from GGUF tokenizer.ggml.tokens with token_type CONTROL/USER_DEFINED, or a JSON fixture). */
  controlTokens: ReadonlyMap<string, number>;
  /** GGUF metadata that helps: general.architecture, general.name, repogate.gate_token, repogate.eof_token, tokenizer.ggml.fim_*_token_id ... */
  metadata?: ReadonlyMap<string, unknown>;
}

/** User-configurable extra names for <cc>/<eof>, tried before the family's own names. */
export interface FamilyOptions {
  gateTokens?: readonly string[];
  eofTokens?: readonly string[];
}

export interface ResolvedFamily {
  family: ModelFamily;
  ids: Partial<Record<SpecialRole, number>>;
  /** The text found in the vocabulary for each resolved role. */
  texts: Partial<Record<SpecialRole, string>>;
  /** Token ids that end a completion (eot, eos, file separators, the FIM markers themselves). */
  stopIds: number[];
  /** True when the model has a usable <cc> gate token AND <eof> (Repoformer layout). */
  hasGate: boolean;
  /** Every special token of the family present in the vocabulary (all aliases and stops), text -> id. */
  specials: ReadonlyMap<string, number>;
}

export interface PromptInput {
  path: string;
  left: string;
  right: string;
  repoName?: string;
  context?: readonly Snippet[];
}

/** A family's FIM roles from its marker texts (src/model/fimMarkers.ts). */
const fimRoles = (m: FimMarkers) => ({ fimPrefix: [m.prefix], fimSuffix: [m.suffix], fimMiddle: [m.middle] });

const STARCODER_FIM = { ...fimRoles(FIM_MARKERS.starcoder), eot: ['<|endoftext|>'] };

const QWEN_FIM = fimRoles(FIM_MARKERS.qwen);

const REPOFORMER_SOURCE =
  'amazon-science/Repoformer repo_eval/eval_vllm_repoformer.py: <fim_prefix>L<fim_suffix>R<eof>, then <cc>CC<fim_middle> or <fim_middle>; P(<cc>) is read at id 49152';

/** Most specific first: detection takes the first family whose tokens (and metadata) are all present. */
export const FAMILIES: readonly ModelFamily[] = [
  {
    id: 'repogate-tiny',
    label: 'RepoGate tiny (Repoformer layout)',
    tokens: { ...STARCODER_FIM, cc: ['<cc>'], eof: ['<eof>'] },
    order: 'psm',
    context: 'gate',
    requires: ['cc', 'eof'],
    // The same tokens as Repoformer; the project's own models say so in their metadata (test/fixtures/models/repogate-tiny.md).
    metadata: { 'repogate.format': 'repoformer' },
    source: `test/fixtures/models/repogate-tiny.md and repogate.prompt_layout in the GGUF; ${REPOFORMER_SOURCE}`,
  },
  {
    id: 'repoformer',
    label: 'Repoformer',
    // The training code calls the two added tokens <cfc_info>/<end_rc>; converted tokenizers may say </cfc_info>.
    tokens: { ...STARCODER_FIM, cc: ['<cc>', '<cfc_info>'], eof: ['<eof>', '<end_rc>', '</cfc_info>'] },
    order: 'psm',
    context: 'gate',
    requires: ['cc', 'eof'],
    stops: ['<fim_pad>'],
    source: REPOFORMER_SOURCE,
  },
  {
    id: 'starcoder2',
    label: 'StarCoder2',
    tokens: { ...STARCODER_FIM, fileSep: ['<file_sep>'], repoName: ['<repo_name>'] },
    order: 'psm',
    context: 'files',
    requires: ['fileSep', 'repoName'],
    stops: ['<fim_pad>'],
    repo: { afterRepoName: '', afterFile: '', pathInPrefix: true },
    source:
      'StarCoder2 paper (arXiv 2402.19173) §5: <repo_name>name<file_sep>path\\ncode<file_sep><fim_prefix>path\\npre<fim_suffix>suf<fim_middle>',
  },
  {
    id: 'starcoder',
    label: 'StarCoder / StarCoderBase',
    tokens: STARCODER_FIM,
    order: 'psm',
    // Trained one file per document (<reponame>..<filename>.. metadata only), so CC goes in as comments (CrossCodeEval).
    context: 'comment-blocks',
    requires: [],
    stops: ['<fim_pad>', '<filename>', '<reponame>'],
    source: 'bigcode/starcoder model card: <fim_prefix>pre<fim_suffix>suf<fim_middle>',
  },
  {
    id: 'qwen2.5-coder',
    label: 'Qwen2.5-Coder',
    tokens: { ...QWEN_FIM, eot: ['<|endoftext|>'], fileSep: ['<|file_sep|>'], repoName: ['<|repo_name|>'] },
    order: 'psm',
    context: 'files',
    requires: ['fileSep', 'repoName'],
    stops: ['<|fim_pad|>', '<|im_end|>'],
    repo: { afterRepoName: '\n', afterFile: '\n', pathInPrefix: false },
    source:
      'QwenLM/Qwen2.5-Coder examples/Qwen2.5-Coder.md "Repository Level Code Infilling": <|repo_name|>name\\n<|file_sep|>path\\ncode\\n<|file_sep|>path\\n<|fim_prefix|>pre<|fim_suffix|>suf<|fim_middle|>',
  },
  {
    id: 'codegemma',
    label: 'CodeGemma',
    tokens: { ...QWEN_FIM, eot: ['<end_of_turn>'], fileSep: ['<|file_separator|>'] },
    order: 'psm',
    // Its docs name <|file_separator|> for multi-file context but do not give the layout (path, newlines).
    context: 'comment-blocks',
    requires: ['fileSep'],
    stops: ['<eos>'],
    source: 'ai.google.dev/gemma/docs/codegemma/prompt-structure: <|fim_prefix|>pre<|fim_suffix|>suf<|fim_middle|>',
  },
  {
    id: 'deepseek-coder',
    label: 'DeepSeek-Coder',
    tokens: {
      ...fimRoles(FIM_MARKERS.deepseek),
      eot: ['<｜end▁of▁sentence｜>'],
    },
    order: 'psm',
    context: 'comment-blocks',
    requires: [],
    stops: ['<|EOT|>'],
    source: 'deepseek-ai/DeepSeek-Coder README, code insertion: <｜fim▁begin｜>pre<｜fim▁hole｜>suf<｜fim▁end｜>',
  },
  {
    id: 'codellama',
    label: 'Code Llama',
    tokens: { ...fimRoles(FIM_MARKERS.codellama), eot: ['▁<EOT>'] },
    order: 'psm',
    context: 'comment-blocks',
    requires: [],
    stops: ['</s>'],
    source: 'llama.com Meta Code Llama prompt formats: <s><PRE> pre <SUF>suf <MID>, the pieces ▁<PRE> ▁<SUF> ▁<MID>',
  },
  {
    id: 'codestral',
    label: 'Codestral',
    tokens: { ...fimRoles(FIM_MARKERS.mistral), eot: ['</s>'] },
    order: 'spm',
    context: 'comment-blocks',
    requires: [],
    source: 'mistralai/mistral-common InstructTokenizerV2.encode_fim: <s>[SUFFIX]suf[PREFIX]pre',
  },
];

const FIM_ROLES = ['fimPrefix', 'fimSuffix', 'fimMiddle'] as const;

/** The metadata keys whose values name the gate/eof tokens of a model trained by tools/tiny-model. */
const METADATA_NAMES: Partial<Record<SpecialRole, string>> = { cc: 'repogate.gate_token', eof: 'repogate.eof_token' };

/** Metadata keys holding token ids that end a completion whatever the family. */
const END_ID_KEYS = ['tokenizer.ggml.eos_token_id', 'tokenizer.ggml.eot_token_id'];

/** Texts to try for a role: user names and the model's own metadata first, then the family's names. */
function aliases(family: ModelFamily, role: SpecialRole, vocab: VocabularyInfo, options: FamilyOptions): string[] {
  const own = family.tokens[role];
  if (!own) return [];
  const user = role === 'cc' ? options.gateTokens : role === 'eof' ? options.eofTokens : undefined;
  const key = METADATA_NAMES[role];
  const named = key ? vocab.metadata?.get(key) : undefined;
  return [...new Set([...(user ?? []), ...(typeof named === 'string' ? [named] : []), ...own])];
}

function metadataMatches(family: ModelFamily, vocab: VocabularyInfo): boolean {
  return Object.entries(family.metadata ?? {}).every(([key, value]) => vocab.metadata?.get(key) === value);
}

function resolve(family: ModelFamily, vocab: VocabularyInfo, options: FamilyOptions): ResolvedFamily | string[] {
  const ids: Partial<Record<SpecialRole, number>> = {};
  const texts: Partial<Record<SpecialRole, string>> = {};
  const specials = new Map<string, number>();
  const missing: string[] = [];
  for (const role of Object.keys(family.tokens) as SpecialRole[]) {
    const names = aliases(family, role, vocab, options);
    for (const name of names) {
      const id = vocab.controlTokens.get(name);
      if (id === undefined) continue;
      specials.set(name, id);
      if (ids[role] === undefined) {
        ids[role] = id;
        texts[role] = name;
      }
    }
    const needed = (FIM_ROLES as readonly SpecialRole[]).includes(role) || family.requires.includes(role);
    if (ids[role] === undefined && needed) missing.push(names.join(' or '));
  }
  if (missing.length > 0) return missing;
  if (!metadataMatches(family, vocab))
    return Object.entries(family.metadata ?? {}).map(([k, v]) => `metadata ${k} = ${v}`);
  for (const stop of family.stops ?? []) {
    const id = vocab.controlTokens.get(stop);
    if (id !== undefined) specials.set(stop, id);
  }
  const stopIds = new Set(specials.values());
  for (const key of END_ID_KEYS) {
    const value = vocab.metadata?.get(key);
    if (typeof value === 'number' || typeof value === 'bigint') stopIds.add(Number(value));
  }
  return {
    family,
    ids,
    texts,
    stopIds: [...stopIds].sort((a, b) => a - b),
    hasGate: family.context === 'gate' && ids.cc !== undefined && ids.eof !== undefined,
    specials,
  };
}

/** Picks the family from the vocabulary (most specific match first); throws an Error naming the missing FIM tokens when none fits. */
export function detectFamily(vocab: VocabularyInfo, options: FamilyOptions = {}): ResolvedFamily {
  const misses: string[] = [];
  for (const family of FAMILIES) {
    const result = resolve(family, vocab, options);
    if (!Array.isArray(result)) return result;
    misses.push(`${family.label}: ${result.join(', ')}`);
  }
  const name = vocab.metadata?.get('general.name');
  throw new Error(
    `No supported fill-in-the-middle format in this model's vocabulary${typeof name === 'string' ? ` (${name})` : ''}. ` +
      `Missing, per family: ${misses.join('; ')}.`,
  );
}

const special = (role: SpecialRole): PromptPiece => ({ special: role });

/** Drops empty text pieces and joins adjacent ones, so that text is tokenized as the model saw it in training. */
function normalize(pieces: readonly PromptPiece[]): PromptPiece[] {
  const out: PromptPiece[] = [];
  for (const piece of pieces) {
    if ('special' in piece) out.push(piece);
    else if (piece.text !== '') {
      const last = out[out.length - 1];
      if (last && 'text' in last) out[out.length - 1] = { text: last.text + piece.text };
      else out.push(piece);
    }
  }
  return out;
}

/** The FIM markers around the code, in the family's order (psm ends at the suffix; the middle marker follows). */
function fim(f: ResolvedFamily, left: string, right: string): PromptPiece[] {
  return f.family.order === 'psm'
    ? [special('fimPrefix'), { text: left }, special('fimSuffix'), { text: right }]
    : [special('fimSuffix'), { text: right }, special('fimPrefix'), { text: left }];
}

/** What asks for the middle: the middle marker for psm; nothing for Mistral's spm, where generation follows the prefix. */
function middle(f: ResolvedFamily): PromptPiece[] {
  return f.family.order === 'psm' ? [special('fimMiddle')] : [];
}

const snippetsOf = (input: PromptInput): Snippet[] => [...(input.context ?? [])];

function requireGate(f: ResolvedFamily): void {
  if (!f.hasGate) throw new Error(`${f.family.label} has no <cc> gate: use renderPrompt`);
}

/** Gate families only: the pieces up to and including <eof>, where P(<cc>) is read. */
export function renderGatePrefix(f: ResolvedFamily, input: PromptInput): PromptPiece[] {
  requireGate(f);
  return normalize([...fim(f, input.left, input.right), special('eof')]);
}

/** Gate families only: what follows the gate prefix — [<cc>, CC text, <fim_middle>] with context, [<fim_middle>] without. */
export function renderGateContinuation(f: ResolvedFamily, input: PromptInput): PromptPiece[] {
  requireGate(f);
  const cc = renderCommentBlocks(snippetsOf(input), input.path);
  return normalize(cc ? [special('cc'), { text: cc }, special('fimMiddle')] : [special('fimMiddle')]);
}

/** The current file after the other files: its separator and path, then the FIM part (psm families). */
function repoPrompt(
  f: ResolvedFamily,
  layout: RepoLayout,
  input: PromptInput,
  snippets: readonly Snippet[],
): PromptPiece[] {
  const pieces: PromptPiece[] = [];
  // The repository name is the stable head of the prompt; files follow worst first so the best is nearest the code.
  if (input.repoName) pieces.push(special('repoName'), { text: input.repoName + layout.afterRepoName });
  for (const s of [...snippets].reverse())
    pieces.push(special('fileSep'), { text: `${shownPath(s)}\n${s.text}${layout.afterFile}` });
  const header = `${input.path}\n`;
  pieces.push(special('fileSep'));
  if (layout.pathInPrefix) pieces.push(...fim(f, header + input.left, input.right));
  else pieces.push({ text: header }, ...fim(f, input.left, input.right));
  return [...pieces, ...middle(f)];
}

/** The whole generation prompt for any family (for gate families = prefix + continuation). With an empty/absent context no CC appears. */
export function renderPrompt(f: ResolvedFamily, input: PromptInput): PromptPiece[] {
  const { family } = f;
  if (family.context === 'gate') return normalize([...renderGatePrefix(f, input), ...renderGateContinuation(f, input)]);
  const snippets = snippetsOf(input);
  if (family.context === 'files' && family.repo && snippets.length > 0)
    return normalize(repoPrompt(f, family.repo, input, snippets));
  // CrossCodeEval's layout: the comment block opens the prefix; its leading blank lines only separate it from <cc>.
  const cc = renderCommentBlocks(snippets, input.path).replace(/^\n+/, '');
  return normalize([...fim(f, cc + input.left, input.right), ...middle(f)]);
}

/** The texts of all special tokens of the resolved family (for post-processing to strip), longest first so that no text is cut inside a longer one. */
export function specialTexts(f: ResolvedFamily): string[] {
  return [...f.specials.keys()].sort((a, b) => b.length - a.length);
}
