import { identifiers } from './tokenize';
import { chunkId, type Chunk } from './types';
import { ByteWriter, VarintReader } from './varint';
import { distinctSorted, type StoredWindow, type Vocabulary } from './windowIndex';

/** Fallback chunking for files without a grammar (or without declarations): overlapping line windows. */
export function lineWindows(filePath: string, text: string, size = 30, stride = 20): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (let start = 0; start < lines.length; start += stride) {
    const end = Math.min(lines.length, start + size);
    const body = lines.slice(start, end).join('\n');
    if (body.trim()) {
      const range = { start, end };
      chunks.push({
        id: chunkId(filePath, range, 'window'),
        path: filePath,
        kind: 'window',
        range,
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
  return windowsOf(lineIds, starts);
}

function windowsOf(lineIds: readonly Int32Array[], starts: readonly number[]): StoredWindow[] {
  return starts.map((start) => ({ start, ids: windowIds(lineIds, start) }));
}

/**
 * A file's windows (`fileWindows`) and those of each of its chunks that holds its lines as they are (undefined for
 * the others, outlines among them: `chunkWindows` reads their text), each line tokenized once for both.
 */
export function fileAndChunkWindows(
  text: string,
  chunks: readonly Chunk[],
  vocabulary: Vocabulary,
): { file: StoredWindow[]; chunks: (StoredWindow[] | undefined)[] } {
  const lines = text.split('\n');
  const lineIds = lineTokenIds(lines, vocabulary);
  const ofChunk = (chunk: Chunk): StoredWindow[] | undefined => {
    const { start, end } = chunk.range;
    if (chunk.kind === 'outline' || end > lines.length) return undefined;
    let length = end - start - 1;
    for (let line = start; line < end; line++) length += lines[line].length;
    // The chunk's text is its lines joined when the lengths agree (how extract.ts makes every chunk but outlines).
    if (length !== chunk.text.length) return undefined;
    return windowsOf(lineIds.slice(start, end), windowStarts(end - start));
  };
  return { file: windowsOfFile(lineIds), chunks: chunks.map(ofChunk) };
}

/**
 * RepoCoder's windows of a whole file (20 lines, stride 10, from its first line, the text between declarations
 * included), as the vocabulary's ids: what the baseline searches, so that the similar-code path sees everything it
 * sees (`lineWindows`' layout). Windows without identifiers are left out (the index stores none), as the baseline
 * leaves out windows of blank lines. Each line is tokenized once and no window's text is built: an editor's update
 * rebuilds every window of the file.
 */
export function fileWindows(text: string, vocabulary: Vocabulary): StoredWindow[] {
  return windowsOfFile(lineTokenIds(text.split('\n'), vocabulary));
}

function windowsOfFile(lineIds: readonly Int32Array[]): StoredWindow[] {
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
 * Lists of windows as persisted: varints (the list count; per list its window count; per window its start, its id
 * count and its ids as gaps) in base64. Ids index the persisted vocabulary (`RepoIndex.vocabularyWords`), which a
 * warm start interns once, instead of a word per window occurrence.
 */
export function encodeWindowLists(lists: readonly (readonly StoredWindow[])[]): string {
  const out = new ByteWriter();
  out.varint(lists.length);
  for (const windows of lists) {
    out.varint(windows.length);
    for (const { start, ids } of windows) {
      out.varint(start);
      out.varint(ids.length);
      for (let i = 0; i < ids.length; i++) out.varint(ids[i] - (i ? ids[i - 1] : 0));
    }
  }
  return Buffer.from(out.bytes.buffer, 0, out.length).toString('base64');
}

/** `encodeWindowLists`' lists, each persisted id taken to `remap[id]` (undefined: the same ids). */
export function decodeWindowLists(encoded: string, remap?: Int32Array): StoredWindow[][] {
  const input = new VarintReader(Buffer.from(encoded, 'base64'));
  return Array.from({ length: input.next() }, () =>
    Array.from({ length: input.next() }, () => {
      const start = input.next();
      const ids = new Int32Array(input.next());
      for (let i = 0, id = 0; i < ids.length; i++) ids[i] = id += input.next();
      if (remap) {
        for (let i = 0; i < ids.length; i++) ids[i] = remap[ids[i]];
        ids.sort();
      }
      return { start, ids };
    }),
  );
}
