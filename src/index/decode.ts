/** Bytes or an editor's text → indexable text, or the reason it is not source to index (binary, minified). */
import type { SkipReason } from './skipReason';

export type ReadResult = { text: string } | { skip: SkipReason; detail?: string };

const SNIFF_CHARS = 8192;
/** Above this share of control bytes or undecodable characters a file is data, not text. */
const MAX_BAD_SHARE = 0.1;
const MINIFIED_MIN_CHARS = 1024;
const MINIFIED_AVG_LINE = 300;
const MINIFIED_LONG_LINE = 5000;
const MINIFIED_FEW_LINES = 50;

/**
 * Bytes → indexable text. A UTF-8 BOM is dropped, line endings are kept, and a few invalid UTF-8 sequences
 * (a Latin-1 comment) become U+FFFD rather than costing the whole file.
 */
export function decodeSource(buf: Uint8Array): ReadResult {
  return checkText(new TextDecoder('utf-8').decode(buf));
}

/**
 * Text → itself, or the reason it is not source to index (binary, minified): the same checks for the disk's bytes
 * once decoded and for an editor's text, which never was bytes here.
 */
export function checkText(text: string): ReadResult {
  const sniff = text.slice(0, SNIFF_CHARS);
  if (sniff.includes('\0')) return { skip: 'binary', detail: 'NUL byte' };
  let control = 0;
  for (let i = 0; i < sniff.length; i++) {
    const c = sniff.charCodeAt(i);
    // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs and snapshots) occur in text.
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 27) || c === 0x7f) control++;
  }
  if (control > sniff.length * MAX_BAD_SHARE) return { skip: 'binary', detail: 'control characters' };

  let replaced = 0;
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) replaced++;
  if (replaced > text.length * MAX_BAD_SHARE) return { skip: 'binary', detail: 'invalid UTF-8' };

  if (text.length >= MINIFIED_MIN_CHARS) {
    let lines = 0;
    let longest = 0;
    for (let start = 0; start <= text.length; lines++) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      longest = Math.max(longest, end - start);
      start = end + 1;
    }
    if (text.length / lines > MINIFIED_AVG_LINE) return { skip: 'minified', detail: 'long average line' };
    if (longest > MINIFIED_LONG_LINE && lines <= MINIFIED_FEW_LINES) return { skip: 'minified', detail: 'long line' };
  }
  return { text };
}
