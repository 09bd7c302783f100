import * as path from 'path';
import { cachedRecords, loadIndex, loadSharedIndex, saveIndex, type LoadResult } from './persist';
import { RepoIndex, type FileRecord } from './repoIndex';
import { createPathFilter, type PathFilter } from './ignoreRules';
import { DEFAULT_MAX_FILE_BYTES } from './readSource';
import { checkText, decodeSource } from './decode';
import { dirOf } from './relPath';
import { WorkspaceRoots, type IndexRoot } from './roots';
import { scanWorkspace, type ScanOptions, type ScannedFile, type SkippedPath } from './scan';
import { errorReason, type SkipReason } from './skipReason';
import { INDEXED_EXTENSIONS, languageForPath } from './languages';
import { ParseThread } from './parseThread';
import { SourceLines } from './sourceLines';
import type { ReadResult } from './decode';
import type { FileFacts } from './types';
import type { SourceParser } from './parser';

/** Scanning every folder of `root` with the same rules, each against its own .gitignore files. */
export interface IndexOptions extends Omit<ScanOptions, 'root'> {
  root: IndexRoot;
}

export interface BuildOptions extends IndexOptions {
  /** Where the persisted index lives; none means no persistence. */
  cacheDir?: string;
  /**
   * A shared cache file (`saveSharedIndex`, `repogate build-cache`) to warm-start from when `cacheDir` holds no usable
   * cache: each file is then read and only one whose content differs from the cached one is parsed.
   */
  sharedCache?: string;
  /** Ignore any persisted index and parse every file. */
  fresh?: boolean;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  parser?: SourceParser;
}

export interface BuildReport {
  files: number;
  symbols: number;
  chunks: number;
  buildMs: number;
  /** Files parsed in this build (all of them on a cold start, the changed ones on a warm start). */
  parsed: number;
  /** Files read whose content was the cached one (a new mtime, or from a shared cache): not parsed. */
  verified: number;
  removed: number;
  skipped: SkippedPath[];
  cache: LoadResult | { ok: false; reason: 'disabled' };
  /** The shared cache's outcome, when one was given and `cache` was not loaded. */
  sharedCache?: LoadResult;
  saveError?: string;
}

/** Gives pending I/O and concurrent queries a turn; a bulk index must never hold the thread for long. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A shared cache of which fewer of the files lie at this workspace's paths is of another repository (or of another
 * folder of it): the same repository months later still has most of its paths, another one only a few common names.
 */
const MIN_SHARED_OVERLAP = 0.5;

/**
 * Scans the workspace and brings `index` up to date: loads the persisted cache when it is valid (else the shared
 * one, if given), then parses only files that are new or changed since (by size and mtime, then by content hash),
 * and drops files that are gone. Saves the cache afterwards when anything changed.
 */
export async function buildIndex(index: RepoIndex, options: BuildOptions): Promise<BuildReport> {
  const started = performance.now();
  // An index that already holds files (a folder added) or a fresh build loads no cache.
  const loads = !options.fresh && index.files.size === 0;
  const roots = new WorkspaceRoots(options.root);
  // A large cache's load keeps this thread busy: a thread of its own walks meanwhile, and ends with the walk (M14).
  // A shared cache's records have other mtimes than every file here: that thread also reads and hashes them (M17).
  const cached = loads ? await cachedRecords(options.cacheDir, options.sharedCache) : undefined;
  const walker = cached && cached.records >= THREAD_WALK_MIN_FILES ? new ParseThread() : undefined;
  const scanning = scanFolders(roots, options, walker, cached?.shared).finally(() => walker?.close());
  scanning.catch(() => undefined);
  const cache: BuildReport['cache'] =
    options.cacheDir && loads ? await loadIndex(index, options.cacheDir) : { ok: false, reason: 'disabled' };
  let sharedCache =
    options.sharedCache && loads && !cache.ok ? await loadSharedIndex(index, options.sharedCache) : undefined;
  // Records as the build found them: one replaced meanwhile came from the editor (a newer buffer) and is kept.
  const seen = new Map(index.files);
  const scan = await scanning;
  const skipped = scan.skipped;
  const present = new Set(scan.files.map((f) => f.path));
  if (sharedCache?.ok) {
    const cached = seen.size;
    const here = [...seen.keys()].filter((key) => present.has(key)).length;
    if (here < cached * MIN_SHARED_OVERLAP) {
      sharedCache = {
        ok: false,
        reason: `of another repository: ${here} of its ${cached} files lie at this workspace's paths`,
      };
      forget(index, seen);
    }
  }
  let removed = 0;
  for (const filePath of [...index.files.keys()]) {
    if (!present.has(filePath) && index.remove(filePath)) removed++;
  }
  index.skipped.keepOnly(present);
  const stale = scan.files.filter((f) => {
    const known = index.files.get(f.path);
    if (known) return known.mtimeMs !== f.mtimeMs || known.size !== f.size;
    // Left out before for what it holds, and not touched since: left out again unread (M19).
    const reason = index.skipped.reasonFor(f.path, f);
    if (reason) skipped.push({ path: f.path, reason });
    return !reason;
  });
  let remembered = 0;
  let parsed = 0;
  let verified = 0;
  let lastYield = performance.now();
  const thread = stale.length >= PARSE_THREAD_MIN_FILES ? new ParseThread() : undefined;
  try {
    const reads = new ReadAhead(stale, (file) => readAndParse(index, roots, file, options.maxFileBytes, thread));
    for (let i = 0; i < stale.length; i++) {
      options.signal?.throwIfAborted();
      const file = stale[i];
      options.onProgress?.(i + 1, stale.length);
      const pending = reads.take(i);
      if (index.files.get(file.path) !== seen.get(file.path)) continue;
      const read = await pending;
      if ('skip' in read) {
        skipped.push({ path: file.path, reason: read.skip });
        index.remove(file.path);
        if (index.skipped.remember(file.path, file, read.skip)) remembered++;
      } else if ('unchanged' in read) {
        index.confirm(file.path, read.unchanged, file);
        verified++;
      } else if (await index.update(file.path, read.text, file, false, { hash: read.hash, facts: await read.facts })) {
        parsed++;
      } else {
        verified++;
      }
      if (performance.now() - lastYield > 10) {
        await yieldToEventLoop();
        lastYield = performance.now();
      }
    }
  } finally {
    await thread?.close();
  }
  index.trimTables();
  await index.reloadLayout();
  let saveError: string | undefined;
  // Verified files got their new mtimes: saved, the next start trusts them without reading.
  if (options.cacheDir && (parsed > 0 || verified > 0 || removed > 0 || remembered > 0 || !cache.ok)) {
    try {
      await saveIndex(index, options.cacheDir);
    } catch (error) {
      // A full disk or a read-only cache folder costs the warm start, never the index.
      saveError = (error as Error).message;
    }
  }
  const buildMs = performance.now() - started;
  return { ...index.stats(), buildMs, parsed, verified, removed, skipped, cache, sharedCache, saveError };
}

/**
 * Cached files from which the parser thread walks the workspace while the cache loads: below, the walk on this
 * thread (about 0.06 ms a file) costs less than starting the thread (about 0.1 s).
 */
const THREAD_WALK_MIN_FILES = 5000;

/**
 * Below this many files to parse a build parses them itself: starting the parser thread and loading its grammars
 * costs about what parsing a hundred files does.
 */
const PARSE_THREAD_MIN_FILES = 200;

/** A file's text (with its facts on the way), or the hash of the indexed content it still has. */
type ParsedRead = (ReadResult & { hash?: string; facts?: Promise<FileFacts | undefined> }) | { unchanged: string };

/**
 * A file's text, and its facts on the way from the parser thread when it is new or changed: a file whose bytes are
 * the indexed ones (a new mtime, a shared cache) is neither decoded nor parsed, nor read when the walk hashed it.
 */
async function readAndParse(
  index: RepoIndex,
  roots: WorkspaceRoots,
  file: ScannedFile,
  maxFileBytes: number | undefined,
  thread: ParseThread | undefined,
): Promise<ParsedRead> {
  const known = index.files.get(file.path)?.hash;
  if (known !== undefined && file.hash === known) return { unchanged: known };
  const bytes = roots.readBytes(file.path, maxFileBytes);
  if ('skip' in bytes) return bytes;
  // Hashed as bytes first: a shared cache's start verifies every file, and decoding each was most of its garbage.
  if (known !== undefined && SourceLines.hash(bytes.bytes) === known) return { unchanged: known };
  const read = decodeSource(bytes.bytes);
  if (!thread?.alive || 'skip' in read || !languageForPath(file.path)?.wasm) return read;
  const hash = SourceLines.hash(read.text);
  if (known === hash) return { ...read, hash };
  return { ...read, hash, facts: thread.facts(file.path, read.text) };
}

/** Files read while earlier ones are parsed: the build waited on each read in turn (a tenth of a cold build). */
const READ_AHEAD = 8;

/** Reads of `items` kept `READ_AHEAD` ahead of the one taken. */
class ReadAhead<T, R> {
  private readonly pending = new Map<number, Promise<R>>();

  constructor(
    private readonly items: readonly T[],
    private readonly read: (item: T) => Promise<R>,
  ) {}

  take(at: number): Promise<R> {
    for (let i = at; i < Math.min(this.items.length, at + READ_AHEAD + 1); i++) {
      if (this.pending.has(i)) continue;
      const read = this.read(this.items[i]);
      // A read left behind by a cancelled build or a skipped file is never awaited.
      read.catch(() => undefined);
      this.pending.set(i, read);
    }
    const read = this.pending.get(at)!;
    this.pending.delete(at);
    return read;
  }
}

/** Drops the records loaded from a cache that the editor has not replaced since (`seen`): they are parsed anew. */
function forget(index: RepoIndex, seen: Map<string, FileRecord>): void {
  for (const [key, record] of seen) {
    if (index.files.get(key) === record) index.remove(key);
    seen.delete(key);
  }
}

/**
 * Scans each folder by its own rules, its files and skipped paths keyed as the index keys them. A file of a folder
 * nested in another is the inner folder's only, as the editor's events name it; in a multi-root workspace a folder
 * that cannot be read is skipped, the others indexed. `hash`: a thread's walk also hashes each file (`hashWalked`).
 */
async function scanFolders(
  roots: WorkspaceRoots,
  options: IndexOptions,
  thread?: ParseThread,
  hash = false,
): Promise<{ files: ScannedFile[]; skipped: SkippedPath[] }> {
  const files: ScannedFile[] = [];
  const skipped: SkippedPath[] = [];
  for (const folder of roots.folders) {
    let scan;
    try {
      const scanOptions = folderScanOptions(options, folder.path);
      scan = (await thread?.scan(scanOptions, hash)) ?? (await scanWorkspace(scanOptions));
    } catch (error) {
      if (!roots.multiple) throw error;
      skipped.push({ path: roots.key(folder, ''), reason: errorReason(error) });
      continue;
    }
    for (const file of scan.files) {
      const key = roots.key(folder, file.path);
      if (!roots.multiple || roots.keyOf(path.join(folder.path, file.path)) === key) files.push({ ...file, path: key });
    }
    for (const skip of scan.skipped) skipped.push({ ...skip, path: roots.key(folder, skip.path) });
  }
  return { files, skipped };
}

/** Every scan option, by name (a new one fails to compile here): the parser thread gets only what can be posted. */
function folderScanOptions(options: IndexOptions, root: string): ScanOptions {
  const picked: { [K in keyof Required<ScanOptions>]: ScanOptions[K] } = {
    root,
    maxFileBytes: options.maxFileBytes,
    excludeGlobs: options.excludeGlobs,
    secretGlobs: options.secretGlobs,
    extensions: options.extensions ?? INDEXED_EXTENSIONS,
  };
  return picked;
}

/** Each folder's own filter (rules, .gitignore files) on the path within it; a key in no folder is excluded. */
function keyFilter(roots: WorkspaceRoots, options: IndexOptions): PathFilter {
  const filters = new Map(roots.folders.map((folder) => [folder, createPathFilter(folder.path, options)]));
  const judge =
    (how: (filter: PathFilter, rel: string) => SkipReason | undefined) =>
    (key: string): SkipReason | undefined => {
      const at = roots.locate(key);
      const filter = at && filters.get(at.folder);
      return filter ? how(filter, at.rel) : 'excluded';
    };
  return Object.assign(
    judge((filter, rel) => filter(rel)),
    {
      dir: judge((filter, rel) => filter.dir(rel)),
      invalidate: () => filters.forEach((filter) => filter.invalidate()),
    },
  );
}

/** The configuration files the project layout is read from (projectLayout.ts): a change to one reloads it. */
const LAYOUT_FILE = /(^|\/)(package\.json|go\.mod|Cargo\.toml|setup\.py|pyproject\.toml|[tj]sconfig(\.[^/]+)?\.json)$/;

/** Keeps one file of a built index current after an editor change or a file event. */
export class FileRefresher {
  private readonly roots: WorkspaceRoots;
  private readonly filter: PathFilter;
  /** The layout reload in progress, and whether a configuration file changed since it began. */
  private reloading: Promise<void> | undefined;
  private layoutStale = false;

  constructor(
    private readonly index: RepoIndex,
    private readonly options: IndexOptions,
  ) {
    this.roots = new WorkspaceRoots(options.root);
    this.filter = keyFilter(this.roots, { extensions: INDEXED_EXTENSIONS, ...options });
  }

  /**
   * Indexes the file's new content — the editor's text when given, else the disk's — or drops it when it
   * may not be indexed (a secret, ignored, too large, binary, minified) or is gone, by the same checks for
   * either. Returns what happened.
   */
  async refresh(relPath: string, text?: string): Promise<'updated' | 'unchanged' | SkipReason> {
    if (relPath.endsWith('.gitignore')) this.filter.invalidate();
    await this.layoutFileChanged(relPath);
    const skip = this.filter(relPath);
    if (skip) {
      this.index.remove(relPath);
      return skip;
    }
    const maxBytes = this.options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    const read =
      text === undefined
        ? await this.roots.read(relPath, maxBytes)
        : text.length > maxBytes
          ? { skip: 'too-large' as const }
          : checkText(text);
    if ('skip' in read) {
      this.index.remove(relPath);
      return read.skip;
    }
    return (await this.index.update(relPath, read.text)) ? 'updated' : 'unchanged';
  }

  /** Drops a deleted file; a deleted configuration file changes the layout as an edited one does. */
  async remove(relPath: string): Promise<boolean> {
    await this.layoutFileChanged(relPath);
    return this.index.remove(relPath);
  }

  private async layoutFileChanged(relPath: string): Promise<void> {
    // Configuration in an excluded folder (node_modules, build output) governs no indexed file.
    if (LAYOUT_FILE.test(relPath) && !this.filter.dir(dirOf(relPath))) await this.reloadLayout();
  }

  /**
   * Re-reads the project layout. A burst of changes (a checkout, a dependency bump) costs one reload in progress and
   * at most one more after it, which sees all of them.
   */
  private reloadLayout(): Promise<void> {
    this.layoutStale = true;
    this.reloading ??= (async () => {
      while (this.layoutStale) {
        this.layoutStale = false;
        await this.index.reloadLayout();
      }
    })().finally(() => {
      this.reloading = undefined;
      // A change that came after the loop's last look, before this callback.
      if (this.layoutStale) void this.reloadLayout();
    });
    return this.reloading;
  }

  async rename(from: string, to: string): Promise<'updated' | 'unchanged' | SkipReason> {
    await this.layoutFileChanged(from);
    if (this.filter(to) || !this.index.rename(from, to)) {
      this.index.remove(from);
      return this.refresh(to);
    }
    return 'updated';
  }
}
