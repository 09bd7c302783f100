import MiniSearch from 'minisearch';
import { codeTerms, identifiers } from './tokenize';

const wordsOf = (text: string): string[] => text.split(' ');
import type { Chunk } from './types';

interface ChunkDoc {
  id: string;
  text: string;
  symbols: string;
}

export interface LexicalHit {
  id: string;
  score: number;
}

const OPTIONS = {
  fields: ['text', 'symbols'],
  tokenize: codeTerms,
  // Terms are already lower-cased identifier parts; no stemming or stop words for code.
  processTerm: (term: string) => term,
  searchOptions: { boost: { symbols: 2 }, combineWith: 'OR' as const },
};

/** BM25 over chunks (minisearch's BM25+), with the code-aware tokenizer. */
export class LexicalIndex {
  private search: MiniSearch<ChunkDoc>;

  constructor(serialized?: string) {
    this.search = serialized ? MiniSearch.loadJSON<ChunkDoc>(serialized, OPTIONS) : new MiniSearch<ChunkDoc>(OPTIONS);
  }

  add(chunks: Chunk[]): void {
    this.search.addAll(chunks.map((c) => ({ id: c.id, text: c.text, symbols: c.symbols.join(' ') })));
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) if (this.search.has(id)) this.search.discard(id);
  }

  /** Searches with the query's last distinct terms (nearest the cursor), at most `maxTerms` of them. */
  query(text: string, limit: number, filter?: (id: string) => boolean, maxTerms = 20): LexicalHit[] {
    // BM25 cost grows with every term's posting list; the terms nearest the cursor carry the intent.
    // Whole identifiers only: chunks are indexed with identifier parts too, so `renderPage` still matches
    // `renderPage`, while the parts (`render`, `page`) would match half the repository at a high cost.
    const terms = [
      ...new Set(
        identifiers(text)
          .map((w) => w.toLowerCase())
          .reverse(),
      ),
    ]
      .filter((t) => t.length > 1)
      .slice(0, maxTerms);
    if (terms.length === 0) return [];
    const results = this.search.search(terms.join(' '), {
      tokenize: wordsOf,
      ...(filter ? { filter: (r) => filter(r.id as string) } : {}),
    });
    return results.slice(0, limit).map((r) => ({ id: r.id as string, score: r.score }));
  }

  get size(): number {
    return this.search.documentCount;
  }

  toJSON(): string {
    return JSON.stringify(this.search);
  }
}
