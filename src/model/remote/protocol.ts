/**
 * One inference server's API, as the remote model needs it: a check that the server's model is the one whose
 * vocabulary the editor tokenizes with, the top-k next-token probabilities after a prompt, and a greedy stream
 * after one. A prompt goes as token ids where the server takes them, else as text with the model's control tokens
 * spelled out. Implemented for llama-server (llamaServer.ts), OpenAI-compatible servers such as vLLM, LM Studio
 * or llamafile (openaiCompatible.ts) and Ollama (ollama.ts).
 */
import type { EvaluationCost, RemoteEngine } from '../tokenModel';
import { ServerError } from './http';

/** What the server's model must agree on with the local vocabulary. */
export interface VocabularyCheck {
  /** Control-token texts and the ids the local vocabulary gives them (<fim_prefix>, <cc>, ...). */
  specials: ReadonlyMap<string, number>;
  /** A fixed piece of code (never the user's) and its ids without special-token parsing. */
  sample: { text: string; ids: readonly number[] };
}

/** How prompts go to the server: token ids (exact), or text that the server tokenizes again. */
export type PromptFormat = 'token-ids' | 'text';

export interface ServerFacts {
  /** Tokens of context a request gets on the server (per slot), when it says. */
  contextSize?: number;
  /** How this server takes prompts (found out once, or as configured). */
  promptFormat: PromptFormat;
  /** Why P(<cc>) cannot be read from this server (no next-token probabilities); absent: it can. */
  noProbabilities?: string;
}

/** The local vocabulary, as a protocol that speaks text needs it. */
export interface Vocabulary {
  /** A prompt of token ids as the text a server tokenizes back into the same ids (prompt-text.ts). */
  promptText(tokens: readonly number[]): string;
  /** The id of a token the server names by its text (a control token, or a text of exactly one token). */
  idOf(text: string): number | undefined;
  /** The texts at which a text-only stream stops: the family's end-of-completion tokens. */
  readonly stopTexts: readonly string[];
}

export interface TopProbabilities {
  probabilities: Map<number, number>;
  /** The k-th probability when the server listed k tokens, an upper bound for the others. */
  unlistedAtMost?: number;
  cost?: EvaluationCost;
}

export type StreamEvent =
  | { token: number; probability?: number }
  /** A server that streams text without token ids (LM Studio, llamafile, Ollama). */
  | { text: string; probability?: number }
  | { cost: EvaluationCost }
  /** The server stopped at an end-of-generation token without sending it. */
  | { endOfText: true };

export interface ServerRequest {
  tokens: readonly number[];
  /** False once after a reset: the server evaluates the whole prompt. */
  cachePrompt: boolean;
  signal?: AbortSignal;
}

export interface ServerProtocol {
  readonly engine: RemoteEngine;
  /** Servers spoken to in text learn the local vocabulary once the model has read it. */
  bind?(vocabulary: Vocabulary): void;
  check(expected: VocabularyCheck, signal?: AbortSignal): Promise<ServerFacts>;
  top(request: ServerRequest): Promise<TopProbabilities>;
  /** Ends (closing the connection) when the consumer stops iterating. */
  stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent>;
}

/** Tokens a probe asks for; the gate token outside them is bounded by the last one. */
export const PROBE_TOP_K = { llamaServer: 50, openai: 20, ollama: 20 } as const;

/** Throws a clear error when a JSON answer lacks what the protocol promises. */
export function expectShape(ok: boolean, where: string, what: string): asserts ok {
  if (!ok) {
    throw new ServerError(
      'bad-response',
      `${where} answered without ${what}`,
      'Check "repogate.engine": the server may speak another API.',
    );
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The probabilities of a top-k list, with the bound for the tokens it leaves out. */
export function topFrom(
  entries: readonly { id: number; probability: number }[],
  k: number,
): Omit<TopProbabilities, 'cost'> {
  const probabilities = new Map<number, number>();
  for (const e of entries) probabilities.set(e.id, e.probability);
  return { probabilities, unlistedAtMost: kthProbability(entries, k) };
}

/** The k-th probability of a full top-k list (every token left out has at most this), 0 for a shorter list. */
function kthProbability(entries: readonly { probability: number }[], k: number): number {
  return entries.length >= k ? Math.min(...entries.map((e) => e.probability)) : 0;
}

/** A top-k list whose entries name tokens by text; entries the local vocabulary cannot map are left out. */
export function topFromTexts(
  entries: readonly { text: string; probability: number }[],
  k: number,
  vocabulary: Vocabulary,
): Omit<TopProbabilities, 'cost'> {
  const probabilities = new Map<number, number>();
  for (const e of entries) {
    const id = vocabulary.idOf(e.text);
    if (id !== undefined) probabilities.set(id, e.probability);
  }
  // The bound comes from the whole list the server sent, mapped or not.
  return { probabilities, unlistedAtMost: kthProbability(entries, k) };
}

/** A prompt's cost from the server's count of tokens it took from its cache. */
export function costFromCached(promptLength: number, cached: unknown): EvaluationCost | undefined {
  if (typeof cached !== 'number' || !Number.isFinite(cached)) return undefined;
  const reused = Math.max(0, Math.min(promptLength, cached));
  return { reused, evaluated: promptLength - reused };
}
