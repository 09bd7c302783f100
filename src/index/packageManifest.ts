/** A workspace package.json: its name, its entry points and `exports` / `imports` patterns, mapped to source. */
import * as path from 'path';
import { isObject, readJsonc } from './jsonc';
import { patternOf, sortPatterns, type PathPattern } from './pathPattern';
import { joinRel } from './relPath';

export interface WorkspacePackage {
  /** '' for a package.json without a name (it can still declare `imports`). */
  name: string;
  dir: string;
  /** Candidate module paths for the bare package name, source files before compiled ones. */
  entries: string[];
  /** `exports` subpaths, keyed without the leading '.': `@acme/core/utils` matches prefix '/utils'. */
  exportPatterns: PathPattern[];
  /** `imports` (`#internal/*`). */
  importPatterns: PathPattern[];
}

/** Leading directories of a package entry that hold build output rather than source. */
const OUTPUT_DIRS = new Set([
  'dist',
  'lib',
  'build',
  'out',
  'output',
  'esm',
  'cjs',
  'es',
  'es6',
  'mjs',
  'umd',
  'types',
  'typings',
  'dts',
  'declarations',
  'compiled',
  'dist-types',
  'dist-esm',
  'dist-cjs',
]);
const COMPILED_EXTENSION = /\.(d\.[mc]?ts|[mc]?js|jsx)$/;
const ENTRY_FALLBACKS = ['src/index', 'index', 'lib/index'];
/** Condition names in the order that best leads to source (types and `source` point nearest to it). */
const CONDITION_ORDER = [
  'source',
  'types',
  'typescript',
  'development',
  'import',
  'module',
  'node',
  'require',
  'default',
];

export async function readPackage(file: string, dir: string): Promise<WorkspacePackage | undefined> {
  const json = await readJsonc(file);
  if (!isObject(json)) return undefined;
  const name = typeof json.name === 'string' ? json.name : '';
  const entryTargets: string[] = [];
  const exportPatterns: PathPattern[] = [];
  const exp = json.exports;
  if (isObject(exp) && Object.keys(exp).some((k) => k.startsWith('.'))) {
    for (const [key, value] of Object.entries(exp)) {
      if (key === '.') entryTargets.push(...conditionTargets(value));
      else if (key.startsWith('./')) exportPatterns.push(makePattern(key.slice(1), conditionTargets(value), dir));
    }
  } else if (exp !== undefined) {
    entryTargets.push(...conditionTargets(exp));
  }
  for (const field of ['types', 'typings', 'source', 'module', 'main']) {
    const v = json[field];
    if (typeof v === 'string') entryTargets.push(v);
  }
  entryTargets.push(...ENTRY_FALLBACKS);
  const importPatterns = isObject(json.imports)
    ? Object.entries(json.imports).map(([key, value]) => makePattern(key, conditionTargets(value), dir))
    : [];
  return {
    name,
    dir,
    entries: unique(entryTargets.flatMap((t) => sourceCandidates(dir, t))),
    exportPatterns: sortPatterns(exportPatterns),
    importPatterns: sortPatterns(importPatterns),
  };
}

/** Every path a conditional export may lead to, in CONDITION_ORDER, then the rest in written order. */
function conditionTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(conditionTargets);
  if (!isObject(value)) return [];
  const keys = [
    ...CONDITION_ORDER.filter((k) => k in value),
    ...Object.keys(value).filter((k) => !CONDITION_ORDER.includes(k)),
  ];
  return keys.flatMap((k) => conditionTargets(value[k]));
}

function makePattern(key: string, rawTargets: string[], pkgDir: string): PathPattern {
  return patternOf(
    key,
    unique(rawTargets.filter((t) => t.startsWith('./')).flatMap((t) => sourceCandidates(pkgDir, t))),
  );
}

/**
 * Where the source of a package entry may live: `dist/index.js` → `src/index`, then `dist/index` (probing finds
 * `.ts` before `.d.ts` before `.js`), then `index`; `lib/x.js` → `src/x`. Works on `*` patterns too.
 */
export function sourceCandidates(pkgDir: string, target: string): string[] {
  const t = path.posix.normalize(target.replace(/^\.\//, ''));
  if (t.startsWith('../')) return [];
  const stem = t.replace(COMPILED_EXTENSION, '');
  const segs = stem.split('/');
  let k = 0;
  while (k < segs.length - 1 && OUTPUT_DIRS.has(segs[k])) k++;
  if (k === 0) return [joinRel(pkgDir, stem)];
  const rest = segs.slice(k).join('/');
  return [joinRel(pkgDir, `src/${rest}`), joinRel(pkgDir, stem), joinRel(pkgDir, rest)];
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
