/**
 * The walker: lists the workspace's indexable files, following symbolic links once, without blocking the thread
 * for long. Nothing here throws for a single bad file: the problem is reported as a SkipReason.
 */
import * as fs from 'fs';
import * as path from 'path';
import { setImmediate as yieldNow } from 'timers/promises';
import { Rules, type RuleOptions } from './ignoreRules';
import { DEFAULT_MAX_FILE_BYTES } from './readSource';
import { comparePaths, joinRel } from './relPath';
import { errorReason, type SkipReason } from './skipReason';

export interface ScanOptions extends RuleOptions {
  root: string;
  /** Default 1 MiB. */
  maxFileBytes?: number;
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

const STAT_BATCH = 32;
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

interface Listed {
  rel: string;
  real: string;
  viaLink: boolean;
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

  private async statFile({ rel, real, viaLink }: Listed): Promise<void> {
    try {
      const st = await fs.promises.stat(path.join(this.absRoot, rel));
      if (!st.isFile()) return;
      if (st.size > this.maxBytes) this.skipped.push({ path: rel, reason: 'too-large' });
      else this.candidates.push({ path: rel, size: st.size, mtimeMs: st.mtimeMs, real, viaLink });
    } catch (e) {
      this.skipped.push({ path: rel, reason: errorReason(e) });
    }
  }

  async walk(rel: string, real: string, viaLink: boolean): Promise<void> {
    if (this.visited.has(real)) {
      this.skipped.push({ path: rel, reason: 'symlink-loop' });
      return;
    }
    this.visited.add(real);
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(path.join(this.absRoot, rel), { withFileTypes: true });
    } catch (e) {
      if (rel === '') throw e;
      this.skipped.push({ path: rel, reason: errorReason(e) });
      return;
    }
    entries.sort((a, b) => comparePaths(a.name, b.name));
    const gitignore = entries.find((e) => e.name === '.gitignore' && !e.isDirectory());
    this.rules.setGitignore(rel, gitignore ? await readTextAsync(path.join(this.absRoot, rel, '.gitignore')) : null);

    const { files, subdirs } = await this.sortEntries(rel, real, viaLink, entries);
    for (let i = 0; i < files.length; i += STAT_BATCH) {
      await Promise.all(files.slice(i, i + STAT_BATCH).map((f) => this.statFile(f)));
      await this.maybeYield();
    }
    for (const d of subdirs) {
      await this.walk(d.rel, d.real, viaLink);
      await this.maybeYield();
    }
  }

  /** A directory's entries: the files to list and the subdirectories to walk; the rest is skipped with its reason. */
  private async sortEntries(
    rel: string,
    real: string,
    viaLink: boolean,
    entries: fs.Dirent[],
  ): Promise<{ files: Listed[]; subdirs: { rel: string; real: string }[] }> {
    const files: Listed[] = [];
    const subdirs: { rel: string; real: string }[] = [];
    for (const [i, entry] of entries.entries()) {
      if (i % ENTRIES_PER_CLOCK_READ === ENTRIES_PER_CLOCK_READ - 1) await this.maybeYield();
      const childRel = joinRel(rel, entry.name);
      const childReal = path.join(real, entry.name);
      if (entry.isDirectory()) {
        const reason = this.rules.dirReason(childRel);
        if (reason) this.skipped.push({ path: childRel, reason });
        else subdirs.push({ rel: childRel, real: childReal });
      } else if (entry.isFile()) {
        // Below a symlinked directory the target's own path can reveal a secret (a link to ~/.ssh).
        const reason = this.rules.fileReason(childRel, viaLink ? childReal : undefined);
        if (reason) this.skipped.push({ path: childRel, reason });
        else files.push({ rel: childRel, real: childReal, viaLink });
      } else if (entry.isSymbolicLink()) {
        await this.followLink(childRel, files);
      }
    }
    return { files, subdirs };
  }

  private async followLink(rel: string, files: Listed[]): Promise<void> {
    let real: string;
    let isDir: boolean;
    try {
      real = await fs.promises.realpath(path.join(this.absRoot, rel));
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
      else files.push({ rel, real, viaLink: true });
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
