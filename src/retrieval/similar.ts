import { presentWindow } from './chunkWindows';
import type { Hit, Retriever } from './retriever';

/**
 * Windows proposed (after overlapping ones of the same chunk are dropped): as many as 2,000 characters can hold
 * once the rerank has lowered test code, so that short windows do not leave the budget empty and test code that
 * mirrors the product's lines does not keep the product window out (decisions R21).
 */
const CANDIDATES = 12;
/** Windows asked of the index: overlapping windows of one chunk are merged, so more are asked than kept. */
const SEARCHED = 3 * CANDIDATES;
/**
 * Jaccard at or above this means the lines before the cursor exist nearly as they are elsewhere (a sibling
 * implementation, a copied block): what followed them there is the strongest evidence there is.
 */
export const STRONG_SIMILARITY = 0.5;

/**
 * RepoCoder's global similar-code search: the windows anywhere in the repository whose identifier sets are
 * most similar to the 20 lines before the cursor (the index's inverted window index, not a scan).
 */
export const similarRetriever: Retriever = {
  name: 'similar',
  costMs: 2,
  retrieve({ index, request, windowQuery }) {
    const hits: Hit[] = [];
    const taken = new Set<string>();
    for (const found of index.similarWindows(windowQuery, SEARCHED, (chunk) => chunk.path === request.path)) {
      if (taken.has(found.chunk.id)) continue;
      taken.add(found.chunk.id);
      const window = presentWindow(found.chunk, found.start);
      hits.push({
        key: `${window.path}#${window.range.start}-window`,
        snippet: {
          ...window,
          retriever: 'similar',
          why: `Jaccard ${found.score.toFixed(2)} anywhere in the repository`,
          score: found.score,
        },
        strong: found.score >= STRONG_SIMILARITY,
      });
      if (hits.length === CANDIDATES) break;
    }
    return hits;
  },
};
