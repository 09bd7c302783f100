import { LRUCache } from 'lru-cache';
import { DEFAULTS } from '../defaults';
import type { RepoIndex } from '../index/repoIndex';
import { languageForPath } from '../index/languages';
import { codeTerms, identifiers } from '../index/tokenize';
import type { FileFacts } from '../index/types';
import { offsetOf } from './cursor';
import { definitionRetriever } from './definitions';
import { fuse, strongFirst } from './fusion';
import { lexicalRetriever } from './lexical';
import { packSnippets, type FirstPassLimits } from './pack';
import { FUSED, type FusionProfile } from './profiles';
import { formQuery, tokenSet } from './query';
import { recentRetriever } from './recent';
import { distinctIdentifiers, FOCUSED_OUTLINE_CHARS, rerank } from './rerank';
import type { Hit, RetrievalContext, Retriever } from './retriever';
import { siblingRetriever } from './siblings';
import { similarRetriever } from './similar';
import type { RetrievalRequest, RetrievalResult, RetrieverName, Snippet } from './types';

/** Every candidate path, in the order their candidates are merged (ties in the fused score keep this order). */
export const RETRIEVERS: readonly Retriever[] = [
  definitionRetriever,
  lexicalRetriever,
  similarRetriever,
  siblingRetriever,
  recentRetriever,
];

/**
 * First-pass limits: definitions leave 40% of the budget to other code (they find different things; 0.6 against
 * 0.4–0.75 on the tuning half once repeats wait, decisions R11), sibling-file windows a quarter; global similar windows get no first-pass share (placed first when strong, otherwise in rank
 * order: a quarter for them tied on the tuning half, and lost there with a tighter BM25 query; decisions R5); an
 * outline gets what it is charged for in the rerank, another definition 600 characters (+1.9 points of recall on
 * the development benchmark). Comment-only lines are not packed (decisions R9).
 */
const FIRST_PASS: FirstPassLimits = {
  shares: { definition: 0.6, similar: 0, sibling: 0.25 },
  outlineChars: FOCUSED_OUTLINE_CHARS,
  definitionChars: 600,
  codeOnly: true,
};

/** What every retriever reads for one request: the query and the current file's facts. */
export function retrievalContext(index: RepoIndex, request: RetrievalRequest): RetrievalContext {
  const query = formQuery(request.text, request.cursor, request.draft);
  // The current file's facts come from the index when it is there; a file being typed may be newer.
  const facts: FileFacts = index.facts(request.path) ?? {
    path: request.path,
    language: languageForPath(request.path)?.id ?? 'text',
    symbols: [],
    chunks: [],
    imports: [],
    types: [],
    hasErrors: false,
  };
  return {
    index,
    request,
    query,
    facts,
    offset: offsetOf(request.text, request.cursor),
    windowQuery: index.windowQuery(tokenSet(query.windowText)),
  };
}

/** Runs the retrievers `names` allows on one context, timing each into `stages`. */
export function runRetrievers(
  context: RetrievalContext,
  names: readonly RetrieverName[],
  stages: Record<string, number> = {},
): { name: RetrieverName; hits: Hit[] }[] {
  const results: { name: RetrieverName; hits: Hit[] }[] = [];
  for (const retriever of RETRIEVERS) {
    if (!names.includes(retriever.name)) continue;
    const at = performance.now();
    results.push({ name: retriever.name, hits: retriever.retrieve(context) });
    stages[retriever.name] = performance.now() - at;
  }
  return results;
}

/**
 * Retrieval for one cursor: the profile's retrievers (all of them unless calibration chose one for this
 * repository) run on the same query, each stage timed; their hits are fused, reranked with cheap features, the
 * strong ones put first, and packed into the budget.
 */
export function retrieve(index: RepoIndex, request: RetrievalRequest, profile: FusionProfile = FUSED): RetrievalResult {
  const started = performance.now();
  const context = retrievalContext(index, request);
  const stages: Record<string, number> = { query: performance.now() - started };
  const results = runRetrievers(context, request.retrievers ?? profile.retrievers, stages);

  const at = performance.now();
  const { packed, dropped } = fuseAndPack(results, context, request.budget ?? DEFAULTS.contextBudget);
  stages.pack = performance.now() - at;
  return {
    snippets: packed,
    dropped,
    timings: { stages, totalMs: performance.now() - started },
    declaredElsewhere: request.names?.filter((name) => index.declaredElsewhere(name, request.path)),
  };
}

/** Fusion, rerank, the strong candidates first, and packing into `budget` characters. */
export function fuseAndPack(
  results: readonly { name: RetrieverName; hits: readonly Hit[] }[],
  context: RetrievalContext,
  budget: number,
): { packed: Snippet[]; dropped: Snippet[] } {
  const { ranked, strongBy } = rerank(fuse(results), context.query, context.request.path);
  const { ordered, strong } = strongFirst(ranked, strongBy);
  const known = shown(context);
  return packSnippets(ordered, budget, memberPriority(context, known, analogousNames(results)), {
    ...FIRST_PASS,
    uncapped: strong,
    known,
  });
}

/** Characters around the cursor taken as what the prompt shows: about an 8,192-token context, mostly before it. */
const SHOWN_BEFORE = 24_000;
const SHOWN_AFTER = 8_000;

/** Identifiers of the current file that the prompt shows anyway, near the cursor. */
function shown({ request, offset: at }: RetrievalContext): Set<string> {
  return new Set(identifiers(request.text.slice(Math.max(0, at - SHOWN_BEFORE), at + SHOWN_AFTER)));
}

/** The paths whose windows are analogous code: what followed lines like the cursor's elsewhere. */
const ANALOGOUS_PATHS: readonly RetrieverName[] = ['similar', 'sibling'];
/**
 * What a member named in analogous code gains, twice a word shared with the cursor's lines: +8 tasks on the tuning
 * half, none lower (3: +5, 10: +7; BM25's chunks counted too: +8; decisions R16).
 */
const ANALOGOUS_BONUS = 6;

/** Identifiers of the analogous windows found for this request: what similar code went on to use. */
function analogousNames(results: readonly { name: RetrieverName; hits: readonly Hit[] }[]): Set<string> {
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

/**
 * An outline too long for the budget keeps the members that analogous code names and those whose name shares
 * words with the lines around the cursor, then those the repository uses most; those the prompt shows anyway
 * (`shown`) go last. (The names near the cursor alone went last before: the whole shown text is +2 tasks on the
 * tuning half, none lower.)
 */
function memberPriority(
  { index, query }: RetrievalContext,
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
        (Math.log1p(index.frequency(name)) + 3 * shared + (analogous.has(name) ? ANALOGOUS_BONUS : 0)) *
        (shownNames.has(name) ? 0.1 : 1);
      ranks.set(name, rank);
    }
    return rank;
  };
}
