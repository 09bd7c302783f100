import type { Snippet } from './types';

/** Characters a snippet costs beyond its text: the path line that introduces it in a prompt. */
export function snippetCost(snippet: Pick<Snippet, 'path' | 'text'>): number {
  return snippet.path.length + 1 + snippet.text.length + 1;
}

const BOUNDARY = /[;{}),\]]\s*$|^\s*$/;

/**
 * Cuts a long snippet to at most `room` characters at a syntactic boundary: the last line that closes a
 * statement or block (or a blank line), so that a signature and the first statements stay readable.
 */
export function cutToFit(text: string, room: number): string | undefined {
  if (text.length <= room) return text;
  const lines = text.split('\n');
  let used = 0;
  let lastBoundary = -1;
  for (let i = 0; i < lines.length; i++) {
    used += lines[i].length + 1;
    if (used > room) break;
    if (BOUNDARY.test(lines[i]) || i === 0) lastBoundary = i;
  }
  if (lastBoundary < 0) return undefined;
  return lines.slice(0, lastBoundary + 1).join('\n').trimEnd();
}

/**
 * Packs ranked candidates into a character budget, best first: skips text already packed (an outline that
 * holds a method, a window inside a function) and cuts the first candidate that no longer fits whole.
 */
export function packSnippets(ranked: Snippet[], budget: number): { packed: Snippet[]; dropped: Snippet[] } {
  const packed: Snippet[] = [];
  const dropped: Snippet[] = [];
  let left = budget;
  for (const candidate of ranked) {
    const overlaps = packed.some(
      (p) =>
        p.path === candidate.path &&
        ((p.range.start <= candidate.range.start && p.range.end >= candidate.range.end && p.text.includes(candidate.text.trim())) ||
          candidate.text.includes(p.text.trim())),
    );
    if (overlaps || left < 80) {
      dropped.push(candidate);
      continue;
    }
    const header = candidate.path.length + 2;
    const text = cutToFit(candidate.text, left - header);
    if (!text || !text.trim()) {
      dropped.push(candidate);
      continue;
    }
    const snippet = text === candidate.text ? candidate : { ...candidate, text, range: { start: candidate.range.start, end: candidate.range.start + text.split('\n').length } };
    packed.push(snippet);
    left -= snippetCost(snippet);
  }
  return { packed, dropped };
}
