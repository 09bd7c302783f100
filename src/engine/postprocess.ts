/**
 * Post-processing of a raw fill-in-the-middle completion, shared by every model family: it turns what the model
 * generated into the ghost text inserted at the cursor, or '' when nothing usable is left.
 *
 * Line breaks: the result always uses '\n' (a '\r\n' from the model is one line break); VS Code converts the
 * inserted text to the document's end-of-line style.
 * Leading whitespace is never touched: mid-line it may be needed (` * quantity`), and at the start of a line
 * VS Code reconciles the completion's indentation with the line's own.
 */

export type CompletionMode = 'line' | 'multiline';

export interface PostprocessContext {
  mode: CompletionMode;
  /** Most lines a multi-line completion may have (default used by callers: 8). */
  maxLines: number;
  /** The current line's text left of the cursor. */
  linePrefix: string;
  /** The current line's text right of the cursor. */
  lineSuffix: string;
  /** The lines after the current line (the rest of the document's right context, split at \n, without the current line). */
  nextLines: string[];
  /** Texts of the model's special/control tokens that must never reach the editor (e.g. '<fim_middle>', '<|endoftext|>', '<|file_sep|>'). */
  specialTokens: readonly string[];
}

const OPENERS = '([{';

/** The ghost text for `raw`: special tokens cut, scope and line limits applied, text the document already has dropped. */
export function postprocess(raw: string, ctx: PostprocessContext): string {
  const lines = toLines(beforeSpecialToken(raw, ctx.specialTokens).text);
  const inScope = lines.slice(0, ctx.mode === 'line' ? 1 : Math.min(scopeEnd(lines, ctx), ctx.maxLines));
  const text = inScope.slice(0, repetitionStart(inScope, ctx)).join('\n').trimEnd();
  if (text.trim() === '' || text.trim() === ctx.lineSuffix.trim()) return '';
  // Whitespace left in front of a dropped overlap is kept: the suffix follows it (`{ x: 1 }`, a '\n' before `}`).
  const kept = dropSuffixOverlap(text, ctx);
  return kept.trim() === '' ? '' : kept;
}

/** True once `raw` (a streaming partial) already contains a complete first line, so the caller can show it. */
export function firstLineReady(raw: string, ctx: PostprocessContext): boolean {
  const { text, ended } = beforeSpecialToken(raw, ctx.specialTokens);
  if (ended) return true; // generation is over: whatever is there is final
  const lines = toLines(text);
  // A multi-line completion often starts with the line break after the cursor; an empty first line shows nothing.
  const first = ctx.mode === 'line' ? 0 : lines.findIndex((line) => line.trim() !== '');
  return first >= 0 && first < lines.length - 1;
}

/** `raw` up to the first occurrence of any special token; `ended` when one occurred. */
function beforeSpecialToken(raw: string, tokens: readonly string[]): { text: string; ended: boolean } {
  let cut = raw.length;
  for (const token of tokens) {
    const at = token === '' ? -1 : raw.indexOf(token);
    if (at >= 0 && at < cut) cut = at;
  }
  return { text: raw.slice(0, cut), ended: cut < raw.length };
}

function toLines(text: string): string[] {
  return text.split(/\r?\n/);
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * How many lines of a multi-line completion stay in the scope the cursor is in. The scope ends before a line
 * indented less than the cursor line (blank lines aside) and before a line whose closing bracket closes one opened
 * above the cursor line. Brackets left open on the cursor line itself (`findOne(`) are the completion's to close.
 */
function scopeEnd(lines: string[], ctx: PostprocessContext): number {
  const cursorLine = ctx.linePrefix + lines[0];
  const indent = indentOf(cursorLine);
  let depth = balance(ctx.linePrefix).open;
  for (let i = 0; i < lines.length; i++) {
    const line = i === 0 ? cursorLine : lines[i];
    if (i > 0 && line.trim() !== '' && indentOf(line) < indent) return i;
    for (const bracket of codeBrackets(line, i === 0 ? ctx.linePrefix.length : 0)) {
      depth += OPENERS.includes(bracket) ? 1 : -1;
      if (depth < 0) return i;
    }
  }
  return lines.length;
}

/**
 * Index of the first completion line that repeats the document's first non-blank next line, so the completion
 * stops where it starts copying what already follows the cursor. Lines compare with their indentation (trailing
 * whitespace aside): a nested `    }` is not the enclosing `  }` below it. The first line counts as the whole
 * cursor line, and only when the model wrote something on it.
 */
function repetitionStart(lines: string[], ctx: PostprocessContext): number {
  const next = ctx.nextLines.find((line) => line.trim() !== '')?.trimEnd();
  if (next === undefined) return lines.length;
  const at = lines.findIndex((line, i) =>
    i === 0 ? line.trim() !== '' && (ctx.linePrefix + line).trimEnd() === next : line.trimEnd() === next,
  );
  return at < 0 ? lines.length : at;
}

/**
 * Drops the longest end of `text` that equals the start of the line suffix (a re-emitted `)`, `);`, `]`), since
 * the suffix follows the completion anyway; unless the brackets of the line balance worse without it, as when
 * the `)` of `map(square)` closes the completion's own bracket.
 */
function dropSuffixOverlap(text: string, { linePrefix, lineSuffix }: PostprocessContext): string {
  const imbalance = (completion: string): number => {
    const { open, unmatched } = balance(linePrefix + completion + lineSuffix);
    return open + unmatched;
  };
  const asIs = imbalance(text);
  for (let k = Math.min(text.length, lineSuffix.length); k > 0; k--) {
    const kept = text.slice(0, text.length - k);
    if (text.endsWith(lineSuffix.slice(0, k)) && imbalance(kept) <= asIs) return kept;
  }
  return text;
}

/** Brackets still open at the end of `text`, and closing brackets that found no opener in it. */
function balance(text: string): { open: number; unmatched: number } {
  let open = 0;
  let unmatched = 0;
  for (const line of text.split('\n')) {
    for (const bracket of codeBrackets(line)) {
      if (OPENERS.includes(bracket)) open++;
      else if (open > 0) open--;
      else unmatched++;
    }
  }
  return { open, unmatched };
}

/**
 * The brackets of one line of code at or after offset `from`, roughly: none inside a '…', "…" or `…` literal
 * (which ends at the end of the line at the latest) or after a `//` or `#` comment start. `#` counts only at the
 * start of the line or after whitespace, so TypeScript's `this.#field` is code.
 */
function codeBrackets(line: string, from = 0): string {
  let brackets = '';
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'" || ch === '`') {
      quote = ch;
    } else if ((ch === '/' && line[i + 1] === '/') || (ch === '#' && (i === 0 || /\s/.test(line[i - 1])))) {
      break;
    } else if ('()[]{}'.includes(ch) && i >= from) {
      brackets += ch;
    }
  }
  return brackets;
}
