import MiniSearch from 'minisearch';
import type { RepoIndex } from '../index/repoIndex';
import { identifiers } from '../index/tokenize';
import { lineWindows } from '../index/windows';
import type { Chunk } from '../index/types';
import { packSnippets } from '../retrieval/pack';
import { jaccard, tokenSet } from '../retrieval/query';
import type { Snippet } from '../retrieval/types';

/** RepoCoder's retrieval unit: 20-line windows with a stride of 10, over every file of the repository. */
const WINDOW_LINES = 20;
const WINDOW_STRIDE = 10;
const CANDIDATES = 20;

interface Window {
  chunk: Chunk;
  tokens: Set<string>;
}

export interface BaselineResult {
  snippets: Snippet[];
  ms: number;
}

/**
 * The published baselines, measured on the same windows: RepoCoder's sparse retriever (Jaccard over token
 * sets; query = the last 20 lines of left context) and plain BM25 (whole lower-cased identifiers, no splitting).
 */
export class WindowBaselines {
  private readonly windows: Window[] = [];
  private readonly byId = new Map<string, Window>();
  private readonly bm25: MiniSearch<{ id: string; text: string }>;

  constructor(index: RepoIndex, texts: ReadonlyMap<string, string>) {
    this.bm25 = new MiniSearch({
      fields: ['text'],
      tokenize: (text: string) => identifiers(text).map((w) => w.toLowerCase()),
      processTerm: (term: string) => term,
      searchOptions: { combineWith: 'OR' },
    });
    for (const filePath of index.files.keys()) {
      const text = texts.get(filePath);
      if (text === undefined) continue;
      for (const chunk of lineWindows(filePath, text, WINDOW_LINES, WINDOW_STRIDE)) {
        const window = { chunk, tokens: tokenSet(chunk.text) };
        this.windows.push(window);
        this.byId.set(chunk.id, window);
      }
    }
    this.bm25.addAll(this.windows.map((w) => ({ id: w.chunk.id, text: w.chunk.text })));
  }

  /** A file changed (or is gone, `text` undefined): its windows are replaced, as a rebuild would hold them. */
  replaceFile(filePath: string, text: string | undefined): void {
    const old = this.windows.filter((w) => w.chunk.path === filePath);
    if (old.length) {
      for (const window of old) {
        this.byId.delete(window.chunk.id);
        this.bm25.remove({ id: window.chunk.id, text: window.chunk.text });
      }
      let kept = 0;
      for (const window of this.windows) if (window.chunk.path !== filePath) this.windows[kept++] = window;
      this.windows.length = kept;
    }
    if (text === undefined) return;
    const added = lineWindows(filePath, text, WINDOW_LINES, WINDOW_STRIDE).map((chunk) => ({
      chunk,
      tokens: tokenSet(chunk.text),
    }));
    for (const window of added) {
      this.windows.push(window);
      this.byId.set(window.chunk.id, window);
    }
    this.bm25.addAll(added.map((w) => ({ id: w.chunk.id, text: w.chunk.text })));
  }

  get windowCount(): number {
    return this.windows.length;
  }

  jaccard(currentPath: string, prompt: string, budget: number): BaselineResult {
    const started = performance.now();
    const query = tokenSet(lastLines(prompt, WINDOW_LINES));
    const scored: { window: Window; score: number }[] = [];
    for (const window of this.windows) {
      if (window.chunk.path === currentPath) continue;
      const score = jaccard(query, window.tokens);
      if (score > 0) scored.push({ window, score });
    }
    scored.sort((a, b) => b.score - a.score);
    const ranked = scored.slice(0, CANDIDATES).map(({ window, score }) => toSnippet(window.chunk, score, 'Jaccard'));
    return { snippets: packSnippets(ranked, budget).packed, ms: performance.now() - started };
  }

  bm25Search(currentPath: string, prompt: string, budget: number): BaselineResult {
    const started = performance.now();
    const hits = this.bm25.search(lastLines(prompt, WINDOW_LINES), {
      filter: (r) => !String(r.id).startsWith(`${currentPath}#`),
    });
    const ranked = hits
      .slice(0, CANDIDATES)
      .map((hit) => toSnippet(this.byId.get(hit.id as string)!.chunk, hit.score, 'BM25'));
    return { snippets: packSnippets(ranked, budget).packed, ms: performance.now() - started };
  }
}

function toSnippet(chunk: Chunk, score: number, name: string): Snippet {
  return {
    path: chunk.path,
    range: chunk.range,
    text: chunk.text,
    retriever: 'lexical',
    why: `${name} ${score.toFixed(2)}`,
    score,
  };
}

function lastLines(text: string, count: number): string {
  return text.split('\n').slice(-count).join('\n');
}
