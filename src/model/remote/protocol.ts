/**
 * One inference server's API, as the remote model needs it: a check that the server's model is the one whose
 * vocabulary the editor tokenizes with, the top-k next-token probabilities after a prompt of token ids, and a
 * greedy token stream after one. Implemented for llama-server (llamaServer.ts) and for OpenAI-compatible
 * servers such as vLLM (openaiCompatible.ts).
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

export interface ServerFacts {
  /** Tokens of context a request gets on the server (per slot), when it says. */
  contextSize?: number;
}

export interface TopProbabilities {
  probabilities: Map<number, number>;
  /** The k-th probability when the server listed k tokens, an upper bound for the others. */
  unlistedAtMost?: number;
  cost?: EvaluationCost;
}

export type StreamEvent =
  | { token: number; probability?: number }
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
  check(expected: VocabularyCheck, signal?: AbortSignal): Promise<ServerFacts>;
  top(request: ServerRequest): Promise<TopProbabilities>;
  /** Ends (closing the connection) when the consumer stops iterating. */
  stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent>;
}

/** Tokens a probe asks for; the gate token outside them is bounded by the last one. */
export const PROBE_TOP_K = { llamaServer: 50, openai: 20 } as const;

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
  const last = entries.length >= k ? Math.min(...entries.map((e) => e.probability)) : undefined;
  return { probabilities, unlistedAtMost: last ?? 0 };
}

/** A prompt's cost from the server's count of tokens it took from its cache. */
export function costFromCached(promptLength: number, cached: unknown): EvaluationCost | undefined {
  if (typeof cached !== 'number' || !Number.isFinite(cached)) return undefined;
  const reused = Math.max(0, Math.min(promptLength, cached));
  return { reused, evaluated: promptLength - reused };
}
