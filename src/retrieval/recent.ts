import { lineWindows, WINDOW_LINES, WINDOW_STRIDE } from '../index/windows';
import { jaccard, tokenSet } from './query';
import type { Retriever } from './retriever';
import type { Snippet } from './types';

/** Files an editor sends as recent (the other visible editors): the few the user is looking at. */
export const RECENT_FILES = 3;
/** Characters sent of each recent file: a long file's head, not all of it, crosses to the index worker. */
export const RECENT_FILE_CHARS = 20_000;
const CANDIDATES = 4;
/** Recent files searched, most recent first. */
const FILES = 10;

/** Jaccard-similar 20-line windows from recently used files (as Copilot and Cody do). */
export const recentRetriever: Retriever = {
  name: 'recent',
  costMs: 1,
  retrieve({ request, windowQuery }) {
    if (!request.recent?.length) return [];
    const scored: Snippet[] = [];
    for (const file of request.recent.filter((f) => f.path !== request.path).slice(0, FILES)) {
      for (const window of lineWindows(file.path, file.text, WINDOW_LINES, WINDOW_STRIDE)) {
        const score = jaccard(windowQuery.tokens, tokenSet(window.text));
        if (score <= 0) continue;
        const why = `Jaccard ${score.toFixed(2)} with a recent file`;
        scored.push({ path: file.path, range: window.range, text: window.text, retriever: 'recent', why, score });
      }
    }
    return scored
      .sort((a, b) => b.score - a.score)
      .slice(0, CANDIDATES)
      .map((snippet) => ({ key: `${snippet.path}#${snippet.range.start}-window`, snippet, strong: false }));
  },
};
