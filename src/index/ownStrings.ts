/**
 * V8 keeps a substring of 13 or more characters as a slice of its parent, and tree-sitter's `node.text` is a slice of
 * the whole file: one import specifier or type name kept in the index keeps the file's text alive, now that chunk
 * texts live on disk (`ChunkTexts`). Copies made here are flat strings of their own.
 */
const SLICED_MIN_LENGTH = 13;

/** `text` as a flat string that holds no larger one (ASCII text decodes to one byte a character). */
export function ownString(text: string): string {
  return text.length < SLICED_MIN_LENGTH ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/** Replaces, in place, every string in `value`'s plain objects and arrays by its own copy (`ownString`). */
export function ownStrings<T>(value: T): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = own(value[i]);
  } else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = own(record[key]);
  }
  return value;
}

function own(value: unknown): unknown {
  return typeof value === 'string' ? ownString(value) : ownStrings(value);
}
