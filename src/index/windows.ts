import { identifiers } from './tokenize';
import type { Chunk } from './types';
import { distinctSorted, type StoredWindow, type Vocabulary } from './windowIndex';

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
  const starts = windowStarts(lines.length);
  // A chunk's last lines past its single window's 20 are in no window: their words are not interned.
  const lineIds = lineTokenIds(lines.slice(0, starts[starts.length - 1] + WINDOW_LINES), vocabulary);
  return starts.map((start) => ({ start, ids: windowIds(lineIds, start) }));
}

/**
 * RepoCoder's windows of a whole file (20 lines, stride 10, from its first line, the text between declarations
 * included), as the vocabulary's ids: what the baseline searches, so that the similar-code path sees everything it
 * sees (`lineWindows`' layout). Windows without identifiers are left out (the index stores none), as the baseline
 * leaves out windows of blank lines. Each line is tokenized once and no window's text is built: an editor's update
 * rebuilds every window of the file.
 */
export function fileWindows(text: string, vocabulary: Vocabulary): StoredWindow[] {
  const lineIds = lineTokenIds(text.split('\n'), vocabulary);
  const windows: StoredWindow[] = [];
  for (let start = 0; start < lineIds.length; start += WINDOW_STRIDE) {
    const ids = windowIds(lineIds, start);
    if (ids.length > 0) windows.push({ start, ids });
    if (start + WINDOW_LINES >= lineIds.length) break;
  }
  return windows;
}

/** Each line's identifiers as the vocabulary's ids (interned in the order they occur, duplicates kept). */
function lineTokenIds(lines: readonly string[], vocabulary: Vocabulary): Int32Array[] {
  return lines.map((line) => vocabulary.internAll(identifiers(line)));
}

/** The distinct ids of the window of `WINDOW_LINES` lines from `start`, sorted. */
function windowIds(lineIds: readonly Int32Array[], start: number): Int32Array {
  const end = Math.min(lineIds.length, start + WINDOW_LINES);
  let length = 0;
  for (let line = start; line < end; line++) length += lineIds[line].length;
  const ids = new Int32Array(length);
  let at = 0;
  for (let line = start; line < end; line++) {
    ids.set(lineIds[line], at);
    at += lineIds[line].length;
  }
  return distinctSorted(ids);
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
