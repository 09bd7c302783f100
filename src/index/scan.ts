/**
 * The walker: lists the workspace's indexable files, following symbolic links once, without blocking the thread
 * for long. Nothing here throws for a single bad file: the problem is reported as a SkipReason.
 */
import * as fs from 'fs';
import * as path from 'path';
import { setImmediate as yieldNow } from 'timers/promises';
import { Rules, type RuleOptions } from './ignoreRules';
import { DEFAULT_MAX_FILE_BYTES, readSourceBytes } from './readSource';
import { comparePaths, joinRel } from './relPath';
import { errorReason, type SkipReason } from './skipReason';
import { SourceLines } from './sourceLines';

export interface ScanOptions extends RuleOptions {
  root: string;
  /** Default 1 MiB. */
  maxFileBytes?: number;
}

export interface ScannedFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** Its bytes' content hash, when the walk was asked to read them (`hashWalked`); none when unreadable. */
  hash?: string;
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

async function readTextAsync(file: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch {
    return null;
  }
}

interface Candidate extends ScannedFile {
  real: string;
  viaLink: boolean;
}

/** Stats in flight at once: keeps libuv's 4 threads busy on a slow disk, yet bounds the wait between yields. */
const STAT_BATCH = 32;
/** Subdirectory listings read ahead of the walk: one readdir at a time paid a thread hand-off for each directory. */
const READ_AHEAD = 8;
/** The longest the walk holds the thread before letting other work run (an extension host shares it). */
const YIELD_EVERY_MS = 8;
/** Directory entries sorted between two looks at the clock: a look per entry would cost more than the sorting. */
const ENTRIES_PER_CLOCK_READ = 256;

/**
 * Lists indexable files. Symlinked directories are walked after all real ones, so a file reachable both ways
 * is listed under its real path; a directory whose real path was already walked (or that contains the
 * workspace) is skipped as 'symlink-loop', as is a second path to an already listed file.
 */
export async function scanWorkspace(opts: ScanOptions): Promise<ScanResult> {
  const absRoot = path.resolve(opts.root);
  const rules = new Rules(absRoot, opts);
  const walker = new Walker(absRoot, await fs.promises.realpath(absRoot), rules, opts.maxFileBytes);
  rules.setInfoExclude(await readTextAsync(path.join(absRoot, '.git', 'info', 'exclude')));
  await walker.walk('', walker.rootReal, false);
  for (let d = walker.deferred.shift(); d; d = walker.deferred.shift()) await walker.walk(d.rel, d.real, true);

  const { candidates, skipped } = walker;
  const files = dedupeByRealPath(candidates, skipped);
  files.sort((a, b) => comparePaths(a.path, b.path));
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { files, skipped };
}

/**
 * `scan`'s files each with the hash of its bytes as `readSourceBytes` reads them, read after the walk's stat: a
 * start from a shared cache then compares hashes instead of reading every file once its load is done (M17).
 */
export function hashWalked(opts: ScanOptions, scan: ScanResult): ScanResult {
  const root = path.resolve(opts.root);
  for (const file of scan.files) {
    const read = readSourceBytes(root, file.path, opts.maxFileBytes);
    if ('bytes' in read) file.hash = SourceLines.hash(read.bytes);
  }
  return scan;
}

type Listing = fs.Dirent[] | NodeJS.ErrnoException;

/** Never rejects: a listing read ahead for a directory that is then not walked (a loop) must not reject unheard. */
function listDir(abs: string): Promise<Listing> {
  return new Promise((resolve) => fs.readdir(abs, { withFileTypes: true }, (err, entries) => resolve(err ?? entries)));
}

interface Subdir {
  rel: string;
  real: string;
  listing?: Promise<Listing>;
}

interface Listed {
  rel: string;
  /** Absolute path to stat. */
  abs: string;
  real: string;
  viaLink: boolean;
}

/**
 * `path.join(dir, name)` for a normalised absolute `dir` and a name from readdir (no separators, never `.` or
 * `..`): the same string without normalising it again, which path.join did for every entry.
 */
function childPath(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name;
}

/** One scan's walk: what it has listed, skipped and visited, and the symlinked directories left for later. */
class Walker {
  readonly candidates: Candidate[] = [];
  readonly skipped: SkippedPath[] = [];
  readonly deferred: { rel: string; real: string }[] = [];
  private readonly visited = new Set<string>();
  private lastYield = Date.now();

  constructor(
    private readonly absRoot: string,
    readonly rootReal: string,
    private readonly rules: Rules,
    private readonly maxBytes = DEFAULT_MAX_FILE_BYTES,
  ) {}

  private async maybeYield(): Promise<void> {
    if (Date.now() - this.lastYield >= YIELD_EVERY_MS) {
      await yieldNow();
      this.lastYield = Date.now();
    }
  }

  /**
   * Stats a batch with fs.stat's callback form: fs.promises.stat and an async call per file took about twice the
   * CPU. Results are taken in list order, not completion order.
   */
  private statBatch(batch: Listed[]): Promise<void> {
    return new Promise((resolve) => {
      const results: (fs.Stats | NodeJS.ErrnoException)[] = new Array(batch.length);
      let left = batch.length;
      batch.forEach((f, i) =>
        fs.stat(f.abs, (err, st) => {
          results[i] = err ?? st;
          if (--left > 0) return;
          results.forEach((r, j) => this.listFile(batch[j], r));
          resolve();
        }),
      );
    });
  }

  private listFile({ rel, real, viaLink }: Listed, st: fs.Stats | NodeJS.ErrnoException): void {
    if (!(st instanceof fs.Stats)) this.skipped.push({ path: rel, reason: errorReason(st) });
    else if (!st.isFile()) return;
    else if (st.size > this.maxBytes) this.skipped.push({ path: rel, reason: 'too-large' });
    else this.candidates.push({ path: rel, size: st.size, mtimeMs: st.mtimeMs, real, viaLink });
  }

  async walk(rel: string, real: string, viaLink: boolean, listing?: Promise<Listing>): Promise<void> {
    if (this.visited.has(real)) {
      this.skipped.push({ path: rel, reason: 'symlink-loop' });
      return;
    }
    this.visited.add(real);
    const abs = path.join(this.absRoot, rel);
    const entries = await (listing ?? listDir(abs));
    if (!Array.isArray(entries)) {
      if (rel === '') throw entries;
      this.skipped.push({ path: rel, reason: errorReason(entries) });
      return;
    }
    entries.sort((a, b) => comparePaths(a.name, b.name));
    const gitignore = entries.find((e) => e.name === '.gitignore' && !e.isDirectory());
    this.rules.setGitignore(rel, gitignore ? await readTextAsync(childPath(abs, '.gitignore')) : null);

    const { files, subdirs } = await this.sortEntries(rel, abs, real, viaLink, entries);
    for (let i = 0; i < files.length; i += STAT_BATCH) {
      await this.statBatch(files.slice(i, i + STAT_BATCH));
      await this.maybeYield();
    }
    for (let i = 0, next = 0; i < subdirs.length; i++) {
      for (; next < Math.min(subdirs.length, i + READ_AHEAD); next++) {
        subdirs[next].listing = listDir(path.join(this.absRoot, subdirs[next].rel));
      }
      const d = subdirs[i];
      await this.walk(d.rel, d.real, viaLink, d.listing);
      await this.maybeYield();
    }
  }

  /** A directory's entries: the files to list and the subdirectories to walk; the rest is skipped with its reason. */
  private async sortEntries(
    rel: string,
    abs: string,
    real: string,
    viaLink: boolean,
    entries: fs.Dirent[],
  ): Promise<{ files: Listed[]; subdirs: Subdir[] }> {
    const files: Listed[] = [];
    const subdirs: Subdir[] = [];
    for (let i = 0; i < entries.length; i++) {
      if (i % ENTRIES_PER_CLOCK_READ === ENTRIES_PER_CLOCK_READ - 1) await this.maybeYield();
      const entry = entries[i];
      const childRel = joinRel(rel, entry.name);
      const childReal = childPath(real, entry.name);
      if (entry.isDirectory()) {
        const reason = this.rules.dirReason(childRel);
        if (reason) this.skipped.push({ path: childRel, reason });
        else subdirs.push({ rel: childRel, real: childReal });
      } else if (entry.isFile()) {
        // Below a symlinked directory the target's own path can reveal a secret (a link to ~/.ssh).
        const reason = this.rules.fileReason(childRel, viaLink ? childReal : undefined);
        if (reason) this.skipped.push({ path: childRel, reason });
        else files.push({ rel: childRel, abs: childPath(abs, entry.name), real: childReal, viaLink });
      } else if (entry.isSymbolicLink()) {
        await this.followLink(childRel, childPath(abs, entry.name), files);
      }
    }
    return { files, subdirs };
  }

  private async followLink(rel: string, abs: string, files: Listed[]): Promise<void> {
    let real: string;
    let isDir: boolean;
    try {
      real = await fs.promises.realpath(abs);
      isDir = (await fs.promises.stat(real)).isDirectory();
    } catch (e) {
      this.skipped.push({ path: rel, reason: errorReason(e) });
      return;
    }
    if (isDir) {
      const reason = containsPath(real, this.rootReal) ? 'symlink-loop' : this.rules.dirReason(rel);
      if (reason) this.skipped.push({ path: rel, reason });
      else this.deferred.push({ rel, real });
    } else {
      const reason = this.rules.fileReason(rel, real);
      if (reason) this.skipped.push({ path: rel, reason });
      else files.push({ rel, abs, real, viaLink: true });
    }
  }
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
    const better = prev.viaLink !== c.viaLink ? !c.viaLink : comparePaths(c.path, prev.path) < 0;
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
