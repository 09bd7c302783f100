/** A position in a document: zero-based line and column (UTF-16 code units), as in VS Code. */
export interface Cursor {
  line: number;
  character: number;
}

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

/** `text.split('\n').slice(from, to)` without splitting the lines outside it: a request reads a 5,000-line file. */
export function linesBetween(text: string, from: number, to: number): string[] {
  let offset = 0;
  for (let line = 0; line < from; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return [];
    offset = next + 1;
  }
  const lines: string[] = [];
  for (let line = Math.max(0, from); line < to; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) {
      lines.push(text.slice(offset));
      break;
    }
    lines.push(text.slice(offset, next));
    offset = next + 1;
  }
  return lines;
}
