/**
 * What RepoGate's retrieval gives the packer (pack.ts): the first-pass limits, and the rank of an oversized
 * outline's members, by which the packer focuses it.
 */
import { LRUCache } from 'lru-cache';
import { codeTerms, identifiers } from '../index/tokenize';
import type { FirstPassLimits } from './pack';
import { distinctIdentifiers, FOCUSED_OUTLINE_CHARS } from './rerank';
import type { Hit, RetrievalContext } from './retriever';
import type { RetrieverName } from './types';

/**
 * First-pass limits. Definitions may fill 60% of the budget and sibling-file windows a quarter, leaving room for
 * the other paths, which find different things; global similar windows get no share (placed first when strong,
 * otherwise in rank order). An outline takes what the rerank charges it and another definition 600 characters, so
 * that one huge type or long body does not take the next candidates' room. Comment-only lines are not packed.
 */
export const FIRST_PASS: FirstPassLimits = {
  shares: { definition: 0.6, similar: 0, sibling: 0.25 },
  outlineChars: FOCUSED_OUTLINE_CHARS,
  definitionChars: 600,
  codeOnly: true,
};

/** Characters around the cursor taken as what the prompt shows: about an 8,192-token context, mostly before it. */
const SHOWN_BEFORE = 24_000;
const SHOWN_AFTER = 8_000;

/** Identifiers of the current file that the prompt shows anyway, near the cursor. */
export function shown({ request, offset: at }: RetrievalContext): Set<string> {
  return new Set(identifiers(request.text.slice(Math.max(0, at - SHOWN_BEFORE), at + SHOWN_AFTER)));
}

/** The paths whose windows are analogous code: what followed lines like the cursor's elsewhere. */
const ANALOGOUS_PATHS: readonly RetrieverName[] = ['similar', 'sibling'];

/** Identifiers of the analogous windows found for this request: what similar code went on to use. */
export function analogousNames(results: readonly { name: RetrieverName; hits: readonly Hit[] }[]): Set<string> {
  const names = new Set<string>();
  for (const { name, hits } of results) {
    if (!ANALOGOUS_PATHS.includes(name)) continue;
    for (const hit of hits) for (const id of distinctIdentifiers(hit.snippet.text)) names.add(id);
  }
  return names;
}

/**
 * Member names' words of three letters or more, kept across requests: the same types' outlines are focused again
 * and again, and splitting their member names was most of the focusing's time.
 */
const MEMBER_WORDS = 20_000;
const memberWords = new LRUCache<string, readonly string[], void>({
  max: MEMBER_WORDS,
  memoMethod: (name) => codeTerms(name).filter((t) => t.length > 2),
});

/** What a word of a member's name shared with the lines around the cursor adds: as much as use in 20 files (log1p). */
const SHARED_WORD_WEIGHT = 3;
/** What a member named in analogous code gains, twice a shared word: what similar code called, the line may call. */
const ANALOGOUS_BONUS = 6;
/** A member the prompt shows anyway keeps a tenth of its rank: it adds nothing the line could need. */
const SHOWN_FACTOR = 0.1;

/**
 * An outline too long for the budget keeps the members that analogous code names and those whose name shares
 * words with the lines around the cursor, then those the repository uses most; those the prompt shows anyway
 * (`shown`) go last.
 */
export function memberPriority(
  { index, query, scope }: RetrievalContext,
  shownNames: ReadonlySet<string>,
  analogous: ReadonlySet<string>,
): (name: string) => number {
  const nearTerms = new Set(codeTerms(query.lexicalText));
  // Members recur across the outlines of one request (and each outline is focused once a pass): rank each once.
  const ranks = new Map<string, number>();
  return (name) => {
    let rank = ranks.get(name);
    if (rank === undefined) {
      const shared = memberWords.memo(name).filter((t) => nearTerms.has(t)).length;
      rank =
        (Math.log1p(index.frequency(name, scope)) +
          SHARED_WORD_WEIGHT * shared +
          (analogous.has(name) ? ANALOGOUS_BONUS : 0)) *
        (shownNames.has(name) ? SHOWN_FACTOR : 1);
      ranks.set(name, rank);
    }
    return rank;
  };
}
