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
    entries.sort((a, b) => comparePaths(a.name, b.name));
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
  files.sort((a, b) => comparePaths(a.path, b.path));
  skipped.sort((a, b) => comparePaths(a.path, b.path));
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
