import { WINDOW_LINES, WINDOW_STRIDE, windowStarts } from '../index/windows';
import type { Chunk } from '../index/types';
import { jaccard, tokenSet } from './query';
import type { Snippet } from './types';

/** A presented window shorter than this keeps the match itself instead (a chunk's last lines). */
const MIN_FOLLOWING_LINES = 5;

export type Presented = Pick<Snippet, 'path' | 'range' | 'text' | 'members'>;

/** A chunk as a snippet; outlines written one member a line say which member each line holds. */
export function snippetOf(chunk: Chunk): Presented {
  const members = chunk.symbols.slice(1);
  const lines = chunk.text.split('\n').length;
  const oneMemberALine =
    chunk.kind === 'outline' && members.length > 0 && (lines === members.length + 1 || lines === members.length + 2);
  return { path: chunk.path, range: chunk.range, text: chunk.text, members: oneMemberALine ? members : undefined };
}

interface ChunkWindow {
  start: number;
  tokens: Set<string>;
}

/**
 * A chunk's 20-line windows with their token sets, computed once per chunk object: chunks live until their
 * file changes, and consecutive queries keep meeting the same ones.
 */
const windowCache = new WeakMap<Chunk, { lines: string[]; windows: ChunkWindow[] }>();

function windowsOf(chunk: Chunk): { lines: string[]; windows: ChunkWindow[] } {
  let cached = windowCache.get(chunk);
  if (!cached) {
    const lines = chunk.text.split('\n');
    const windows = windowStarts(lines.length).map((start) => ({
      start,
      tokens: tokenSet(lines.slice(start, start + WINDOW_LINES).join('\n')),
    }));
    cached = { lines, windows };
    windowCache.set(chunk, cached);
  }
  return cached;
}

/**
 * Code that reads like the lines before the cursor is most useful for what it did next, which is what the line
 * being written needs: the window half a stride on from the match is shown — the second half of the match and
 * the lines that follow it (+2 points of recall on the development benchmark over showing the match). A chunk
 * of one window is shown whole.
 */
export function presentWindow(chunk: Chunk, start: number): Presented {
  const { lines } = windowsOf(chunk);
  if (lines.length <= WINDOW_LINES + 5) return snippetOf(chunk);
  const following = start + WINDOW_STRIDE;
  const at = lines.length - following >= MIN_FOLLOWING_LINES ? following : start;
  const shown = lines.slice(at, at + WINDOW_LINES);
  const first = chunk.range.start + at;
  return { path: chunk.path, range: { start: first, end: first + shown.length }, text: shown.join('\n') };
}

/** The window of a chunk most similar (Jaccard) to `target`, presented as `presentWindow` does. */
export function mostSimilarWindow(chunk: Chunk, target: Set<string>): Presented & { similarity: number } {
  let best = { start: 0, score: -1 };
  for (const window of windowsOf(chunk).windows) {
    const score = jaccard(target, window.tokens);
    if (score > best.score) best = { start: window.start, score };
  }
  return { ...presentWindow(chunk, best.start), similarity: best.score };
}
