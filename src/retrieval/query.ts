import { identifiers } from '../index/tokenize';
import { linesBetween, type Cursor } from '../index/cursor';

/** Lines of left context that make the lexical query (RepoCoder uses 20; the nearest lines matter most). */
const QUERY_LEFT_LINES = 12;
const QUERY_RIGHT_LINES = 3;
/** How far from the cursor identifiers are taken as anchors for symbol resolution. */
const ANCHOR_LEFT_LINES = 60;
const ANCHOR_RIGHT_LINES = 15;

export interface Anchor {
  name: string;
  /** 1 at the cursor, decaying with distance in lines. */
  weight: number;
  /** The chain it ends, `this.repo.find` → ['this', 'repo', 'find'] (for find). */
  chain: string[];
}

export interface RetrievalQuery {
  /** The last lines before the cursor (current line's prefix included) and the first after it. */
  lexicalText: string;
  /** RepoCoder's 20-line window for the Jaccard path. */
  windowText: string;
  /** Identifiers near the cursor, strongest first, each once. */
  anchors: Anchor[];
  /** The zero-based line of the cursor, for the container (class) lookup. */
  line: number;
}

const CHAIN = /#?[A-Za-z_$][\w$]*(?:\s*(?:\?\.|\.|::)\s*#?[A-Za-z_$][\w$]*)*/g;

function decay(distance: number): number {
  return 1 / (1 + distance / 4);
}

/**
 * Forms the query for one cursor position. With a draft, the lexical text is RepoCoder's second iteration:
 * the last 10 lines of left context followed by the first 10 lines of the draft.
 */
export function formQuery(text: string, cursor: Cursor, draft?: string): RetrievalQuery {
  const first = Math.max(0, cursor.line - ANCHOR_LEFT_LINES);
  const lines = linesBetween(text, first, cursor.line + 1 + ANCHOR_RIGHT_LINES);
  const at = cursor.line - first;
  const current = lines[at] ?? '';
  const before = [...lines.slice(0, at), current.slice(0, cursor.character)];
  const after = [current.slice(cursor.character), ...lines.slice(at + 1)];
  const draftLines = draft ? draft.split('\n').slice(0, 10) : [];
  const lexicalLeft = before.slice(draft ? -10 : -QUERY_LEFT_LINES);
  const lexicalText = [...lexicalLeft, ...draftLines, ...(draft ? [] : after.slice(0, QUERY_RIGHT_LINES))].join('\n');
  const windowText = [...before.slice(-20), ...draftLines].join('\n');

  const anchors = new Map<string, Anchor>();
  const add = (line: string, distance: number): void => {
    for (const match of line.matchAll(CHAIN)) {
      const chain = match[0].split(/\s*(?:\?\.|\.|::)\s*/);
      chain.forEach((name, i) => {
        const weight = decay(distance);
        const known = anchors.get(name);
        if (!known || known.weight < weight) anchors.set(name, { name, weight, chain: chain.slice(0, i + 1) });
      });
    }
  };
  draftLines.forEach((line) => add(line, 0));
  before.forEach((line, i) => add(line, before.length - 1 - i));
  after.forEach((line, i) => add(line, i + 2));
  return {
    lexicalText,
    windowText,
    anchors: [...anchors.values()].sort((a, b) => b.weight - a.weight),
    line: cursor.line,
  };
}

/** Identifier set of a text, for Jaccard similarity. */
export function tokenSet(text: string): Set<string> {
  return new Set(identifiers(text));
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  for (const token of small) if (large.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}
