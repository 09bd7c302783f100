import type { Cursor } from '../index/cursor';
import type { LineRange } from '../index/types';

/** Which candidate path found a snippet. */
export type RetrieverName = 'definition' | 'lexical' | 'similar' | 'sibling' | 'recent';

export interface Snippet {
  path: string;
  range: LineRange;
  text: string;
  retriever: RetrieverName;
  /** Human-readable reason, e.g. "outline of UserRepo, type of this.repo". */
  why: string;
  score: number;
  /** For a type outline written one member a line: the members, in line order after the header. */
  members?: string[];
  /**
   * The path the prompt shows, when not `path`: relative to the project the search kept to (decisions R29), where
   * repositories lie side by side in one folder. The prompt's path lines cost budget, as they would alone.
   */
  shownPath?: string;
}

/** The path a prompt shows for a snippet. */
export const shownPath = (snippet: Pick<Snippet, 'path' | 'shownPath'>): string => snippet.shownPath ?? snippet.path;

// A request's cursor; the engine and retrieval share the type, defined below both.
export type { Cursor } from '../index/cursor';

export interface RecentFile {
  path: string;
  text: string;
}

export interface RetrievalRequest {
  path: string;
  text: string;
  cursor: Cursor;
  /** A draft completion: the second query becomes RepoCoder's iteration-2 query. */
  draft?: string;
  /** Files the user opened or edited recently, most recent first (the current one is skipped). */
  recent?: RecentFile[];
  /** Characters of packed context, headers included (≈ 4 characters a token). */
  budget?: number;
  /** Names to look up: the result says which of them another indexed file declares (the heuristic gate's signal). */
  names?: readonly string[];
  /** Only these retrievers run (the benchmark's per-retriever recall); all of them when absent. */
  retrievers?: readonly RetrieverName[];
}

export interface RetrievalTimings {
  /** Milliseconds of each stage: `query`, each retriever by name, `pack` (fusion, rerank and packing). */
  stages: Record<string, number>;
  totalMs: number;
}

export interface RetrievalResult {
  /** Packed snippets, best first. */
  snippets: Snippet[];
  /** Candidates that did not fit the budget or overlapped, for explanations. */
  dropped: Snippet[];
  timings: RetrievalTimings;
  /** The request's `names` that a file other than the request's declares. */
  declaredElsewhere?: string[];
}
