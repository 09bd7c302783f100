/** Bytes → indexable text, or the reason the file is not text (binary, minified). */
import type { SkipReason } from './skipReason';

export type ReadResult = { text: string } | { skip: SkipReason; detail?: string };

const SNIFF_BYTES = 8192;
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
  const sniff = buf.subarray(0, SNIFF_BYTES);
  if (sniff.includes(0)) return { skip: 'binary', detail: 'NUL byte' };
  let control = 0;
  for (const b of sniff) {
    // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs and snapshots) occur in text.
    if ((b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) || b === 0x7f) control++;
  }
  if (control > sniff.length * MAX_BAD_SHARE) return { skip: 'binary', detail: 'control characters' };

  const text = new TextDecoder('utf-8').decode(buf);
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
