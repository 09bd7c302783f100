/**
 * Import specifier → indexed files.
 *
 * The layout (workspace packages, tsconfig paths, Go modules, Python and Rust roots) is read from configuration
 * files once; resolution itself touches no disk and probes the index through `hasFile`, so it follows the file
 * set as it changes. Rebuild the layout after a configuration file changes.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { LanguageId } from './types';

/** A `paths` / `exports` / `imports` entry: `prefix*suffix` → targets with `*` where the match goes. */
export interface PathPattern {
  prefix: string;
  suffix: string;
  wildcard: boolean;
  /** Workspace-relative module paths (extension optional), best first. */
  targets: string[];
}

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

export interface TsConfigPaths {
  /** Directory of the tsconfig/jsconfig; it governs the files below it. */
  dir: string;
  /** Workspace-relative baseUrl, if set (here or in a config it extends). */
  baseUrl?: string;
  /** Exact patterns first, then by longest prefix, which is the order TypeScript tries them in. */
  paths: PathPattern[];
}

export interface GoModule {
  path: string;
  dir: string;
}

export interface ProjectLayout {
  root: string;
  packages: ReadonlyMap<string, WorkspacePackage>;
  packagesByDir: ReadonlyMap<string, WorkspacePackage>;
  tsconfigs: ReadonlyMap<string, TsConfigPaths>;
  /** Longest module path first, so nested modules win. */
  goModules: readonly GoModule[];
  /** Directories named src that hold Python files, and directories with setup.py / pyproject.toml. */
  pythonRoots: readonly string[];
  /** Directories holding a Cargo.toml, deepest first. */
  rustCrates: readonly string[];
  /** Package directory suffix ('com/x') → directories holding .java files that end with it. */
  javaDirs: ReadonlyMap<string, readonly string[]>;
}

const TS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
const JS_EXTENSIONS = ['.js', '.jsx', '.mjs', '.cjs', '.ts', '.tsx', '.mts', '.cts', '.d.ts'];
/** TypeScript's ESM style writes the emitted name (`./a.js`) for a source file `./a.ts`. */
const EMITTED_TO_SOURCE: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};
/** Leading directories of a package entry that hold build output rather than source. */
const OUTPUT_DIRS = new Set([
  'dist', 'lib', 'build', 'out', 'output', 'esm', 'cjs', 'es', 'es6', 'mjs', 'umd', 'types', 'typings', 'dts',
  'declarations', 'compiled', 'dist-types', 'dist-esm', 'dist-cjs',
]);
const COMPILED_EXTENSION = /\.(d\.[mc]?ts|[mc]?js|jsx)$/;
const ENTRY_FALLBACKS = ['src/index', 'index', 'lib/index'];
/** Condition names in the order that best leads to source (types and `source` point nearest to it). */
const CONDITION_ORDER = ['source', 'types', 'typescript', 'development', 'import', 'module', 'node', 'require', 'default'];
const READ_CONCURRENCY = 16;

// ---------------------------------------------------------------------------------------------------------
// Layout

/**
 * Reads configuration in every directory that holds (or is an ancestor of) an indexed file: the index may list
 * only source files, so configuration files are found on disk rather than in `files`.
 */
export async function loadProjectLayout(root: string, files: Iterable<string>): Promise<ProjectLayout> {
  const absRoot = path.resolve(root);
  const dirs = new Set<string>(['']);
  const pythonRoots = new Set<string>();
  const javaFileDirs = new Set<string>();
  for (const file of files) {
    const dir = dirOf(file);
    for (let d = dir; !dirs.has(d); d = dirOf(d)) dirs.add(d);
    if (file.endsWith('.py')) {
      const segs = dir.split('/');
      for (let i = 0; i < segs.length; i++) if (segs[i] === 'src') pythonRoots.add(segs.slice(0, i + 1).join('/'));
    } else if (file.endsWith('.java')) {
      javaFileDirs.add(dir);
    }
  }

  const configDirs = [...dirs].filter((d) => !d.split('/').includes('node_modules'));
  // Shallow directories first, so that of two packages with one name the outer one wins.
  configDirs.sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
  const listings = await mapLimit(configDirs, READ_CONCURRENCY, async (dir) => {
    try {
      return await fs.promises.readdir(path.join(absRoot, dir));
    } catch {
      return [];
    }
  });

  const packageJobs: Promise<WorkspacePackage | undefined>[] = [];
  const tsJobs: Promise<TsConfigPaths>[] = [];
  const goJobs: Promise<GoModule | undefined>[] = [];
  const rustCrates: string[] = [];
  const tsCache = new Map<string, Promise<RawTsOptions>>();
  configDirs.forEach((dir, i) => {
    const names = new Set(listings[i]);
    const abs = path.join(absRoot, dir);
    if (names.has('package.json')) packageJobs.push(readPackage(path.join(abs, 'package.json'), dir));
    const tsconfig = pickTsConfig(listings[i]);
    if (tsconfig) tsJobs.push(readTsConfig(absRoot, path.join(abs, tsconfig), dir, tsCache));
    if (names.has('go.mod')) goJobs.push(readGoMod(path.join(abs, 'go.mod'), dir));
    if (names.has('setup.py') || names.has('pyproject.toml')) pythonRoots.add(dir);
    if (names.has('Cargo.toml')) rustCrates.push(dir);
  });

  const packages = new Map<string, WorkspacePackage>();
  const packagesByDir = new Map<string, WorkspacePackage>();
  for (const pkg of await Promise.all(packageJobs)) {
    if (!pkg) continue;
    packagesByDir.set(pkg.dir, pkg);
    if (pkg.name && !packages.has(pkg.name)) packages.set(pkg.name, pkg);
  }
  const tsconfigs = new Map<string, TsConfigPaths>();
  for (const ts of await Promise.all(tsJobs)) tsconfigs.set(ts.dir, ts);
  const goModules = (await Promise.all(goJobs)).filter((m): m is GoModule => m !== undefined);
  goModules.sort((a, b) => b.path.length - a.path.length);
  pythonRoots.delete('');

  return {
    root: absRoot,
    packages,
    packagesByDir,
    tsconfigs,
    goModules,
    pythonRoots: [...pythonRoots].sort(),
    rustCrates: rustCrates.sort((a, b) => depth(b) - depth(a)),
    javaDirs: indexJavaDirs(javaFileDirs),
  };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function pickTsConfig(names: readonly string[]): string | undefined {
  if (names.includes('tsconfig.json')) return 'tsconfig.json';
  if (names.includes('jsconfig.json')) return 'jsconfig.json';
  return names.filter((n) => /^tsconfig\..+\.json$/.test(n)).sort()[0];
}

async function readJsonc(file: string): Promise<unknown> {
  try {
    return parseJsonc(await fs.promises.readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function readPackage(file: string, dir: string): Promise<WorkspacePackage | undefined> {
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
  const keys = [...CONDITION_ORDER.filter((k) => k in value), ...Object.keys(value).filter((k) => !CONDITION_ORDER.includes(k))];
  return keys.flatMap((k) => conditionTargets(value[k]));
}

function makePattern(key: string, rawTargets: string[], pkgDir: string): PathPattern {
  const star = key.indexOf('*');
  return {
    prefix: star < 0 ? key : key.slice(0, star),
    suffix: star < 0 ? '' : key.slice(star + 1),
    wildcard: star >= 0,
    targets: unique(rawTargets.filter((t) => t.startsWith('./')).flatMap((t) => sourceCandidates(pkgDir, t))),
  };
}

/**
 * Where the source of a package entry may live: `dist/index.js` → `src/index`, then `dist/index` (probing finds
 * `.ts` before `.d.ts` before `.js`), then `index`; `lib/x.js` → `src/x`. Works on `*` patterns too.
 */
function sourceCandidates(pkgDir: string, target: string): string[] {
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

function sortPatterns(patterns: PathPattern[]): PathPattern[] {
  return patterns.sort((a, b) => Number(a.wildcard) - Number(b.wildcard) || b.prefix.length - a.prefix.length);
}

interface RawTsOptions {
  baseUrl?: { value: string; configDir: string };
  paths?: { value: Record<string, unknown>; configDir: string };
}

async function readTsConfig(
  absRoot: string,
  file: string,
  dir: string,
  cache: Map<string, Promise<RawTsOptions>>,
): Promise<TsConfigPaths> {
  const raw = await loadTsOptions(file, cache, new Set());
  const baseUrl = raw.baseUrl ? toRel(absRoot, path.resolve(raw.baseUrl.configDir, raw.baseUrl.value)) : undefined;
  const patterns: PathPattern[] = [];
  if (raw.paths) {
    // Since TypeScript 4.1, paths without a baseUrl are relative to the config that declares them.
    const base = baseUrl ?? toRel(absRoot, raw.paths.configDir);
    for (const [key, value] of Object.entries(raw.paths.value)) {
      const targets = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
      const star = key.indexOf('*');
      patterns.push({
        prefix: star < 0 ? key : key.slice(0, star),
        suffix: star < 0 ? '' : key.slice(star + 1),
        wildcard: star >= 0,
        targets: targets.map((t) => path.posix.normalize(joinRel(base, t))),
      });
    }
  }
  return { dir, baseUrl, paths: sortPatterns(patterns) };
}

/** compilerOptions.baseUrl/paths after relative `extends` (a string or, since TS 5.0, an array). */
function loadTsOptions(file: string, cache: Map<string, Promise<RawTsOptions>>, seen: Set<string>): Promise<RawTsOptions> {
  let p = cache.get(file);
  if (!p) {
    p = (async () => {
      const json = await readJsonc(file);
      if (!isObject(json)) return {};
      const result: RawTsOptions = {};
      const ext = json.extends;
      for (const spec of typeof ext === 'string' ? [ext] : Array.isArray(ext) ? ext : []) {
        // Shared configs from packages (@tsconfig/...) never declare workspace paths.
        if (typeof spec !== 'string' || !spec.startsWith('.')) continue;
        let target = path.resolve(path.dirname(file), spec);
        if (!target.endsWith('.json') && !(await isFile(target))) target += '.json';
        if (seen.has(target)) continue;
        Object.assign(result, await loadTsOptions(target, cache, new Set([...seen, file])));
      }
      const opts = json.compilerOptions;
      const configDir = path.dirname(file);
      if (isObject(opts)) {
        if (typeof opts.baseUrl === 'string') result.baseUrl = { value: opts.baseUrl, configDir };
        if (isObject(opts.paths)) result.paths = { value: opts.paths, configDir };
      }
      return result;
    })();
    cache.set(file, p);
  }
  return p;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.promises.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function readGoMod(file: string, dir: string): Promise<GoModule | undefined> {
  try {
    const m = /^\s*module\s+"?([^"\s]+)"?/m.exec(await fs.promises.readFile(file, 'utf8'));
    return m ? { path: m[1], dir } : undefined;
  } catch {
    return undefined;
  }
}

function indexJavaDirs(dirs: Set<string>): Map<string, string[]> {
  const bySuffix = new Map<string, string[]>();
  for (const dir of dirs) {
    const segs = dir.split('/');
    for (let i = 0; i < segs.length; i++) {
      const key = segs.slice(i).join('/');
      const list = bySuffix.get(key);
      if (list) list.push(dir);
      else bySuffix.set(key, [dir]);
    }
  }
  return bySuffix;
}

/** JSON with comments and trailing commas, as tsconfig and VS Code settings allow. */
export function parseJsonc(text: string): unknown {
  const n = text.length;
  const skipComment = (i: number) => {
    if (text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      return end < 0 ? n : end;
    }
    const end = text.indexOf('*/', i + 2);
    return end < 0 ? n : end + 2;
  };
  const isCommentStart = (i: number) => text[i] === '/' && (text[i + 1] === '/' || text[i + 1] === '*');
  const skipTrivia = (i: number) => {
    while (i < n) {
      if (/\s/.test(text[i])) i++;
      else if (isCommentStart(i)) i = skipComment(i);
      else break;
    }
    return i;
  };
  let out = '';
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let copied = i;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < n && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      i++;
    } else if (isCommentStart(i)) {
      out += text.slice(copied, i);
      i = copied = skipComment(i);
    } else if (c === ',' && (text[skipTrivia(i + 1)] === '}' || text[skipTrivia(i + 1)] === ']')) {
      out += text.slice(copied, i);
      copied = ++i;
    } else {
      i++;
    }
  }
  return JSON.parse(out + text.slice(copied));
}

// ---------------------------------------------------------------------------------------------------------
// Resolution

/**
 * The indexed files `specifier` (as written in `fromFile`) refers to; empty when it is external or unknown.
 * `filesInDir` lists the workspace-relative paths of the indexed files directly in a directory.
 * `importedNames` (Python `from X import a, b`) lets submodules a and b resolve too.
 */
export function resolveImport(
  layout: ProjectLayout,
  hasFile: (rel: string) => boolean,
  filesInDir: (relDir: string) => string[],
  fromFile: string,
  specifier: string,
  language: LanguageId,
  importedNames?: readonly string[],
): string[] {
  switch (language) {
    case 'typescript':
    case 'tsx':
      return asList(resolveScript(layout, hasFile, fromFile, specifier, TS_EXTENSIONS));
    case 'javascript':
      return asList(resolveScript(layout, hasFile, fromFile, specifier, JS_EXTENSIONS));
    case 'python':
      return resolvePython(layout, hasFile, fromFile, specifier, importedNames ?? []);
    case 'go':
      return resolveGo(layout, filesInDir, specifier);
    case 'rust':
      return asList(resolveRust(layout, hasFile, fromFile, specifier));
    case 'java':
      return resolveJava(layout, hasFile, filesInDir, specifier);
    default:
      return [];
  }
}

function asList(file: string | undefined): string[] {
  return file === undefined ? [] : [file];
}

type Has = (rel: string) => boolean;

function resolveScript(layout: ProjectLayout, has: Has, fromFile: string, specifier: string, exts: string[]) {
  // Bundler queries (`./icon.svg?raw`) are not part of the path.
  const spec = specifier.replace(/\?.*$/, '');
  if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
    const target = normalizeInside(joinRel(dirOf(fromFile), spec));
    return target === undefined ? undefined : probeModule(has, target, exts);
  }
  if (spec.startsWith('#')) {
    const pkg = nearest(layout.packagesByDir, dirOf(fromFile));
    return pkg && matchPatterns(has, pkg.importPatterns, spec, exts);
  }
  const ts = nearest(layout.tsconfigs, dirOf(fromFile));
  if (ts) {
    const viaPaths = matchPatterns(has, ts.paths, spec, exts);
    if (viaPaths) return viaPaths;
    if (ts.baseUrl !== undefined) {
      const viaBase = probeModule(has, joinRel(ts.baseUrl, spec), exts);
      if (viaBase) return viaBase;
    }
  }
  return resolvePackage(layout, has, spec, exts);
}

function resolvePackage(layout: ProjectLayout, has: Has, spec: string, exts: string[]): string | undefined {
  const segs = spec.split('/');
  const nameLength = spec.startsWith('@') ? 2 : 1;
  const pkg = layout.packages.get(segs.slice(0, nameLength).join('/'));
  if (!pkg) return undefined;
  const sub = segs.slice(nameLength).join('/');
  if (!sub) return firstModule(has, pkg.entries, exts);
  return (
    matchPatterns(has, pkg.exportPatterns, `/${sub}`, exts) ??
    firstModule(has, [...sourceCandidates(pkg.dir, sub), joinRel(pkg.dir, `src/${sub}`)], exts)
  );
}

function matchPatterns(has: Has, patterns: readonly PathPattern[], spec: string, exts: string[]) {
  for (const p of patterns) {
    if (p.wildcard) {
      if (spec.length < p.prefix.length + p.suffix.length || !spec.startsWith(p.prefix) || !spec.endsWith(p.suffix)) {
        continue;
      }
      const star = spec.slice(p.prefix.length, spec.length - p.suffix.length);
      const found = firstModule(has, p.targets.map((t) => t.replace('*', star)), exts);
      if (found) return found;
    } else if (spec === p.prefix) {
      const found = firstModule(has, p.targets, exts);
      if (found) return found;
    }
  }
  return undefined;
}

function firstModule(has: Has, candidates: readonly string[], exts: string[]): string | undefined {
  for (const c of candidates) {
    const found = probeModule(has, c, exts);
    if (found) return found;
  }
  return undefined;
}

/** A module path as Node/TypeScript would: the file itself, emitted-name mapping, extensions, directory index. */
function probeModule(has: Has, p: string, exts: string[]): string | undefined {
  if (has(p)) return p;
  const ext = path.posix.extname(p);
  const sources = EMITTED_TO_SOURCE[ext];
  if (sources) {
    const stem = p.slice(0, -ext.length);
    for (const s of sources) if (has(stem + s)) return stem + s;
  }
  for (const e of exts) if (has(p + e)) return p + e;
  const index = p ? `${p}/index` : 'index';
  for (const e of exts) if (has(index + e)) return index + e;
  return undefined;
}

function resolvePython(layout: ProjectLayout, has: Has, fromFile: string, spec: string, names: readonly string[]) {
  const dots = /^\.*/.exec(spec)![0].length;
  const modulePath = spec.slice(dots).split('.').filter(Boolean).join('/');
  if (dots > 0) {
    let base: string | undefined = dirOf(fromFile);
    for (let i = 1; i < dots && base !== undefined; i++) base = base === '' ? undefined : dirOf(base);
    return base === undefined ? [] : pythonTargets(has, joinRel(base, modulePath), names);
  }
  if (!modulePath) return [];
  const fromDir = dirOf(fromFile);
  const enclosing = layout.pythonRoots.filter((r) => isWithin(fromDir, r)).reverse();
  const roots = unique([...enclosing, ...layout.pythonRoots, '', fromDir]);
  for (const root of roots) {
    const found = pythonTargets(has, joinRel(root, modulePath), names);
    if (found.length) return found;
  }
  return [];
}

/** The module (`m.py` or `m/__init__.py`) and each imported name that is itself a submodule. */
function pythonTargets(has: Has, modulePath: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const own = probePython(has, modulePath);
  if (own) found.push(own);
  for (const name of names) {
    const sub = /^\w+$/.test(name) ? probePython(has, joinRel(modulePath, name)) : undefined;
    if (sub && !found.includes(sub)) found.push(sub);
  }
  return found;
}

function probePython(has: Has, modulePath: string): string | undefined {
  const candidates = modulePath
    ? [`${modulePath}.py`, `${modulePath}/__init__.py`, `${modulePath}.pyi`, `${modulePath}/__init__.pyi`]
    : ['__init__.py', '__init__.pyi'];
  return candidates.find(has);
}

function resolveGo(layout: ProjectLayout, filesInDir: (relDir: string) => string[], spec: string): string[] {
  for (const mod of layout.goModules) {
    if (spec !== mod.path && !spec.startsWith(`${mod.path}/`)) continue;
    const dir = joinRel(mod.dir, spec.slice(mod.path.length + 1));
    return filesInDir(dir)
      .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))
      .sort();
  }
  return [];
}

/** Best effort: `crate::`, `self::`, `super::` and child-module paths, to `x.rs` or `x/mod.rs`. */
function resolveRust(layout: ProjectLayout, has: Has, fromFile: string, spec: string): string | undefined {
  const crateDir = layout.rustCrates.find((c) => isWithin(fromFile, c));
  const srcDir = crateDir !== undefined ? joinRel(crateDir, 'src') : enclosingSrcDir(fromFile);
  if (srcDir === undefined || !isWithin(fromFile, srcDir)) return undefined;
  const segs = spec.replace(/\s+as\s+\w+$/, '').replace(/::(\{.*|\*)$/, '').split('::').filter(Boolean);
  const current = rustModulePath(fromFile.slice(srcDir.length + (srcDir ? 1 : 0)));
  if (segs[0] === 'crate') return rustModule(has, srcDir, segs.slice(1), 0);
  if (segs[0] === 'self') return rustModule(has, srcDir, [...current, ...segs.slice(1)], current.length);
  if (segs[0] === 'super') {
    let up = 0;
    while (segs[up] === 'super') up++;
    const base = current.slice(0, Math.max(0, current.length - up));
    return rustModule(has, srcDir, [...base, ...segs.slice(up)], base.length);
  }
  // Without a prefix the path names a child module or, in 2015-edition style, one at the crate root; anything
  // else is an external crate. Requiring one more segment than the base keeps `std::x` from matching.
  return rustModule(has, srcDir, [...current, ...segs], current.length + 1) ?? rustModule(has, srcDir, segs, 1);
}

function enclosingSrcDir(file: string): string | undefined {
  const segs = file.split('/');
  const i = segs.lastIndexOf('src', segs.length - 2);
  return i < 0 ? undefined : segs.slice(0, i + 1).join('/');
}

function rustModulePath(relToSrc: string): string[] {
  const segs = relToSrc.replace(/\.rs$/, '').split('/');
  if (segs[segs.length - 1] === 'mod') segs.pop();
  if (segs.length === 1 && (segs[0] === 'lib' || segs[0] === 'main')) return [];
  return segs;
}

/** The deepest existing module file along `segs` (trailing segments may be items), no shallower than `min`. */
function rustModule(has: Has, srcDir: string, segs: string[], min: number): string | undefined {
  for (let k = segs.length; k >= min; k--) {
    const m = segs.slice(0, k).join('/');
    const candidates = k === 0 ? ['lib.rs', 'main.rs'] : [`${m}.rs`, `${m}/mod.rs`];
    for (const c of candidates) if (has(joinRel(srcDir, c))) return joinRel(srcDir, c);
  }
  return undefined;
}

/** `com.x.Y`, `com.x.Y.Inner`, `static com.x.Y.member` and `com.x.*`, found by directory suffix. */
function resolveJava(layout: ProjectLayout, has: Has, filesInDir: (relDir: string) => string[], spec: string) {
  const segs = spec.replace(/^static\s+/, '').split('.');
  if (segs[segs.length - 1] === '*') {
    const dirs = layout.javaDirs.get(segs.slice(0, -1).join('/')) ?? [];
    return dirs.flatMap((d) => filesInDir(d).filter((f) => f.endsWith('.java'))).sort();
  }
  for (let k = segs.length; k >= 2; k--) {
    const file = `${segs[k - 1]}.java`;
    const found = (layout.javaDirs.get(segs.slice(0, k - 1).join('/')) ?? [])
      .map((d) => `${d}/${file}`)
      .filter(has);
    if (found.length) return found.sort();
  }
  return [];
}

// ---------------------------------------------------------------------------------------------------------
// Paths

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

function joinRel(dir: string, p: string): string {
  if (!dir) return p;
  if (!p) return dir;
  return `${dir}/${p}`;
}

function depth(dir: string): number {
  return dir ? dir.split('/').length : 0;
}

/** Normalised, or undefined when the path leaves the workspace. */
function normalizeInside(p: string): string | undefined {
  const n = path.posix.normalize(p);
  if (n === '..' || n.startsWith('../')) return undefined;
  return n === '.' ? '' : n.replace(/\/$/, '');
}

function isWithin(p: string, dir: string): boolean {
  return dir === '' || p === dir || p.startsWith(`${dir}/`);
}

/** The entry for the directory itself or its nearest ancestor. */
function nearest<T>(byDir: ReadonlyMap<string, T>, dir: string): T | undefined {
  for (let d = dir; ; d = dirOf(d)) {
    const hit = byDir.get(d);
    if (hit !== undefined || d === '') return hit;
  }
}

function toRel(absRoot: string, abs: string): string {
  return path.relative(absRoot, abs).split(path.sep).join('/');
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
