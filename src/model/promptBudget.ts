/**
 * Token budgets of a FIM prompt. The left context is cut from the left, the right context from the right, the
 * cross-file context is capped by whole snippets, and everything plus the generation fits the context window.
 * The left cut moves in steps of whole line blocks, so while the user types it stays put and the start of the
 * prompt — the part the KV cache keeps — does not change.
 */
import { DEFAULTS } from '../defaults';
import type { Snippet } from '../retrieval/types';

export interface PromptBudget {
  leftTokens: number;
  /** Small by default: the right context follows the left one, so it is re-evaluated on every keystroke. */
  rightTokens: number;
  /** Cap of the cross-file context (Repoformer: 512). */
  contextTokens: number;
  generationTokens: number;
}

export const DEFAULT_BUDGET: PromptBudget = {
  leftTokens: 1536,
  rightTokens: 64,
  contextTokens: DEFAULTS.contextTokens,
  generationTokens: 64,
};

/** Special tokens a prompt adds around its parts (prefix, suffix, eof, cc, middle, file separators). */
const SPECIAL_ALLOWANCE = 16;
/** The left cut starts at a multiple of this many lines. */
const LINE_BLOCK = 8;
/** More characters than any token spans in practice; bounds the text that has to be tokenized. */
const MAX_CHARS_PER_TOKEN = 12;

export type TokenCounter = (text: string) => number;

/**
 * Where the typed part of the cursor's line goes. 'cursor': the left context ends at the cursor, so a keystroke
 * changes the middle of the prompt and everything after it (the right context, the markers, any cross-file
 * context) is evaluated again. 'line': the left context ends at the start of the cursor's line and the line's
 * text up to the cursor follows the middle marker, as the start of the middle (llama.vscode's layout), so typing
 * within a line only appends to the prompt. Families whose prompt ends with the prefix (suffix-first) need neither.
 */
export type PromptLayout = 'cursor' | 'line';

/** A line longer than this stays in the left context: too long to re-tokenize per keystroke as the middle's start. */
const MAX_TYPED_LINE_CHARS = 400;

/** The offset where the left context ends under `layout`: the start of the cursor's line, or the cursor itself. */
export function leftEnd(text: string, offset: number, layout: PromptLayout): number {
  if (layout === 'cursor') return offset;
  const lineStart = offset === 0 ? 0 : text.lastIndexOf('\n', offset - 1) + 1;
  return offset - lineStart > MAX_TYPED_LINE_CHARS ? offset : lineStart;
}

/** The budget that fits a context window of `contextSize` tokens: the left context gives way first. */
export function fitBudget(budget: PromptBudget, contextSize: number): PromptBudget {
  const generationTokens = Math.min(budget.generationTokens, Math.floor(contextSize / 4));
  const rightTokens = Math.min(budget.rightTokens, Math.floor(contextSize / 8));
  const contextTokens = Math.min(budget.contextTokens, Math.floor(contextSize / 3));
  const leftTokens = Math.max(
    0,
    Math.min(budget.leftTokens, contextSize - generationTokens - rightTokens - contextTokens - SPECIAL_ALLOWANCE),
  );
  return { leftTokens, rightTokens, contextTokens, generationTokens };
}

/** The end of `left` that fits `maxTokens`, starting at a line that is a multiple of LINE_BLOCK when it can. */
export function cutLeft(left: string, maxTokens: number, count: TokenCounter): string {
  if (maxTokens <= 0) return '';
  const lines = left.split('\n');
  const from = (line: number): string => lines.slice(line).join('\n');
  const blocks = Math.floor((lines.length - 1) / LINE_BLOCK);
  // The smallest block start whose text could fit at all; monotonic while typing, so it is stable too.
  let lo = 0;
  while (lo < blocks && from(lo * LINE_BLOCK).length > maxTokens * MAX_CHARS_PER_TOKEN) lo++;
  let hi = blocks;
  if (count(from(hi * LINE_BLOCK)) > maxTokens) return cutChars(from(hi * LINE_BLOCK), maxTokens, count, 'left');
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (count(from(mid * LINE_BLOCK)) <= maxTokens) hi = mid;
    else lo = mid + 1;
  }
  return from(lo * LINE_BLOCK);
}

/**
 * The left context from `anchor` (an offset in `left`, where the window started before) when that still fits
 * `maxTokens`, so that a window only grows at its end while lines are added below it; else a fresh cut that
 * leaves `slack` tokens free for the lines to come. Without an anchor, the fresh cut of the whole budget.
 */
export function cutLeftAnchored(
  left: string,
  anchor: number | undefined,
  maxTokens: number,
  slack: number,
  count: TokenCounter,
): string {
  if (anchor === undefined) return cutLeft(left, maxTokens, count);
  const kept = left.slice(anchor);
  if (count(kept) <= maxTokens) return kept;
  return cutLeft(left, Math.max(maxTokens - slack, Math.floor(maxTokens / 2)), count);
}

/** The start of `right` that fits `maxTokens`, in whole lines after the cursor's own line. */
export function cutRight(right: string, maxTokens: number, count: TokenCounter): string {
  if (maxTokens <= 0) return '';
  const lines = right.split('\n');
  const upTo = (n: number): string => lines.slice(0, n).join('\n');
  if (count(upTo(1)) > maxTokens) return cutChars(upTo(1), maxTokens, count, 'right');
  let lo = 1;
  let hi = lines.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(upTo(mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  // Keep the line break after the last kept line: the model sees that a line follows.
  return lo < lines.length ? `${upTo(lo)}\n` : upTo(lo);
}

/** The most best-first snippets whose rendering fits `maxTokens`. */
export function fitSnippets(
  snippets: readonly Snippet[],
  maxTokens: number,
  renderedTokens: (kept: readonly Snippet[]) => number,
): Snippet[] {
  let kept: Snippet[] = [];
  for (const snippet of snippets) {
    const next = [...kept, snippet];
    if (renderedTokens(next) > maxTokens) break;
    kept = next;
  }
  return kept;
}

/** A single line longer than the budget: cut by characters on the side away from the cursor. */
function cutChars(text: string, maxTokens: number, count: TokenCounter, side: 'left' | 'right'): string {
  let chars = Math.min(text.length, maxTokens * 4);
  let piece = side === 'left' ? text.slice(text.length - chars) : text.slice(0, chars);
  while (chars > 0 && count(piece) > maxTokens) {
    chars = Math.floor(chars * 0.8);
    piece = side === 'left' ? text.slice(text.length - chars) : text.slice(0, chars);
  }
  return piece;
}
