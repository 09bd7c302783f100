import { identifiers } from '../index/tokenize';
import type { RepoIndex } from '../index/repoIndex';
import { mostSimilarWindow } from './chunkWindows';
import type { Retriever } from './retriever';

/** Chunks BM25 proposes. */
const CANDIDATES = 12;
/**
 * Identifiers in more than this share of files are left out of the query, and at most this many terms are
 * kept, nearest the cursor first: every term's posting list is BM25's cost, and a tighter bound loses the terms
 * that find the definition in some repositories.
 */
const COMMON_SHARE = 0.1;
const TERMS = 10;

/**
 * BM25 over chunks with the distinctive identifiers near the cursor; a long chunk is presented by
 * its window most similar to the lines before the cursor.
 */
export const lexicalRetriever: Retriever = {
  name: 'lexical',
  costMs: 3,
  retrieve({ index, request, query, windowQuery, scope }) {
    const current = `${request.path}#`;
    const searched = (id: string): boolean => !id.startsWith(current);
    const terms = distinctiveTerms(index, query.lexicalText, scope);
    return index.searchChunks(terms, CANDIDATES, searched, scope).flatMap((hit) => {
      const chunk = index.chunk(hit.id);
      if (!chunk) return [];
      const { similarity: _similarity, ...window } = mostSimilarWindow(index, chunk, windowQuery);
      // Keyed by its chunk, not merged with the same window from the similar-code paths: merged, it would count
      // against their share of the budget.
      const key = chunk.id;
      const why = `BM25 ${hit.score.toFixed(1)}`;
      return [{ key, snippet: { ...window, retriever: 'lexical' as const, why, score: hit.score }, strong: false }];
    });
  },
};

/**
 * The query's identifiers that are not everywhere in the repository (the project under `scope`, as R29 scopes the
 * search), nearest the cursor first: a word used in most files (`const`, `this`, `props`) barely moves BM25 yet
 * costs the longest posting list.
 */
export function distinctiveTerms(index: RepoIndex, text: string, scope = ''): string {
  const limit = Math.max(20, index.fileCount(scope) * COMMON_SHARE);
  const kept: string[] = [];
  for (const name of new Set(identifiers(text).reverse())) {
    if (index.frequency(name, scope) <= limit) kept.push(name);
    if (kept.length === TERMS) break;
  }
  return kept.join(' ');
}
