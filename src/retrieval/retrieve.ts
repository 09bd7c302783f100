import { DEFAULTS } from '../defaults';
import type { RepoIndex } from '../index/repoIndex';
import { languageForPath } from '../index/languages';
import type { FileFacts } from '../index/types';
import { offsetOf } from '../index/cursor';
import { definitionRetriever } from './definitions';
import { fuse, strongFirst } from './fusion';
import { lexicalRetriever } from './lexical';
import { packSnippets } from './pack';
import { analogousNames, FIRST_PASS, memberPriority, shown } from './packPolicy';
import { FUSED, type FusionProfile } from './profiles';
import { formQuery, tokenSet } from './query';
import { recentRetriever } from './recent';
import { rerank } from './rerank';
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
    scope: index.searchScope(request.path),
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
  // Where the search kept to one project of several side by side, the prompt shows paths within it (decisions R29).
  const { scope } = context;
  if (scope) for (const s of ranked) if (s.path.startsWith(scope)) s.shownPath = s.path.slice(scope.length);
  const { ordered, strong } = strongFirst(ranked, strongBy);
  const known = shown(context);
  return packSnippets(ordered, budget, memberPriority(context, known, analogousNames(results)), {
    ...FIRST_PASS,
    uncapped: strong,
    known,
  });
}
