import type { RepoIndex } from '../index/repoIndex';
import type { FileFacts } from '../index/types';
import { lineWindows } from '../index/windows';
import { identifiers } from '../index/tokenize';
import { DefinitionRetriever } from './definitions';
import { packSnippets } from './pack';
import { formQuery, jaccard, tokenSet, type RetrievalQuery } from './query';
import { DEFAULT_BUDGET_CHARS, type RetrievalRequest, type RetrievalResult, type RetrieverName, type Snippet } from './types';

/** Reciprocal rank fusion constant (Cormack et al.); small lists, so a small k sharpens the top. */
const RRF_K = 10;
const WEIGHTS: Record<RetrieverName, number> = { definition: 1.6, lexical: 1, recent: 0.6 };
const LEXICAL_CANDIDATES = 16;
const RECENT_CANDIDATES = 4;
const RECENT_FILES = 10;

interface Candidate {
  snippet: Snippet;
  /** Best-first position in each path that found it. */
  ranks: Partial<Record<RetrieverName, number>>;
  /** The definition path's own score: anchor proximity times kind. */
  definitionScore: number;
}

/**
 * Retrieval for one cursor: the definition, lexical and recent-file paths run on the same query, fused by
 * weighted reciprocal rank, reordered with cheap features, and packed into the budget.
 */
export function retrieve(index: RepoIndex, request: RetrievalRequest): RetrievalResult {
  const t0 = performance.now();
  const query = formQuery(request.text, request.cursor, request.draft);
  // The current file's facts come from the index when it is there; a file being typed may be newer.
  const facts: FileFacts = index.facts(request.path) ?? {
    path: request.path, language: 'text', symbols: [], chunks: [], imports: [], types: [], hasErrors: false,
  };
  const t1 = performance.now();
  const candidates = new Map<string, Candidate>();
  const offer = (key: string, snippet: Snippet, retriever: RetrieverName, rank: number, definitionScore = 0): void => {
    const known = candidates.get(key);
    if (known) {
      known.ranks[retriever] = Math.min(known.ranks[retriever] ?? rank, rank);
      known.definitionScore = Math.max(known.definitionScore, definitionScore);
    } else {
      candidates.set(key, { snippet, ranks: { [retriever]: rank }, definitionScore });
    }
  };

  DefinitionRetriever.retrieve(index, facts, request.text, query).forEach((hit, rank) => {
    const { chunk } = hit;
    offer(chunk.id, { path: chunk.path, range: chunk.range, text: chunk.text, retriever: 'definition', why: hit.why, score: hit.score }, 'definition', rank, hit.score);
  });
  const t2 = performance.now();

  const notCurrent = (id: string): boolean => !id.startsWith(`${request.path}#`);
  index.searchChunks(query.lexicalText, LEXICAL_CANDIDATES, notCurrent).forEach((hit, rank) => {
    const chunk = index.chunk(hit.id);
    if (chunk) offer(chunk.id, { path: chunk.path, range: chunk.range, text: chunk.text, retriever: 'lexical', why: `BM25 ${hit.score.toFixed(1)}`, score: hit.score }, 'lexical', rank);
  });
  const t3 = performance.now();

  recentWindows(request, query).forEach((snippet, rank) => offer(`${snippet.path}#${snippet.range.start}-recent`, snippet, 'recent', rank));
  const t4 = performance.now();

  const ranked = rerank([...candidates.values()], query, request.path);
  const { packed, dropped } = packSnippets(ranked, request.budget ?? DEFAULT_BUDGET_CHARS);
  const t5 = performance.now();
  return {
    snippets: packed,
    dropped,
    timings: { queryMs: t1 - t0, definitionMs: t2 - t1, lexicalMs: t3 - t2, recentMs: t4 - t3, rerankMs: t5 - t4, totalMs: t5 - t0 },
  };
}

/** Jaccard-similar 20-line windows from recently used files (as Copilot and Cody do). */
function recentWindows(request: RetrievalRequest, query: RetrievalQuery): Snippet[] {
  if (!request.recent?.length) return [];
  const target = tokenSet(query.windowText);
  const scored: Snippet[] = [];
  for (const file of request.recent.filter((f) => f.path !== request.path).slice(0, RECENT_FILES)) {
    for (const window of lineWindows(file.path, file.text, 20, 10)) {
      const score = jaccard(target, tokenSet(window.text));
      if (score > 0) scored.push({ path: file.path, range: window.range, text: window.text, retriever: 'recent', why: `Jaccard ${score.toFixed(2)} with a recent file`, score });
    }
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, RECENT_CANDIDATES);
}

/**
 * Fused score plus features: overlap of the snippet's identifiers with those near the cursor, the definition
 * path's proximity score, same directory; divided by a gentle length penalty so that compact outlines and
 * signatures win over long bodies of equal relevance.
 */
function rerank(candidates: Candidate[], query: RetrievalQuery, currentPath: string): Snippet[] {
  const anchorWeight = new Map(query.anchors.map((a) => [a.name, a.weight]));
  const currentDir = currentPath.slice(0, currentPath.lastIndexOf('/') + 1);
  const scored = candidates.map((c) => {
    let fused = 0;
    for (const [retriever, rank] of Object.entries(c.ranks) as [RetrieverName, number][]) fused += WEIGHTS[retriever] / (RRF_K + rank + 1);
    let overlap = 0;
    for (const name of new Set(identifiers(c.snippet.text))) overlap += anchorWeight.get(name) ?? 0;
    const sameDir = c.snippet.path.startsWith(currentDir) && !c.snippet.path.slice(currentDir.length).includes('/') ? 0.02 : 0;
    const lengthPenalty = 1 + c.snippet.text.length / 3000;
    const score = (fused + 0.15 * c.definitionScore + 0.01 * Math.min(overlap, 5) + sameDir) / lengthPenalty;
    const why = Object.keys(c.ranks).length > 1 ? `${c.snippet.why}; also found by ${Object.keys(c.ranks).filter((r) => r !== c.snippet.retriever).join(', ')}` : c.snippet.why;
    return { ...c.snippet, score, why };
  });
  return scored.sort((a, b) => b.score - a.score);
}
