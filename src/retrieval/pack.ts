import { LRUCache } from 'lru-cache';
import { languageForPath, lineCommentFor } from '../index/languages';
import { everyIdentifier, identifiers } from '../index/tokenize';
import { shownPath, type Snippet } from './types';

/** Characters a snippet costs beyond its text: the path line that introduces it in a prompt. */
export function snippetCost(snippet: Pick<Snippet, 'path' | 'shownPath' | 'text'>): number {
  return shownPath(snippet).length + 1 + snippet.text.length + 1;
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
  return lines
    .slice(0, lastBoundary + 1)
    .join('\n')
    .trimEnd();
}

/**
 * Removes the indentation all non-blank lines share: a window from inside a method would pay for it on every
 * line, and the relative indentation the model reads is kept.
 */
export function dedent(text: string): string {
  const lines = text.split('\n');
  let common = Infinity;
  for (const line of lines) {
    if (line.trim()) common = Math.min(common, /^[ \t]*/.exec(line)![0].length);
  }
  if (common === 0 || common === Infinity) return text;
  return lines.map((line) => line.slice(Math.min(common, /^[ \t]*/.exec(line)![0].length))).join('\n');
}

/** A line of a C-family block comment: its opening, a continuation (`* text`) or its closing. */
const BLOCK_COMMENT_LINE = /^(\/\*|\*\/|\*(\s|$))/;
/** A line that opens a Python string with three quotes: in a definition, its docstring. */
const DOCSTRING_OPEN = /^[rRuUbB]?("""|''')/;

/** Whether a file's lines that open with three quotes are docstrings (Python). */
function hasDocstrings(path: string): boolean {
  return languageForPath(path)?.id === 'python';
}

/**
 * Drops the lines that hold only a comment, and Python's docstrings: they carry no identifier the next line can use,
 * and take up to a tenth of the packed characters. Lines that mix code and a comment stay whole.
 */
export function withoutCommentLines(text: string, path: string): string {
  const line = lineCommentFor(path);
  const blocks = line === '//';
  const docstrings = hasDocstrings(path);
  /** The quotes that close the docstring being skipped, if any. */
  let closing = '';
  const kept = text.split('\n').filter((l) => {
    const t = l.trimStart();
    if (closing) {
      if (t.includes(closing)) closing = '';
      return false;
    }
    const opened = docstrings ? DOCSTRING_OPEN.exec(t) : null;
    if (opened) {
      if (!t.slice(opened[0].length).includes(opened[1])) closing = opened[1];
      return false;
    }
    return !(t.startsWith(line) || (blocks && BLOCK_COMMENT_LINE.test(t)));
  });
  return kept.length === 0 ? text : kept.join('\n');
}

/**
 * Cleaned candidate texts (comment-only lines dropped in `commentsOf`'s syntax when given, dedented) with their
 * unindented form: chunks and their windows are the same strings from one request to the next, and cleaning each
 * candidate's lines again was a third of the packer's time.
 */
const CLEANED_TEXTS = 4096;
/**
 * One cache per comment syntax ('' for texts kept whole), keyed by the text itself: a key built from syntax and
 * text was a new string to hash in full on every lookup.
 */
const cleanedTexts = new Map<string, LRUCache<string, { text: string; flat: string }>>();

function cleaned(text: string, commentsOf: string | undefined): { text: string; flat: string } {
  const syntax =
    commentsOf === undefined ? '' : `${lineCommentFor(commentsOf)}${hasDocstrings(commentsOf) ? ' """' : ''}`;
  let cache = cleanedTexts.get(syntax);
  if (!cache) cleanedTexts.set(syntax, (cache = new LRUCache({ max: CLEANED_TEXTS })));
  let ready = cache.get(text);
  if (!ready) {
    const code = dedent(commentsOf === undefined ? text : withoutCommentLines(text, commentsOf));
    ready = { text: code, flat: unindented(code) };
    cache.set(text, ready);
  }
  return ready;
}

/** Text compared for containment whatever its indentation: a dedented window inside an already packed function. */
function unindented(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimStart())
    .join('\n')
    .trim();
}

/**
 * Share of an oversized outline's room given to whole member signatures; the rest lists more names: the few likeliest
 * members keep their parameters, and many more are named.
 */
const SIGNATURE_SHARE = 0.15;

/** An outline focused into room for no member line of this many characters is not packed: a header says little. */
const MIN_MEMBER_LINE = 10;

/**
 * Shrinks a type outline that does not fit: its header, the members that rank highest by `priority` with
 * their signatures (in their original order), then as many of the remaining member names as fit on one
 * "… also:" line — a huge type's vocabulary costs a dozen characters a member — and its closing line.
 */
export function focusOutline(
  text: string,
  members: string[],
  room: number,
  priority: (name: string) => number,
): string | undefined {
  const lines = text.split('\n');
  const closing = lines.length === members.length + 2 ? lines[lines.length - 1] : undefined;
  const memberLines = lines.slice(1, 1 + members.length);
  const indent = /^\s*/.exec(memberLines[0] ?? '')![0];
  let used = lines[0].length + 1 + (closing !== undefined ? closing.length + 1 : 0);
  if (used + indent.length + MIN_MEMBER_LINE > room) return undefined;
  const order = members.map((name, i) => ({ i, rank: priority(name) })).sort((a, b) => b.rank - a.rank || a.i - b.i);
  const keep = new Set<number>();
  for (const { i } of order) {
    const cost = memberLines[i].length + 1;
    if (used + cost > room * SIGNATURE_SHARE) continue;
    keep.add(i);
    used += cost;
  }
  let also = `${indent}… also:`;
  const listed = new Set<string>();
  for (const { i } of order) {
    if (keep.has(i) || listed.has(members[i])) continue;
    const next = `${also} ${members[i]},`;
    if (used + next.length + 1 > room) break;
    also = next;
    listed.add(members[i]);
  }
  const body = memberLines.filter((_, i) => keep.has(i));
  const extra = also.endsWith(',') ? [also.slice(0, -1)] : [];
  if (body.length === 0 && extra.length === 0) return undefined;
  return [lines[0], ...body, ...extra, ...(closing !== undefined ? [closing] : [])].join('\n');
}

/** What one candidate may take in the packer's first pass; what is left is filled in rank order afterwards. */
export interface FirstPassLimits {
  /** Share of the budget each retriever may fill (so that definitions leave room for similar code, which finds
   * different things). */
  shares?: Partial<Record<Snippet['retriever'], number>>;
  /** Characters of an outline listed a member a line (focused to its likeliest members) and of another
   * definition (cut at a syntactic boundary), path line included: one huge type or long body does not take the
   * room of the next candidates. */
  outlineChars?: number;
  definitionChars?: number;
  /** Candidates placed whatever their path's share (the fusion's strong candidates); the size limits still hold. */
  uncapped?: ReadonlySet<Snippet>;
  /** Comment-only lines are dropped (RepoGate's packing; the baselines keep RepoCoder's windows as they are). */
  codeOnly?: boolean;
  /**
   * Identifiers the prompt shows anyway (the current file's, near the cursor): a candidate that names nothing
   * beyond these and what is already packed adds nothing the line could need, so it waits for the second pass.
   * Strong candidates never wait.
   */
  known?: ReadonlySet<string>;
}

/** Budget left below which nothing more is packed: a path line and a line or two of code. */
const MIN_LEFT = 80;
/** Room (after the path line) below which a candidate is passed over: cut that short, it rarely holds a usable name. */
const MIN_ROOM = 60;

/**
 * Packs ranked candidates into a character budget, best first, each without its common indentation (and, with
 * `codeOnly`, its comment-only lines): skips text already packed (an outline that holds a method, a window inside
 * a function), focuses or cuts a candidate that no longer fits whole.
 * A first pass places every candidate within `firstPass` limits; a second pass fills what is left in rank order.
 */
export function packSnippets(
  ranked: Snippet[],
  budget: number,
  memberPriority?: (name: string) => number,
  firstPass: FirstPassLimits = {},
): { packed: Snippet[]; dropped: Snippet[] } {
  const { shares = {}, outlineChars = Infinity, definitionChars = Infinity, uncapped, codeOnly, known } = firstPass;
  const packed: Snippet[] = [];
  /** Each packed snippet's text without indentation, for the containment test. */
  const packedFlat: string[] = [];
  /** Identifiers of the snippets packed so far (with `known`, what the prompt shows). */
  const packedNames = new Set<string>();
  const used = new Map<Snippet['retriever'], number>();
  let left = budget;
  // A candidate that waits in the first pass is met again in the second: its cleaned text is worked out once.
  const prepared = new Map<Snippet, { candidate: Snippet; flat: string }>();
  const prepare = (original: Snippet): { candidate: Snippet; flat: string } => {
    let ready = prepared.get(original);
    if (!ready) {
      // An outline listed a member a line keeps its lines, which `members` names one by one.
      const { text, flat } = cleaned(original.text, codeOnly && !original.members?.length ? original.path : undefined);
      ready = { candidate: { ...original, text }, flat };
      prepared.set(original, ready);
    }
    return ready;
  };
  const place = (original: Snippet, first: boolean): boolean => {
    // What decides the room depends on the candidate's path, retriever and members, not on its cleaned text: a
    // candidate that cannot fit is turned away before it is cleaned.
    if (left < MIN_LEFT) return false;
    const shared = first && !uncapped?.has(original);
    const cap = shared ? (shares[original.retriever] ?? 1) * budget - (used.get(original.retriever) ?? 0) : left;
    const limit = !first
      ? Infinity
      : original.members?.length
        ? outlineChars
        : original.retriever === 'definition'
          ? definitionChars
          : Infinity;
    const room = Math.min(left, cap, limit) - shownPath(original).length - 2;
    if (room < MIN_ROOM) return false;
    const { candidate, flat } = prepare(original);
    const overlaps = packed.some(
      (p, i) =>
        p.path === candidate.path &&
        ((p.range.start <= candidate.range.start &&
          p.range.end >= candidate.range.end &&
          packedFlat[i].includes(flat)) ||
          flat.includes(packedFlat[i])),
    );
    if (overlaps) return false;
    if (shared && known && everyIdentifier(candidate.text, (name) => known.has(name) || packedNames.has(name)))
      return false;
    const text =
      candidate.text.length > room && candidate.members?.length && memberPriority
        ? focusOutline(candidate.text, candidate.members, room, memberPriority)
        : cutToFit(candidate.text, room);
    if (!text || !text.trim()) return false;
    const snippet: Snippet = {
      ...candidate,
      text,
      range:
        text === candidate.text
          ? candidate.range
          : { start: candidate.range.start, end: candidate.range.start + text.split('\n').length },
    };
    delete snippet.members;
    packed.push(snippet);
    packedFlat.push(text === candidate.text ? flat : unindented(text));
    if (known) for (const name of identifiers(text)) packedNames.add(name);
    left -= snippetCost(snippet);
    used.set(candidate.retriever, (used.get(candidate.retriever) ?? 0) + snippetCost(snippet));
    return true;
  };
  const waiting = ranked.filter((candidate) => !place(candidate, true));
  const dropped = waiting.filter((candidate) => !place(candidate, false));
  return { packed, dropped };
}
