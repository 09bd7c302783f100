import type { RepoIndex } from '../index/repoIndex';
import type { FileFacts } from '../index/types';
import type { WindowQuery } from '../index/windowIndex';
import type { RetrievalQuery } from './query';
import type { RetrievalRequest, RetrieverName, Snippet } from './types';

/** What every retriever sees for one cursor: the index, the request, its query, the current file's facts. */
export interface RetrievalContext {
  index: RepoIndex;
  request: RetrievalRequest;
  query: RetrievalQuery;
  facts: FileFacts;
  /** The cursor's character offset in `request.text`, worked out once for every reader of the text around it. */
  offset: number;
  /**
   * Identifier set of RepoCoder's query window (the 20 lines before the cursor), with the window index's ids for
   * it, prepared once for every window it is compared with.
   */
  windowQuery: WindowQuery;
  /** The key prefix the searches keep to (`RepoIndex.searchScope` of the request's file), worked out once. */
  scope: string;
}

/** One candidate of one retriever. */
export interface Hit {
  /** Identifies the same code found by several retrievers. */
  key: string;
  snippet: Snippet;
  /**
   * Evidence strong enough that the candidate must not be crowded out of the budget by the fusion (a window
   * nearly identical to the lines before the cursor, the definition of a name on the cursor's line).
   */
  strong: boolean;
}

/** One candidate path: best first, its own score in `snippet.score`. */
export interface Retriever {
  readonly name: RetrieverName;
  /** Share of the 10 ms p50 target this retriever may take (the benchmark reports each stage against it). */
  readonly costMs: number;
  retrieve(context: RetrievalContext): Hit[];
}
