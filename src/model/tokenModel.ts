/**
 * What evaluates tokens for the completion engine, wherever it runs: the in-process model (CodeModel) or a model
 * on an inference server (remote/remoteModel.ts). Prompts are built and tokenized on the editor side either way;
 * only token ids cross to the evaluator, so code that spells a control token stays text.
 */
import { LRUCache } from 'lru-cache';
import type { PromptPiece, ResolvedFamily } from './families';
import type { GenerateOptions, GenerateResult, ProbeResult } from './fimSession';

export type { EvaluationCost, GenerateOptions, GenerateResult, ProbeResult } from './fimSession';

export type Backend = 'cpu' | 'cuda' | 'vulkan' | 'metal' | 'server';

/** What a loaded model is and where it runs (explanations, the status bar, the engine protocol). */
export interface ModelInfo {
  path: string;
  name?: string;
  family: ResolvedFamily;
  backend: Backend;
  gpuLayers: number;
  totalLayers: number;
  threads: number;
  contextSize: number;
  trainContextSize: number;
  /** The model's recommended gate threshold (repogate.gate_threshold), when it declares one. */
  gateThreshold?: number;
  loadMs: number;
  /** Where the model runs when it is not in this process. */
  server?: ServerInfo;
}

/** A next-token distribution; a server returns only its top k, so the tokens it leaves out are bounded. */
export interface TokenProbe extends ProbeResult {
  /** Every token absent from `probabilities` has at most this probability (absent: the map is complete). */
  unlistedAtMost?: number;
}

/** Evaluation on one KV cache (a local sequence or a server slot): reuses the prefix shared with the last request. */
export interface TokenSession {
  /** Empties the cache: the next request evaluates its whole prompt. */
  reset(): Promise<void>;
  probe(tokens: readonly number[]): Promise<TokenProbe>;
  /** Greedy generation after `tokens`, streamed through `onText`; stops within a token of an abort. */
  generate(tokens: readonly number[], options: GenerateOptions): Promise<GenerateResult>;
}

/**
 * A session on a local KV cache, which also measures its prompt speed and can fill its cache in the background:
 * what the engine's time budget and 'line' layout choice need. A server's session offers none of it.
 */
export interface TimedSession extends TokenSession {
  /** Milliseconds per prompt token measured on this machine (undefined before the first measured evaluation). */
  readonly promptMsPerToken: number | undefined;
  /** How many leading tokens of `tokens` the cache holds now. */
  cachedPrefix(tokens: readonly number[]): number;
  /** Evaluates `tokens` into the cache in steps, stopping when `signal` aborts; whether all of them are cached. */
  prefill(tokens: readonly number[], signal: AbortSignal): Promise<boolean>;
}

/** The session as a TimedSession when it is one (a local model's), else undefined (a server's). */
export function timedSession(session: TokenSession): TimedSession | undefined {
  return 'prefill' in session && 'cachedPrefix' in session ? (session as TimedSession) : undefined;
}

export interface TokenModel {
  readonly info: ModelInfo;
  readonly session: TokenSession;
  promptTokens(pieces: readonly PromptPiece[]): number[];
  tokenize(pieces: readonly PromptPiece[]): number[];
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

/**
 * The probability to decide on: the listed one, or for a token outside a top-k list the k-th probability, its
 * upper bound (a gate that does not fire on the bound would not fire on the true value either).
 */
export function probabilityOf(probe: TokenProbe, id: number): number {
  return probe.probabilities.get(id) ?? probe.unlistedAtMost ?? 0;
}

/**
 * Characters of tokenized text remembered. A keystroke tokenizes mostly the texts the previous one did (the left
 * window, the right context's cuts, the snippets and their paths), and each native call costs 0.3-2 ms however
 * short the text (Qwen2.5-Coder's pre-tokenizer): uncached, a keystroke spent 25-150 ms tokenizing. This holds
 * about thirty line starts' worth of left-window cuts.
 */
const TOKEN_CACHE_CHARS = 2_000_000;

/**
 * The prompt side of a model: prompt pieces to token ids with a text tokenizer that never parses special tokens
 * (code that spells "<fim_prefix>" stays text); special pieces map to the family's ids.
 */
export abstract class TokenizingModel {
  private readonly remembered = new LRUCache<string, readonly number[]>({
    maxSize: TOKEN_CACHE_CHARS,
    sizeCalculation: (_tokens, text) => text.length + 1,
  });

  protected constructor(
    private readonly promptFamily: ResolvedFamily,
    private readonly tokenizeText: (text: string) => readonly number[],
    /** Prepended to whole prompts when the model asks for it (CodeLlama, DeepSeek-Coder, Codestral). */
    private readonly bos?: number,
  ) {}

  /** A whole prompt: the family's pieces, after BOS when the model wants one. */
  promptTokens(pieces: readonly PromptPiece[]): number[] {
    const tokens = this.tokenize(pieces);
    return this.bos === undefined ? tokens : [this.bos, ...tokens];
  }

  tokenize(pieces: readonly PromptPiece[]): number[] {
    const out: number[] = [];
    for (const piece of pieces) {
      if ('text' in piece) {
        // A loop, not push(...): a long file's tokens would overflow the call stack as arguments.
        if (piece.text) for (const token of this.textTokens(piece.text)) out.push(token);
        continue;
      }
      const id = this.promptFamily.ids[piece.special];
      if (id === undefined) throw new Error(`${this.promptFamily.family.label} has no ${piece.special} token`);
      out.push(id);
    }
    return out;
  }

  countTokens(text: string): number {
    return text ? this.textTokens(text).length : 0;
  }

  private textTokens(text: string): readonly number[] {
    let tokens = this.remembered.get(text);
    if (!tokens) this.remembered.set(text, (tokens = this.tokenizeText(text)));
    return tokens;
  }
}

export type RemoteEngine = 'llama-server' | 'openai-compatible' | 'ollama';

/** A model on an inference server, as the editor reports it. */
export interface ServerInfo {
  engine: RemoteEngine;
  url: string;
  /** The model name sent to an OpenAI-compatible server (vLLM serves one per name) or to Ollama. */
  model?: string;
  /** How prompts go to the server, once it has been checked: token ids, or text it tokenizes again. */
  promptFormat?: 'token-ids' | 'text';
  /** Why the server cannot give P(<cc>) (the heuristic gate decides instead); absent when it can. */
  gateNote?: string;
  /** The latest request's failure, cleared by the next success: what the status bar shows. */
  problem?: { message: string; hint?: string };
}
