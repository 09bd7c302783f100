import type { LineRange } from '../index/types';
import { WINDOW_LINES, WINDOW_STRIDE } from '../index/windows';
import type { Hit, Retriever } from './retriever';

/**
 * Windows proposed (after overlapping ones of the same file are dropped): as many as 2,000 characters can hold
 * once the rerank has lowered test code, so that short windows do not leave the budget empty and test code that
 * mirrors the product's lines does not keep the product window out (decisions R21).
 */
const CANDIDATES = 12;
/** Windows asked of the index: overlapping windows of one file are dropped, so more are asked than kept. */
const SEARCHED = 3 * CANDIDATES;
/**
 * Jaccard at or above this means the lines before the cursor exist nearly as they are elsewhere (a sibling
 * implementation, a copied block): what followed them there is the strongest evidence there is.
 */
export const STRONG_SIMILARITY = 0.5;
/** A presented window shorter than this keeps the match itself instead (a file's last lines). */
const MIN_FOLLOWING_LINES = 5;

/**
 * RepoCoder's global similar-code search: the windows of whole files anywhere in the repository whose identifier
 * sets are most similar to the 20 lines before the cursor (the index's inverted window index, not a scan), shown
 * from the file's lines as indexed (decisions R24).
 */
export const similarRetriever: Retriever = {
  name: 'similar',
  costMs: 2,
  retrieve({ index, request, windowQuery, scope }) {
    const hits: Hit[] = [];
    const taken = new Map<string, LineRange[]>();
    const skip = (filePath: string): boolean => filePath === request.path || !filePath.startsWith(scope);
    for (const found of index.similarWindows(windowQuery, SEARCHED, skip)) {
      const text = index.fileText(found.owner);
      if (!text) continue;
      const range = presentedRange(text.lineCount, found.start);
      const ranges = taken.get(found.owner) ?? [];
      if (ranges.some((r) => r.start < range.end && range.start < r.end)) continue;
      taken.set(found.owner, [...ranges, range]);
      hits.push({
        key: `${found.owner}#${range.start}-window`,
        snippet: {
          path: found.owner,
          range,
          text: text.lines(range.start, range.end),
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

/**
 * Code that reads like the lines before the cursor is most useful for what it did next, which is what the line
 * being written needs: the window half a stride on from the match is shown — the second half of the match and
 * the lines that follow it — unless too few lines follow it in the file.
 */
function presentedRange(lineCount: number, start: number): LineRange {
  const following = start + WINDOW_STRIDE;
  const at = lineCount - following >= MIN_FOLLOWING_LINES ? following : start;
  return { start: at, end: Math.min(lineCount, at + WINDOW_LINES) };
}
