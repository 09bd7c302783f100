import type { Cursor } from './types';

/** The character offset of a cursor (zero-based line and UTF-16 column) in a document's text, clamped to the line. */
export function offsetOf(text: string, cursor: Cursor): number {
  let offset = 0;
  for (let line = 0; line < cursor.line; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  const end = text.indexOf('\n', offset);
  return Math.min(offset + cursor.character, end < 0 ? text.length : end);
}
