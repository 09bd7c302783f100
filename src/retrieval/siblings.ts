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
  retrieve({ index, request, windowQuery, scope }) {
    // Score every window first and present only the kept ones: most chunks of 16 files are never shown.
    const scored: { chunk: Chunk; start: number; score: number }[] = [];
    for (const filePath of siblingFiles(index, request.path, scope)) {
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

/** The words of a file name: `MySqlSchemaHelper` → My, Sql, Schema, Helper. */
const nameWords = (name: string): string[] => name.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g) ?? [name];

function siblingFiles(index: RepoIndex, currentPath: string, scope: string): string[] {
  const slash = currentPath.lastIndexOf('/');
  const dir = currentPath.slice(0, slash + 1);
  const base = baseName(currentPath).replace(/\.[^.]*$/, '');
  const words = nameWords(base);
  // `mysql-query-compiler` and `postgres_query_compiler` end with the same words as `MySqlQueryCompiler` does.
  const separated = SEPARATOR.test(base);
  const suffix = separated ? lastParts(base) : words.length > 1 ? words.slice(-2).join('') : '';
  const names = fileNames(index);
  // Only the files of the folder and those whose names end alike can qualify: their buckets, in index order (a name
  // that ends with the last two words ends with the same last word).
  const ending = !suffix ? [] : separated ? names.byParts.get(suffix) : names.byLastWord.get(words[words.length - 1]);
  const candidates = [...(names.byDir.get(dir) ?? []), ...(ending ?? [])].sort((a, b) => a - b);
  const siblings: string[] = [];
  let previous = -1;
  for (const at of candidates) {
    if (at === previous) continue;
    previous = at;
    const [filePath, name, parts] = names.all[at];
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

/**
 * Every indexed path (index order) with its file name less the extension and the last parts of a separated name,
 * and the positions of the paths by folder, by last parts and by the name's last word: a request reads the few
 * buckets its file can match instead of every path (7 ms a request at 100,000 files).
 */
interface FileNames {
  all: [path: string, name: string, lastParts: string][];
  byDir: Map<string, number[]>;
  byParts: Map<string, number[]>;
  byLastWord: Map<string, number[]>;
}

const fileNameCache = new WeakMap<RepoIndex, { version: number; names: FileNames }>();

const push = (map: Map<string, number[]>, key: string, at: number): void => {
  const list = map.get(key);
  if (list) list.push(at);
  else map.set(key, [at]);
};

/** `FileNames` of the index, recomputed only when the file set changes. */
function fileNames(index: RepoIndex): FileNames {
  let cached = fileNameCache.get(index);
  if (!cached || cached.version !== index.fileSetVersion) {
    const names: FileNames = { all: [], byDir: new Map(), byParts: new Map(), byLastWord: new Map() };
    for (const p of index.files.keys()) {
      const name = baseName(p).replace(/\.[^.]*$/, '');
      const at = names.all.push([p, name, lastParts(name)]) - 1;
      push(names.byDir, p.slice(0, p.lastIndexOf('/') + 1), at);
      if (names.all[at][2]) push(names.byParts, names.all[at][2], at);
      const words = nameWords(name);
      push(names.byLastWord, words[words.length - 1], at);
    }
    cached = { version: index.fileSetVersion, names };
    fileNameCache.set(index, cached);
  }
  return cached.names;
}
