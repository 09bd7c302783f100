import { DEFAULTS } from '../defaults';
import type { RepoIndex } from '../index/repoIndex';
import { languageForPath } from '../index/languages';
import type { Chunk, FileFacts } from '../index/types';
import { lineWindows } from '../index/windows';
import { codeTerms, identifiers } from '../index/tokenize';
import { DefinitionRetriever } from './definitions';
import { packSnippets, type FirstPassLimits } from './pack';
import { formQuery, jaccard, tokenSet, type RetrievalQuery } from './query';
import { type RetrievalRequest, type RetrievalResult, type RetrieverName, type Snippet } from './types';

/** Reciprocal rank constant (Cormack et al.); small lists, so a small k sharpens the top. */
const RRF_K = 10;
/** Score of the first-ranked candidate of the non-definition paths, on the definition path's 0..1 scale. */
const WEIGHTS: Record<RetrieverName, number> = { definition: 1, lexical: 0.3, similar: 0.15, recent: 0.2 };
const LEXICAL_CANDIDATES = 12;
/** Identifiers in more than this share of files are left out of the lexical query. */
const COMMON_SHARE = 0.1;
const LEXICAL_TERMS = 10;
const SIMILAR_FILES = 16;
const SIMILAR_CANDIDATES = 4;
const SIMILAR_WINDOW_LINES = 20;
const RECENT_CANDIDATES = 4;
const RECENT_FILES = 10;
/**
 * What a huge type's outline is charged for in the length penalty, and what the packer's first pass gives it
 * (focused to its likeliest members): otherwise the receiver's own type ranks below small declarations around it.
 */
const FOCUSED_OUTLINE_CHARS = 450;
/**
 * First-pass limits: definitions leave half the budget to similar code (they find different things); an outline
 * gets what it is charged for in the rerank, another definition 600 characters (+1.9 points of recall on the
 * development benchmark, +1.7 on four other TypeScript repositories, with the outline charge at 450).
 */
const FIRST_PASS: FirstPassLimits = { shares: { definition: 0.5, similar: 0.25 }, outlineChars: FOCUSED_OUTLINE_CHARS, definitionChars: 600 };

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
    path: request.path, language: languageForPath(request.path)?.id ?? 'text', symbols: [], chunks: [], imports: [], types: [], hasErrors: false,
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
    offer(chunk.id, { ...snippetOf(chunk), retriever: 'definition', why: hit.why, score: hit.score }, 'definition', rank, hit.score);
  });
  const t2 = performance.now();

  const notCurrent = (id: string): boolean => !id.startsWith(`${request.path}#`);
  const windowTokens = tokenSet(query.windowText);
  index.searchChunks(distinctiveTerms(index, query.lexicalText), LEXICAL_CANDIDATES, notCurrent).forEach((hit, rank) => {
    const chunk = index.chunk(hit.id);
    if (chunk) offer(chunk.id, { ...withoutSimilarity(mostSimilarWindow(chunk, windowTokens)), retriever: 'lexical', why: `BM25 ${hit.score.toFixed(1)}`, score: hit.score }, 'lexical', rank);
  });
  const t3 = performance.now();

  similarFileWindows(index, request.path, windowTokens).forEach((snippet, rank) => offer(`${snippet.path}#${snippet.range.start}-similar`, snippet, 'similar', rank));
  const t4 = performance.now();
  recentWindows(request, query).forEach((snippet, rank) => offer(`${snippet.path}#${snippet.range.start}-recent`, snippet, 'recent', rank));
  const t5 = performance.now();

  const ranked = rerank([...candidates.values()], query, request.path);
  // An outline too long for the budget keeps the members whose name shares words with the lines around the
  // cursor, then those the repository uses most; those already used around the cursor go last (the prompt shows them).
  const inFile = new Set(query.anchors.map((a) => a.name));
  const nearTerms = new Set(codeTerms(query.lexicalText));
  const priority = (name: string): number => {
    const shared = codeTerms(name).filter((t) => t.length > 2 && nearTerms.has(t)).length;
    return (Math.log1p(index.frequency(name)) + 3 * shared) * (inFile.has(name) ? 0.1 : 1);
  };
  const { packed, dropped } = packSnippets(ranked, request.budget ?? DEFAULTS.contextBudget, priority, FIRST_PASS);
  const t6 = performance.now();
  return {
    snippets: packed,
    dropped,
    timings: { queryMs: t1 - t0, definitionMs: t2 - t1, lexicalMs: t3 - t2, similarMs: t4 - t3, recentMs: t5 - t4, rerankMs: t6 - t5, totalMs: t6 - t0 },
    declaredElsewhere: request.names?.filter((name) => index.symbols(name).some((ref) => ref.path !== request.path)),
  };
}

/**
 * The query's identifiers that are not everywhere in the repository, nearest the cursor first: a word used
 * in most files (`const`, `this`, `props`) barely moves BM25 yet costs the longest posting list.
 */
function distinctiveTerms(index: RepoIndex, text: string): string {
  const limit = Math.max(20, index.stats().files * COMMON_SHARE);
  const kept: string[] = [];
  for (const name of new Set(identifiers(text).reverse())) {
    if (index.frequency(name) <= limit) kept.push(name);
    if (kept.length === LEXICAL_TERMS) break;
  }
  return kept.join(' ');
}

/** A presented window shorter than this keeps the match itself instead (a chunk's last lines). */
const MIN_FOLLOWING_LINES = 5;

/**
 * A long chunk found by BM25 is presented by its 20-line windows (RepoCoder's unit): the window most similar
 * (Jaccard) to the code before the cursor is found, and the window half a stride on is shown — the second half
 * of the match and the lines that follow it. Code that reads like the lines before the cursor is most useful
 * for what it did next, which is what the line being written needs (+2 points of recall on the development
 * benchmark over showing the match).
 */
function mostSimilarWindow(chunk: Chunk, target: Set<string>): Pick<Snippet, 'path' | 'range' | 'text' | 'members'> & { similarity: number } {
  const windows = windowsOf(chunk);
  let bestAt = 0;
  let bestScore = -1;
  windows.forEach((window, i) => {
    const score = jaccard(target, window.tokens);
    if (score > bestScore) [bestAt, bestScore] = [i, score];
  });
  if (windows.length === 1) return { ...snippetOf(chunk), similarity: bestScore };
  const following = windows[bestAt + 1];
  const best = following && following.text.split('\n').length >= MIN_FOLLOWING_LINES ? following : windows[bestAt];
  const start = chunk.range.start + best.start;
  return { path: chunk.path, range: { start, end: start + best.text.split('\n').length }, text: best.text, similarity: bestScore };
}

interface ChunkWindow {
  start: number;
  text: string;
  tokens: Set<string>;
}

/**
 * A chunk's 20-line windows with their token sets, computed once per chunk object: chunks live until their
 * file changes, and consecutive queries keep meeting the same ones.
 */
const windowCache = new WeakMap<Chunk, ChunkWindow[]>();

function windowsOf(chunk: Chunk): ChunkWindow[] {
  let windows = windowCache.get(chunk);
  if (!windows) {
    const lines = chunk.text.split('\n');
    windows = [];
    if (lines.length <= SIMILAR_WINDOW_LINES + 5) {
      windows.push({ start: 0, text: chunk.text, tokens: tokenSet(chunk.text) });
    } else {
      for (let start = 0; start < lines.length; start += SIMILAR_WINDOW_LINES / 2) {
        const text = lines.slice(start, start + SIMILAR_WINDOW_LINES).join('\n');
        windows.push({ start, text, tokens: tokenSet(text) });
      }
    }
    windowCache.set(chunk, windows);
  }
  return windows;
}

function withoutSimilarity<T extends { similarity: number }>(window: T): Omit<T, 'similarity'> {
  const { similarity: _similarity, ...rest } = window;
  return rest;
}

/** A chunk as a snippet; outlines written one member a line say which member each line holds. */
function snippetOf(chunk: Chunk): Pick<Snippet, 'path' | 'range' | 'text' | 'members'> {
  const members = chunk.symbols.slice(1);
  const lines = chunk.text.split('\n').length;
  const oneMemberALine = chunk.kind === 'outline' && members.length > 0 && (lines === members.length + 1 || lines === members.length + 2);
  return { path: chunk.path, range: chunk.range, text: chunk.text, members: oneMemberALine ? members : undefined };
}

/**
 * Sibling implementations share code: `MySqlSchemaHelper.ts` reads like `OracleSchemaHelper.ts`, a view like
 * the views beside it. Files named with the same last words as the current file, and files in its folder,
 * are searched window by window for the code most similar (Jaccard) to the lines before the cursor.
 */
function similarFileWindows(index: RepoIndex, currentPath: string, target: Set<string>): Snippet[] {
  const slash = currentPath.lastIndexOf('/');
  const dir = currentPath.slice(0, slash + 1);
  const base = currentPath.slice(slash + 1).replace(/\.[^.]*$/, '');
  const words = base.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g) ?? [base];
  const suffix = words.length > 1 ? words.slice(-2).join('') : '';
  const siblings: string[] = [];
  for (const [filePath, name] of fileNames(index)) {
    if (filePath === currentPath) continue;
    const sameDir = filePath.startsWith(dir) && !filePath.slice(dir.length).includes('/');
    if (sameDir || (suffix && name.endsWith(suffix) && name !== suffix)) siblings.push(filePath);
    if (siblings.length >= SIMILAR_FILES) break;
  }
  const scored: Snippet[] = [];
  for (const filePath of siblings) {
    for (const chunk of index.facts(filePath)?.chunks ?? []) {
      if (chunk.kind === 'outline') continue;
      const { similarity, ...window } = mostSimilarWindow(chunk, target);
      if (similarity > 0) scored.push({ ...window, retriever: 'similar', why: `Jaccard ${similarity.toFixed(2)} in a sibling file`, score: similarity });
    }
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, SIMILAR_CANDIDATES);
}

const fileNameCache = new WeakMap<RepoIndex, { version: number; names: [path: string, name: string][] }>();

/** Every indexed path with its file name less the extension, recomputed only when the file set changes. */
function fileNames(index: RepoIndex): [path: string, name: string][] {
  let cached = fileNameCache.get(index);
  if (!cached || cached.version !== index.fileSetVersion) {
    const names = [...index.files.keys()].map((p): [string, string] => [p, p.slice(p.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '')]);
    cached = { version: index.fileSetVersion, names };
    fileNameCache.set(index, cached);
  }
  return cached.names;
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
 * Fused score plus features: the definition path's proximity score, reciprocal-rank shares of the other paths,
 * overlap of the snippet's identifiers with those near the cursor, same directory; divided by a gentle length
 * penalty so that compact outlines and signatures win over long bodies of equal relevance.
 */
function rerank(candidates: Candidate[], query: RetrievalQuery, currentPath: string): Snippet[] {
  const anchorWeight = new Map(query.anchors.map((a) => [a.name, a.weight]));
  const currentDir = currentPath.slice(0, currentPath.lastIndexOf('/') + 1);
  const scored = candidates.map((c) => {
    // The definition path's own score (anchor proximity × kind) leads; the other paths add by rank.
    let score = c.definitionScore;
    for (const [retriever, rank] of Object.entries(c.ranks) as [RetrieverName, number][]) {
      if (retriever !== 'definition') score += WEIGHTS[retriever] * (RRF_K + 1) / (RRF_K + rank + 1);
    }
    let overlap = 0;
    for (const name of new Set(identifiers(c.snippet.text))) overlap += anchorWeight.get(name) ?? 0;
    score += 0.02 * Math.min(overlap, 5);
    if (c.snippet.path.startsWith(currentDir) && !c.snippet.path.slice(currentDir.length).includes('/')) score += 0.03;
    // A long snippet is cut to fit when packed, so only the part that can be packed counts against it; an
    // outline listed a member a line is focused to its likeliest members, so it costs at most a focused outline.
    score /= 1 + Math.min(c.snippet.text.length, c.snippet.members?.length ? FOCUSED_OUTLINE_CHARS : 1500) / 3000;
    const why = Object.keys(c.ranks).length > 1 ? `${c.snippet.why}; also found by ${Object.keys(c.ranks).filter((r) => r !== c.snippet.retriever).join(', ')}` : c.snippet.why;
    return { ...c.snippet, score, why };
  });
  return scored.sort((a, b) => b.score - a.score);
}
