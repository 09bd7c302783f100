import type { RepoIndex } from '../index/repoIndex';
import type { Chunk } from '../index/types';
import type { WindowQuery } from '../index/windowIndex';
import { WINDOW_LINES, WINDOW_STRIDE, windowStarts } from '../index/windows';
import { jaccard, tokenSet } from './query';
import type { Snippet } from './types';

/** A presented window shorter than this keeps the match itself instead (a chunk's last lines). */
const MIN_FOLLOWING_LINES = 5;

export type Presented = Pick<Snippet, 'path' | 'range' | 'text' | 'members'>;

/** A chunk as a snippet; outlines written one member a line say which member each line holds. */
export function snippetOf(chunk: Chunk): Presented {
  const members = chunk.symbols.length - 1;
  const lines = chunk.kind === 'outline' ? linesOf(chunk).length : 0;
  const oneMemberALine = chunk.kind === 'outline' && members > 0 && (lines === members + 1 || lines === members + 2);
  return {
    path: chunk.path,
    range: chunk.range,
    text: chunk.text,
    members: oneMemberALine ? chunk.symbols.slice(1) : undefined,
  };
}

/** A chunk's lines, split once per chunk object: chunks live until their file changes, and queries keep meeting them. */
const lineCache = new WeakMap<Chunk, string[]>();

function linesOf(chunk: Chunk): string[] {
  let lines = lineCache.get(chunk);
  if (!lines) {
    lines = chunk.text.split('\n');
    lineCache.set(chunk, lines);
  }
  return lines;
}

/** Token sets of the windows of chunks the window index does not hold (outlines), once per chunk object. */
const windowTokenCache = new WeakMap<Chunk, { start: number; tokens: Set<string> }[]>();

function windowTokensOf(chunk: Chunk): { start: number; tokens: Set<string> }[] {
  let windows = windowTokenCache.get(chunk);
  if (!windows) {
    const lines = linesOf(chunk);
    windows = windowStarts(lines.length).map((start) => ({
      start,
      tokens: tokenSet(lines.slice(start, start + WINDOW_LINES).join('\n')),
    }));
    windowTokenCache.set(chunk, windows);
  }
  return windows;
}

/**
 * Code that reads like the lines before the cursor is most useful for what it did next, which is what the line
 * being written needs: the window half a stride on from the match is shown — the second half of the match and
 * the lines that follow it. A chunk of one window is shown whole.
 */
export function presentWindow(chunk: Chunk, start: number): Presented {
  let byStart = presentedCache.get(chunk);
  if (!byStart) {
    byStart = new Map();
    presentedCache.set(chunk, byStart);
  }
  let presented = byStart.get(start);
  if (!presented) {
    presented = present(chunk, start);
    byStart.set(start, presented);
  }
  return presented;
}

/** Windows already presented, per chunk object: the same window keeps the same text string (and cached tokens). */
const presentedCache = new WeakMap<Chunk, Map<number, Presented>>();

function present(chunk: Chunk, start: number): Presented {
  const lines = linesOf(chunk);
  if (lines.length <= WINDOW_LINES + 5) return snippetOf(chunk);
  const following = start + WINDOW_STRIDE;
  const at = lines.length - following >= MIN_FOLLOWING_LINES ? following : start;
  const shown = lines.slice(at, at + WINDOW_LINES);
  const first = chunk.range.start + at;
  return { path: chunk.path, range: { start: first, end: first + shown.length }, text: shown.join('\n') };
}

/**
 * The window of a chunk most similar (Jaccard) to the query (the first of equals), from the window index's stored
 * ids when it holds the chunk, else (an outline) from the chunk's text.
 */
export function bestWindow(index: RepoIndex, chunk: Chunk, query: WindowQuery): { start: number; score: number } {
  const stored = index.bestWindow(chunk, query);
  if (stored) return stored;
  let best = { start: 0, score: -1 };
  for (const window of windowTokensOf(chunk)) {
    const score = jaccard(query.tokens, window.tokens);
    if (score > best.score) best = { start: window.start, score };
  }
  return best;
}

/** The most similar window of a chunk (`bestWindow`), presented as `presentWindow` does. */
export function mostSimilarWindow(
  index: RepoIndex,
  chunk: Chunk,
  query: WindowQuery,
): Presented & { similarity: number } {
  const best = bestWindow(index, chunk, query);
  return { ...presentWindow(chunk, best.start), similarity: best.score };
}
