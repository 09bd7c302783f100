/**
 * Which workspace files may be indexed, and reading them safely.
 *
 * Paths are workspace-relative with forward slashes. Nothing here throws for a single bad file: the problem is
 * reported as a SkipReason so the indexer can count and explain what it left out.
 */
import * as fs from 'fs';
import * as path from 'path';
import { setImmediate as yieldNow } from 'timers/promises';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

export type SkipReason =
  | 'secret'
  | 'excluded'
  | 'gitignored'
  | 'too-large'
  | 'binary'
  | 'minified'
  | 'unreadable'
  | 'vanished'
  | 'symlink-loop';

/**
 * Files that commonly hold credentials. Matched case-insensitively against both the basename and the whole
 * relative path, so they never reach a prompt or the on-disk index.
 */
export const DEFAULT_SECRET_GLOBS: string[] = [
  '.env',
  '.env.*',
  '*.env',
  '*.pem',
  '*.key',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '*.ppk',
  '*.p12',
  '*.pfx',
  '*.pkcs12',
  '*.keystore',
  '*.jks',
  '*.kdbx',
  '*.gpg',
  '*.asc',
  'credentials*',
  '*secret*',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.htpasswd',
  '.git-credentials',
  '.dockercfg',
  '.vault-token',
  'service-account*.json',
  '*.tfstate',
  '*.tfstate.*',
  '*.tfvars',
  '*.ovpn',
  '**/.ssh/**',
  '**/.aws/**',
  '**/.gnupg/**',
  '**/.docker/config.json',
  '**/.kube/config',
];

/** Dependencies, VCS data, caches and build outputs: never source the user wrote. `src` is deliberately absent. */
export const DEFAULT_EXCLUDE_GLOBS: string[] = [
  '**/node_modules/**',
  '**/bower_components/**',
  '**/jspm_packages/**',
  '**/.git/**',
  '**/.hg/**',
  '**/.svn/**',
  '**/dist/**',
  '**/out/**',
  '**/build/**',
  '**/coverage/**',
  '**/.nyc_output/**',
  '**/.next/**',
  '**/.nuxt/**',
  '**/.svelte-kit/**',
  '**/.turbo/**',
  '**/.cache/**',
  '**/.parcel-cache/**',
  '**/.vscode-test/**',
  '**/target/**',
  '**/vendor/**',
  '**/__pycache__/**',
  '**/.venv/**',
  '**/venv/**',
  '**/.tox/**',
  '**/.mypy_cache/**',
  '**/.pytest_cache/**',
  '**/.ruff_cache/**',
  '**/.gradle/**',
  '**/.idea/**',
  '**/*.min.js',
  '**/*.min.css',
  '**/*.map',
  '**/package-lock.json',
  '**/yarn.lock',
  '**/pnpm-lock.yaml',
];

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

export interface ScanOptions {
  root: string;
  /** Replaces DEFAULT_EXCLUDE_GLOBS when given (spread the defaults in to extend them). */
  excludeGlobs?: string[];
  /** Added to DEFAULT_SECRET_GLOBS: configuration can widen, never narrow, what counts as a secret. */
  secretGlobs?: string[];
  /** Default 1 MiB. */
  maxFileBytes?: number;
  /** If given, only files with these extensions ('.ts' or 'ts') are indexed. */
  extensions?: string[];
}

export interface ScannedFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** A skipped directory appears once; its contents are not listed. */
export interface SkippedPath {
  path: string;
  reason: SkipReason;
}

export interface ScanResult {
  files: ScannedFile[];
  skipped: SkippedPath[];
}

export type ReadResult = { text: string } | { skip: SkipReason; detail?: string };

/** Decides for one relative path; `invalidate` drops cached .gitignore rules after one of them changed. */
export interface PathFilter {
  (relPath: string): SkipReason | undefined;
  invalidate(): void;
}

type Matcher = (p: string) => boolean;

const secretMatcherCache = new Map<string, Matcher>();

function secretMatcher(extraGlobs: readonly string[] = []): Matcher {
  const key = extraGlobs.join('\0');
  let m = secretMatcherCache.get(key);
  if (!m) {
    const isMatch = picomatch([...DEFAULT_SECRET_GLOBS, ...extraGlobs], { dot: true, nocase: true });
    m = (p) => isMatch(p) || isMatch(baseName(p));
    secretMatcherCache.set(key, m);
  }
  return m;
}

export function isSecretPath(relPath: string, extraGlobs?: string[]): boolean {
  return secretMatcher(extraGlobs)(toRel(relPath));
}

function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function parentDir(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

function joinRel(dir: string, name: string): string {
  return dir ? `${dir}/${name}` : name;
}

/** Backslashes and a leading './' or '/' come from host events on some platforms; the matchers need neither. */
function toRel(p: string): string {
  return p.replace(/\\/g, '/').replace(/^(\.\/|\/)+/, '');
}

function leavesRoot(rel: string): boolean {
  return rel.split('/').includes('..');
}

/** Git on Linux compares case-sensitively; on macOS and Windows file systems it usually does not. */
const GIT_IGNORECASE = process.platform !== 'linux';

/** Exclude globs, extensions and .gitignore rules, shared by the walker and the incremental filter. */
class Rules {
  private readonly absRoot: string;
  private readonly isSecret: Matcher;
  private readonly isExcluded: Matcher;
  private readonly extensions?: Set<string>;
  /** Directory → rules of its .gitignore (null: it has none). Filled lazily or by the walker. */
  private readonly gitignores = new Map<string, Ignore | null>();
  private readonly dirIgnored = new Map<string, boolean>();
  private infoExclude: Ignore | null | undefined;

  constructor(root: string, opts: Omit<ScanOptions, 'root'>) {
    this.absRoot = path.resolve(root);
    this.isSecret = secretMatcher(opts.secretGlobs);
    this.isExcluded = picomatch(opts.excludeGlobs ?? DEFAULT_EXCLUDE_GLOBS, { dot: true });
    if (opts.extensions) {
      this.extensions = new Set(opts.extensions.map((e) => (e.startsWith('.') ? e : `.${e}`).toLowerCase()));
    }
  }

  invalidate(): void {
    this.gitignores.clear();
    this.dirIgnored.clear();
    this.infoExclude = undefined;
  }

  setGitignore(dir: string, content: string | null): void {
    this.gitignores.set(dir, content === null ? null : ignore({ ignorecase: GIT_IGNORECASE }).add(content));
  }

  setInfoExclude(content: string | null): void {
    this.infoExclude = content === null ? null : ignore({ ignorecase: GIT_IGNORECASE }).add(content);
  }

  /** The reason a file is never indexed, before looking at its size or contents. */
  fileReason(rel: string, realPath?: string): SkipReason | undefined {
    if (this.isSecret(rel) || (realPath !== undefined && this.isSecret(toRel(realPath)))) return 'secret';
    if (this.isExcludedPath(rel)) return 'excluded';
    if (this.extensions && !this.extensions.has(path.posix.extname(rel).toLowerCase())) return 'excluded';
    if (this.isDirIgnored(parentDir(rel)) || this.matchesGitignore(rel, false)) return 'gitignored';
    return undefined;
  }

  /** Whether the walker should not descend into a directory at all. */
  dirReason(rel: string): SkipReason | undefined {
    if (this.isExcludedPath(rel)) return 'excluded';
    if (this.isDirIgnored(rel)) return 'gitignored';
    return undefined;
  }

  private isExcludedPath(rel: string): boolean {
    // VCS internals are never source, whatever the configured globs say.
    return rel === '.git' || rel.startsWith('.git/') || rel.includes('/.git/') || rel.endsWith('/.git') ||
      this.isExcluded(rel);
  }

  /** Git cannot re-include anything below an ignored directory, so ancestors are checked first. */
  private isDirIgnored(dir: string): boolean {
    if (dir === '') return false;
    let ignored = this.dirIgnored.get(dir);
    if (ignored === undefined) {
      ignored = this.isDirIgnored(parentDir(dir)) || this.matchesGitignore(dir, true);
      this.dirIgnored.set(dir, ignored);
    }
    return ignored;
  }

  /** The deepest .gitignore with a matching rule decides; .git/info/exclude has the lowest precedence. */
  private matchesGitignore(rel: string, isDir: boolean): boolean {
    let dir = rel;
    do {
      dir = parentDir(dir);
      const ig = this.gitignoreOf(dir);
      if (ig) {
        const sub = dir ? rel.slice(dir.length + 1) : rel;
        const r = ig.test(isDir ? `${sub}/` : sub);
        if (r.ignored) return true;
        if (r.unignored) return false;
      }
    } while (dir !== '');
    if (this.infoExclude === undefined) {
      this.setInfoExclude(readTextSync(path.join(this.absRoot, '.git', 'info', 'exclude')));
    }
    return this.infoExclude ? this.infoExclude.ignores(isDir ? `${rel}/` : rel) : false;
  }

  /** Synchronous but cached: each directory's .gitignore is read at most once until invalidated. */
  private gitignoreOf(dir: string): Ignore | null {
    let ig = this.gitignores.get(dir);
    if (ig === undefined) {
      this.setGitignore(dir, readTextSync(path.join(this.absRoot, dir, '.gitignore')));
      ig = this.gitignores.get(dir) ?? null;
    }
    return ig;
  }
}

function readTextSync(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

async function readTextAsync(file: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * For incremental file events: cheap after the first call in a directory (rules and results are cached).
 * Size and content checks are left to readSourceFile.
 */
export function createPathFilter(root: string, opts: Omit<ScanOptions, 'root'> = {}): PathFilter {
  const rules = new Rules(root, opts);
  const filter = (relPath: string) => {
    const rel = toRel(relPath);
    return rel === '' || leavesRoot(rel) ? 'excluded' : rules.fileReason(rel);
  };
  return Object.assign(filter, { invalidate: () => rules.invalidate() });
}

interface Candidate extends ScannedFile {
  real: string;
  viaLink: boolean;
}

const STAT_BATCH = 32;
const YIELD_EVERY_MS = 8;

/**
 * Lists indexable files. Symlinked directories are walked after all real ones, so a file reachable both ways
 * is listed under its real path; a directory whose real path was already walked (or that contains the
 * workspace) is skipped as 'symlink-loop', as is a second path to an already listed file.
 */
export async function scanWorkspace(opts: ScanOptions): Promise<ScanResult> {
  const absRoot = path.resolve(opts.root);
  const maxBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const rules = new Rules(absRoot, opts);
  const rootReal = await fs.promises.realpath(absRoot);
  const candidates: Candidate[] = [];
  const skipped: SkippedPath[] = [];
  const visited = new Set<string>();
  const deferred: { rel: string; real: string }[] = [];
  let lastYield = Date.now();

  const maybeYield = async () => {
    if (Date.now() - lastYield >= YIELD_EVERY_MS) {
      await yieldNow();
      lastYield = Date.now();
    }
  };

  const statFile = async (rel: string, real: string, viaLink: boolean) => {
    try {
      const st = await fs.promises.stat(path.join(absRoot, rel));
      if (!st.isFile()) return;
      if (st.size > maxBytes) skipped.push({ path: rel, reason: 'too-large' });
      else candidates.push({ path: rel, size: st.size, mtimeMs: st.mtimeMs, real, viaLink });
    } catch (e) {
      skipped.push({ path: rel, reason: errorReason(e) });
    }
  };

  const walk = async (rel: string, real: string, viaLink: boolean): Promise<void> => {
    if (visited.has(real)) {
      skipped.push({ path: rel, reason: 'symlink-loop' });
      return;
    }
    visited.add(real);
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(path.join(absRoot, rel), { withFileTypes: true });
    } catch (e) {
      if (rel === '') throw e;
      skipped.push({ path: rel, reason: errorReason(e) });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const gitignore = entries.find((e) => e.name === '.gitignore' && !e.isDirectory());
    rules.setGitignore(rel, gitignore ? await readTextAsync(path.join(absRoot, rel, '.gitignore')) : null);

    const files: { rel: string; real: string; viaLink: boolean }[] = [];
    const subdirs: { rel: string; real: string }[] = [];
    for (const [i, entry] of entries.entries()) {
      if (i % 256 === 255) await maybeYield();
      const childRel = joinRel(rel, entry.name);
      const childReal = path.join(real, entry.name);
      if (entry.isDirectory()) {
        const reason = rules.dirReason(childRel);
        if (reason) skipped.push({ path: childRel, reason });
        else subdirs.push({ rel: childRel, real: childReal });
      } else if (entry.isFile()) {
        // Below a symlinked directory the target's own path can reveal a secret (a link to ~/.ssh).
        const reason = rules.fileReason(childRel, viaLink ? childReal : undefined);
        if (reason) skipped.push({ path: childRel, reason });
        else files.push({ rel: childRel, real: childReal, viaLink });
      } else if (entry.isSymbolicLink()) {
        await followLink(childRel, files);
      }
    }
    for (let i = 0; i < files.length; i += STAT_BATCH) {
      await Promise.all(files.slice(i, i + STAT_BATCH).map((f) => statFile(f.rel, f.real, f.viaLink)));
      await maybeYield();
    }
    for (const d of subdirs) {
      await walk(d.rel, d.real, viaLink);
      await maybeYield();
    }
  };

  const followLink = async (rel: string, files: { rel: string; real: string; viaLink: boolean }[]) => {
    let real: string;
    let isDir: boolean;
    try {
      real = await fs.promises.realpath(path.join(absRoot, rel));
      isDir = (await fs.promises.stat(real)).isDirectory();
    } catch (e) {
      skipped.push({ path: rel, reason: errorReason(e) });
      return;
    }
    if (isDir) {
      const reason = containsPath(real, rootReal) ? 'symlink-loop' : rules.dirReason(rel);
      if (reason) skipped.push({ path: rel, reason });
      else deferred.push({ rel, real });
    } else {
      const reason = rules.fileReason(rel, real);
      if (reason) skipped.push({ path: rel, reason });
      else files.push({ rel, real, viaLink: true });
    }
  };

  rules.setInfoExclude(await readTextAsync(path.join(absRoot, '.git', 'info', 'exclude')));
  await walk('', rootReal, false);
  for (let d = deferred.shift(); d; d = deferred.shift()) await walk(d.rel, d.real, true);

  const files = dedupeByRealPath(candidates, skipped);
  files.sort((a, b) => compareStrings(a.path, b.path));
  skipped.sort((a, b) => compareStrings(a.path, b.path));
  return { files, skipped };
}

/** One listing per real file: a path without symlinks wins, then the first path in sort order. */
function dedupeByRealPath(candidates: Candidate[], skipped: SkippedPath[]): ScannedFile[] {
  const best = new Map<string, Candidate>();
  for (const c of candidates) {
    const prev = best.get(c.real);
    if (!prev) {
      best.set(c.real, c);
      continue;
    }
    const better = prev.viaLink !== c.viaLink ? !c.viaLink : compareStrings(c.path, prev.path) < 0;
    skipped.push({ path: better ? prev.path : c.path, reason: 'symlink-loop' });
    if (better) best.set(c.real, c);
  }
  return [...best.values()].map(({ path: p, size, mtimeMs }) => ({ path: p, size, mtimeMs }));
}

/** Following a link to the workspace or one of its ancestors would walk the workspace again. */
function containsPath(dir: string, inner: string): boolean {
  const r = path.relative(dir, inner);
  return r === '' || (!path.isAbsolute(r) && r !== '..' && !r.startsWith(`..${path.sep}`));
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function errorReason(e: unknown): SkipReason {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'vanished';
  if (code === 'ELOOP') return 'symlink-loop';
  return 'unreadable';
}

/** Never throws: every failure becomes a SkipReason. */
export async function readSourceFile(
  root: string,
  relPath: string,
  maxFileBytes: number = DEFAULT_MAX_FILE_BYTES,
): Promise<ReadResult> {
  const rel = toRel(relPath);
  if (leavesRoot(rel)) return { skip: 'excluded', detail: 'path leaves the workspace' };
  let handle: fs.promises.FileHandle;
  try {
    // Non-blocking so that opening a FIFO cannot hang the indexer; it is a no-op for regular files.
    handle = await fs.promises.open(path.join(root, rel), fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return { skip: errorReason(e), detail: (e as NodeJS.ErrnoException).code };
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { skip: 'unreadable', detail: 'not a regular file' };
    if (st.size > maxFileBytes) return { skip: 'too-large', detail: `${st.size} bytes` };
    const buf = await handle.readFile();
    // The file may have grown since stat.
    if (buf.length > maxFileBytes) return { skip: 'too-large', detail: `${buf.length} bytes` };
    return decodeSource(buf);
  } catch (e) {
    return { skip: errorReason(e), detail: (e as NodeJS.ErrnoException).code };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

const SNIFF_BYTES = 8192;
/** Above this share of control bytes or undecodable characters a file is data, not text. */
const MAX_BAD_SHARE = 0.1;
const MINIFIED_MIN_CHARS = 1024;
const MINIFIED_AVG_LINE = 300;
const MINIFIED_LONG_LINE = 5000;
const MINIFIED_FEW_LINES = 50;

/**
 * Bytes → indexable text. A UTF-8 BOM is dropped, line endings are kept, and a few invalid UTF-8 sequences
 * (a Latin-1 comment) become U+FFFD rather than costing the whole file.
 */
export function decodeSource(buf: Uint8Array): ReadResult {
  const sniff = buf.subarray(0, SNIFF_BYTES);
  if (sniff.includes(0)) return { skip: 'binary', detail: 'NUL byte' };
  let control = 0;
  for (const b of sniff) {
    // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs and snapshots) occur in text.
    if ((b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) || b === 0x7f) control++;
  }
  if (control > sniff.length * MAX_BAD_SHARE) return { skip: 'binary', detail: 'control characters' };

  const text = new TextDecoder('utf-8').decode(buf);
  let replaced = 0;
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) replaced++;
  if (replaced > text.length * MAX_BAD_SHARE) return { skip: 'binary', detail: 'invalid UTF-8' };

  if (text.length >= MINIFIED_MIN_CHARS) {
    let lines = 0;
    let longest = 0;
    for (let start = 0; start <= text.length; lines++) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      longest = Math.max(longest, end - start);
      start = end + 1;
    }
    if (text.length / lines > MINIFIED_AVG_LINE) return { skip: 'minified', detail: 'long average line' };
    if (longest > MINIFIED_LONG_LINE && lines <= MINIFIED_FEW_LINES) return { skip: 'minified', detail: 'long line' };
  }
  return { text };
}
