import { LRUCache } from 'lru-cache';
import { isNonProductPath } from '../index/productPath';
import { identifiers } from '../index/tokenize';
import type { Candidate } from './fusion';
import type { RetrievalQuery } from './query';
import type { RetrieverName, Snippet } from './types';

/** Per unit of anchor weight the snippet names (capped): code naming what is around the cursor is on topic. */
const OVERLAP_WEIGHT = 0.02;
/** Anchor weight counted at most: a long snippet naming everything is not five times as relevant. */
const OVERLAP_CAP = 5;
/** Same folder as the current file: parallel and closely related code lives together. */
const SAME_DIR_BONUS = 0.03;
/**
 * What a window or chunk of test, fixture or example code keeps of its score when the current file is product code:
 * their code calls the product's API with made-up values rather than as product code does (the definition path
 * weighs tests in its own score).
 */
const NON_PRODUCT_FACTOR = 0.4;
/**
 * What a huge type's outline is charged for in the length penalty (the packer focuses it to its likeliest
 * members): otherwise the receiver's own type ranks below small declarations around it.
 */
export const FOCUSED_OUTLINE_CHARS = 450;
/** Characters beyond which a snippet is cut when packed, so they never count against it. */
const PACKABLE_CHARS = 1500;
/** Length penalty scale: a snippet this long scores half of an empty one of equal relevance. */
const LENGTH_SCALE = 3000;

/**
 * Candidate texts whose identifier sets are kept: chunks and their presented windows are the same strings from
 * one request to the next, and tokenizing every candidate was most of the rerank's time.
 */
const IDENTIFIER_SETS = 4096;
const identifierSets = new LRUCache<string, readonly string[], void>({
  max: IDENTIFIER_SETS,
  memoMethod: (text) => [...new Set(identifiers(text))],
});

/** The distinct identifiers of a candidate's text. */
export function distinctIdentifiers(text: string): readonly string[] {
  return identifierSets.memo(text);
}

/**
 * Fused score plus features: overlap of the snippet's identifiers with those near the cursor, same directory, test
 * code seen from product code; divided by a gentle length penalty so that compact outlines and signatures win over
 * long bodies of equal relevance. Returns snippets best first, and which path's strong evidence each carries.
 */
export function rerank(
  candidates: Candidate[],
  query: RetrievalQuery,
  currentPath: string,
): { ranked: Snippet[]; strongBy: Map<Snippet, RetrieverName> } {
  const anchorWeight = new Map(query.anchors.map((a) => [a.name, a.weight]));
  const currentDir = currentPath.slice(0, currentPath.lastIndexOf('/') + 1);
  const fromProduct = !isNonProductPath(currentPath);
  const strongBy = new Map<Snippet, RetrieverName>();
  const scored = candidates.map((c) => {
    let score = c.score;
    let overlap = 0;
    for (const name of distinctIdentifiers(c.snippet.text)) overlap += anchorWeight.get(name) ?? 0;
    score += OVERLAP_WEIGHT * Math.min(overlap, OVERLAP_CAP);
    const { path } = c.snippet;
    if (path.startsWith(currentDir) && !path.slice(currentDir.length).includes('/')) score += SAME_DIR_BONUS;
    // A long snippet is cut to fit when packed, so only the part that can be packed counts against it; an
    // outline listed a member a line is focused to its likeliest members, so it costs at most a focused outline.
    const charged = Math.min(c.snippet.text.length, c.snippet.members?.length ? FOCUSED_OUTLINE_CHARS : PACKABLE_CHARS);
    score /= 1 + charged / LENGTH_SCALE;
    if (fromProduct && c.snippet.retriever !== 'definition' && isNonProductPath(path)) score *= NON_PRODUCT_FACTOR;
    const others = Object.keys(c.ranks).filter((r) => r !== c.snippet.retriever);
    const why = others.length ? `${c.snippet.why}; also found by ${others.join(', ')}` : c.snippet.why;
    const snippet: Snippet = { ...c.snippet, score, why };
    if (c.strongBy) strongBy.set(snippet, c.strongBy);
    return snippet;
  });
  return { ranked: scored.sort((a, b) => b.score - a.score), strongBy };
}
