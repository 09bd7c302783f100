import type { Hit } from './retriever';
import type { RetrieverName, Snippet } from './types';

/** Reciprocal rank constant (Cormack et al.); small lists, so a small k sharpens the top. */
const RRF_K = 10;

/**
 * What a first-ranked candidate of each path adds, on the definition path's 0..1 score scale. The definition
 * path adds its own score instead (anchor proximity × kind), which orders its candidates better than rank.
 */
export const FUSION_WEIGHTS: Record<Exclude<RetrieverName, 'definition'>, number> = {
  /** BM25 finds the chunks that name the same rare identifiers; often a definition's user, not the definition. */
  lexical: 0.3,
  /** Global similar windows: what analogous code did next; below definitions unless near-identical (strong). */
  similar: 0.2,
  /** Windows of sibling files: the same idea restricted to likely parallels, so a little weaker. */
  sibling: 0.15,
  /** Recently used files: what the user is working on, but not necessarily related to this line. */
  recent: 0.2,
};

/** A candidate found by one or more retrievers. */
export interface Candidate {
  snippet: Snippet;
  /** Best-first position in each path that found it. */
  ranks: Partial<Record<RetrieverName, number>>;
  /** The definition path's own score: anchor proximity times kind. */
  definitionScore: number;
  /** The path whose own evidence for it is strong (see Hit.strong), if any. */
  strongBy?: RetrieverName;
  /** Fused score, before the rerank's features. */
  score: number;
}

/** Merges the paths' hits by key and scores each by weighted reciprocal rank plus the definition score. */
export function fuse(results: readonly { name: RetrieverName; hits: readonly Hit[] }[]): Candidate[] {
  const candidates = new Map<string, Candidate>();
  for (const { name, hits } of results) {
    hits.forEach((hit, rank) => {
      let known = candidates.get(hit.key);
      if (!known) {
        known = { snippet: hit.snippet, ranks: {}, definitionScore: 0, score: 0 };
        candidates.set(hit.key, known);
      }
      known.ranks[name] = Math.min(known.ranks[name] ?? rank, rank);
      if (hit.strong) known.strongBy ??= name;
      if (name === 'definition') known.definitionScore = Math.max(known.definitionScore, hit.snippet.score);
    });
  }
  for (const c of candidates.values()) {
    c.score = c.definitionScore;
    for (const [name, rank] of Object.entries(c.ranks) as [RetrieverName, number][]) {
      if (name !== 'definition') c.score += (FUSION_WEIGHTS[name] * (RRF_K + 1)) / (RRF_K + rank + 1);
    }
  }
  return [...candidates.values()];
}

/**
 * The final order: the best strong candidate of each path first (so that no fusion of the others can crowd
 * out a path whose own evidence is decisive: fused recall cannot fall below that path's best candidate), then
 * everything else as ranked.
 */
export function strongFirst(
  ranked: readonly Snippet[],
  strongBy: ReadonlyMap<Snippet, RetrieverName>,
): { ordered: Snippet[]; strong: Set<Snippet> } {
  const strong = new Set<Snippet>();
  const seen = new Set<RetrieverName>();
  for (const snippet of ranked) {
    const by = strongBy.get(snippet);
    if (by && !seen.has(by)) {
      seen.add(by);
      strong.add(snippet);
    }
  }
  return { ordered: [...strong, ...ranked.filter((s) => !strong.has(s))], strong };
}
