import type { RepoIndex } from '../index/repoIndex';
import { baseName } from '../index/relPath';
import type { Chunk } from '../index/types';
import { bestWindow, presentWindow } from './chunkWindows';
import type { Retriever } from './retriever';
import type { Snippet } from './types';

/** Sibling files searched at most. */
const FILES = 16;
const CANDIDATES = 4;

/**
 * Sibling implementations share code: `MySqlSchemaHelper.ts` reads like `OracleSchemaHelper.ts`, a view like
 * the views beside it. Files named with the same last words as the current file, and files in its folder,
 * are searched window by window for the code most similar (Jaccard) to the lines before the cursor.
 */
export const siblingRetriever: Retriever = {
  name: 'sibling',
  costMs: 2,
  retrieve({ index, request, windowQuery }) {
    // Score every window first and present only the kept ones: most chunks of 16 files are never shown.
    const scored: { chunk: Chunk; start: number; score: number }[] = [];
    for (const filePath of siblingFiles(index, request.path)) {
      for (const chunk of index.facts(filePath)?.chunks ?? []) {
        if (chunk.kind === 'outline') continue;
        const { start, score } = bestWindow(index, chunk, windowQuery);
        if (score > 0) scored.push({ chunk, start, score });
      }
    }
    return scored
      .sort((a, b) => b.score - a.score)
      .slice(0, CANDIDATES)
      .map(({ chunk, start, score }) => {
        const why = `Jaccard ${score.toFixed(2)} in a sibling file`;
        const snippet: Snippet = { ...presentWindow(chunk, start), retriever: 'sibling', why, score };
        return { key: `${snippet.path}#${snippet.range.start}-window`, snippet, strong: false };
      });
  },
};

function siblingFiles(index: RepoIndex, currentPath: string): string[] {
  const slash = currentPath.lastIndexOf('/');
  const dir = currentPath.slice(0, slash + 1);
  const base = baseName(currentPath).replace(/\.[^.]*$/, '');
  const words = base.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g) ?? [base];
  // `mysql-query-compiler` and `postgres_query_compiler` end with the same words as `MySqlQueryCompiler` does.
  const separated = SEPARATOR.test(base);
  const suffix = separated ? lastParts(base) : words.length > 1 ? words.slice(-2).join('') : '';
  const siblings: string[] = [];
  const scope = index.searchScope(currentPath);
  for (const [filePath, name, parts] of fileNames(index)) {
    if (filePath === currentPath || !filePath.startsWith(scope)) continue;
    const sameDir = filePath.startsWith(dir) && !filePath.slice(dir.length).includes('/');
    const sameEnd = separated ? suffix !== '' && parts === suffix : suffix && name.endsWith(suffix) && name !== suffix;
    if (sameDir || sameEnd) siblings.push(filePath);
    if (siblings.length >= FILES) break;
  }
  return siblings;
}

const SEPARATOR = /[-_]/;

/** The last two parts of a kebab- or snake-case name, lower-cased and joined by `-` ('' for fewer than three). */
function lastParts(name: string): string {
  const parts = name.toLowerCase().split(/[-_]+/).filter(Boolean);
  return parts.length > 2 ? parts.slice(-2).join('-') : '';
}

const fileNameCache = new WeakMap<
  RepoIndex,
  { version: number; names: [path: string, name: string, lastParts: string][] }
>();

/**
 * Every indexed path with its file name less the extension and the last parts of a separated name, recomputed
 * only when the file set changes.
 */
function fileNames(index: RepoIndex): [path: string, name: string, lastParts: string][] {
  let cached = fileNameCache.get(index);
  if (!cached || cached.version !== index.fileSetVersion) {
    const names = [...index.files.keys()].map((p): [string, string, string] => {
      const name = baseName(p).replace(/\.[^.]*$/, '');
      return [p, name, lastParts(name)];
    });
    cached = { version: index.fileSetVersion, names };
    fileNameCache.set(index, cached);
  }
  return cached.names;
}
