import { identifiers } from './tokenize';
import type { Chunk } from './types';
import type { StoredWindow, Vocabulary } from './windowIndex';

/** Fallback chunking for files without a grammar (or without declarations): overlapping line windows. */
export function lineWindows(filePath: string, text: string, size = 30, stride = 20): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (let start = 0; start < lines.length; start += stride) {
    const end = Math.min(lines.length, start + size);
    const body = lines.slice(start, end).join('\n');
    if (body.trim()) {
      chunks.push({
        id: `${filePath}#${start}-${end}:window`,
        path: filePath,
        kind: 'window',
        range: { start, end },
        text: body,
        symbols: [],
      });
    }
    if (end === lines.length) break;
  }
  return chunks;
}

/** RepoCoder's retrieval unit: 20-line windows with a stride of 10. */
export const WINDOW_LINES = 20;
export const WINDOW_STRIDE = 10;
/** A chunk this many lines longer than a window still counts as one window (no 5-line tail window). */
const WINDOW_SLACK = 5;

/** Start lines (relative to the chunk) of a chunk's windows. */
export function windowStarts(lineCount: number): number[] {
  if (lineCount <= WINDOW_LINES + WINDOW_SLACK) return [0];
  const starts: number[] = [];
  for (let start = 0; start < lineCount; start += WINDOW_STRIDE) starts.push(start);
  return starts;
}

/** A chunk's windows (`windowStarts`), as the vocabulary's ids. */
export function chunkWindows(chunk: Chunk, vocabulary: Vocabulary): StoredWindow[] {
  const lines = chunk.text.split('\n');
  return windowStarts(lines.length).map((start) => ({
    start,
    ids: vocabulary.intern(identifiers(lines.slice(start, start + WINDOW_LINES).join('\n'))),
  }));
}

/**
 * RepoCoder's windows of a whole file (20 lines, stride 10, from its first line, the text between declarations
 * included), as the vocabulary's ids: what the baseline searches, so that the similar-code path sees everything it
 * sees. Windows of blank lines only are left out, as the baseline leaves them out.
 */
export function fileWindows(filePath: string, text: string, vocabulary: Vocabulary): StoredWindow[] {
  return lineWindows(filePath, text, WINDOW_LINES, WINDOW_STRIDE).map((window) => ({
    start: window.range.start,
    ids: vocabulary.intern(identifiers(window.text)),
  }));
}

/**
 * Windows as persisted: one string a window, its first line and then its tokens, space-separated (tokens are
 * identifiers, so they hold no space). Ids are not persisted: a warm start interns the tokens in its own order.
 */
export function encodeWindows(windows: readonly StoredWindow[], vocabulary: Vocabulary): string[] {
  return windows.map(({ start, ids }) => [start, ...Array.from(ids, (id) => vocabulary.name(id))].join(' '));
}

export function decodeWindows(encoded: readonly string[], vocabulary: Vocabulary): StoredWindow[] {
  return encoded.map((window) => {
    const [start, ...tokens] = window.split(' ');
    return { start: Number(start), ids: vocabulary.intern(tokens) };
  });
}
