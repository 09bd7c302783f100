import { createHash, type Hash } from 'crypto';
import { closeSync, openSync, promises as fs, readSync } from 'fs';
import * as path from 'path';
import { withFileSection, type ByteSource } from './byteSource';
import { fileLines } from './fileLines';
import type { PersistedSkip } from './skipMemory';
import type { RepoIndex, TextlessChunk, TextlessRecord } from './repoIndex';
import type { Chunk } from './types';
import { decodeWindowLists } from './windows';

/** Bump whenever FileFacts, chunking, the windows or the lexical tokenizer change: an old cache is then rebuilt. */
export const CACHE_VERSION = 24;
const BODY_FILE = 'index.jsonl';
const META_FILE = 'index.meta.json';
/** The lexical index in its binary form (`RepoIndex.lexicalBinary`), beside the body. */
const LEXICAL_FILE = 'lexical.bin';
/**
 * The chunks' texts, one after another in the body's order: a warm start copies them into the index's texts' file
 * (`ChunkTexts`) whole, never decoding them (they were 60 % of the body, and parsing them half the load).
 */
const TEXTS_FILE = 'texts.bin';
/** Both window stores in their binary form (`RepoIndex.windowsBinary`): a warm start takes them as they are. */
const WINDOWS_FILE = 'windows.bin';
/** Bytes written, or copied, at a time: few calls, and no part of the index held whole. */
const WRITE_BATCH = 1 << 20;

/**
 * A file record as a line of the cache: its chunks without their texts, whose lengths in bytes `textBytes` gives;
 * with its windows and its chunks' (`RepoIndex.persistedWindows`) only when the window stores could not be saved
 * whole (`writeParts`).
 */
type PersistedRecord = TextlessRecord & {
  textBytes: number[];
  windows?: string;
  chunkWindows?: string;
};

interface CacheMeta {
  version: number;
  checksum: string;
  /** `WorkspaceRoots.id`: a cache of other folders, or of the same under other names, keys other files. */
  root: string;
  records: number;
  lexical: Section;
  texts: Section;
  /** 0 bytes when the records changed while they were saved: each record's own windows are then read. */
  windows: Section;
}

/** A binary part of a cache, checked against its length and SHA-256 (hex). */
interface Section {
  bytes: number;
  checksum: string;
}

/** What a shared cache file's first line names it by: any other first line is not a cache. */
const SHARED_FORMAT = 'repogate-shared-index';

/**
 * The first line of a shared cache file (`saveSharedIndex`): no absolute path, only how keys are formed
 * (`WorkspaceRoots.layout`), so that a checkout in any folder can load it.
 */
interface SharedHeader {
  format: typeof SHARED_FORMAT;
  version: number;
  layout: string;
  records: number;
  /** The binary parts, which follow this line in `SHARED_ORDER`, then the body's lines. */
  lexical: Section;
  windows: Section;
  texts: Section;
  /** SHA-256 of the body's lines, in hex: 64 characters whatever the body, so it is written last in place. */
  checksum: string;
}

/** A shared cache file's first line is read alone, never more, to tell a cache from any other file. */
const HEADER_MAX_BYTES = 4096;
/**
 * A shared cache's mtimes are another checkout's: a record gets this one, which no file has, so that the build reads
 * each file and compares its content hash before it trusts the facts.
 */
const UNVERIFIED_MTIME = -1;

export function cacheDirFor(baseDir: string, root: string): string {
  return path.join(baseDir, createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 16));
}

/** Writes strings and bytes to a file in batches of about `WRITE_BATCH` bytes, hashing them. */
class BatchWriter {
  private readonly hash = createHash('sha256');
  private batch: Uint8Array[] = [];
  private batched = 0;
  bytes = 0;

  constructor(private readonly handle: fs.FileHandle) {}

  async write(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.hash.update(bytes);
    this.batch.push(bytes);
    this.batched += bytes.length;
    this.bytes += bytes.length;
    if (this.batched >= WRITE_BATCH) await this.flush();
  }

  /** Writes what is batched; returns the SHA-256 (hex) of everything written. */
  async end(): Promise<string> {
    await this.flush();
    return this.hash.digest('hex');
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    this.batched = 0;
    if (batch.length > 0) await this.handle.writev(batch);
  }
}

/** A binary part as pieces (views, never overwritten later) with their length and checksum. */
interface BinaryPart {
  pieces: Uint8Array[];
  section: Section;
}

function binaryPart(pieces: Uint8Array[]): BinaryPart {
  const hash = createHash('sha256');
  for (const piece of pieces) hash.update(piece);
  const bytes = pieces.reduce((sum, piece) => sum + piece.length, 0);
  return { pieces, section: { bytes, checksum: hash.digest('hex') } };
}

/** What `writeBody` wrote, and the binary parts taken when it ended. */
interface Body {
  records: number;
  lexical: BinaryPart;
  /** Empty when the records hold their own windows, or changed while the body was written (`writeParts`). */
  windows: BinaryPart;
}

/**
 * Writes the index's lines to `body` (the windows' vocabulary, the identifier frequencies, a file record each, with
 * its windows when `ownWindows`, then whether the frequencies are the records') and the records' chunk texts to
 * `texts`, in the same order. The index is never held as one string; it may change meanwhile (a query's file
 * update): each record is written whole, and the frequencies and whole window stores are marked as not the records'
 * (the load then counts the frequencies; `writeParts` writes again with `ownWindows`). BM25 and the window stores
 * are taken as the last record is.
 */
async function writeBody(index: RepoIndex, body: BatchWriter, texts: BatchWriter, ownWindows: boolean): Promise<Body> {
  const version = index.recordsVersion;
  let records = 0;
  await body.write(`${JSON.stringify(index.vocabularyWords())}\n`);
  await body.write(`${JSON.stringify([...index.frequencies()])}\n`);
  for (const record of index.files.values()) {
    const windows = ownWindows ? index.persistedWindows(record.facts.path) : undefined;
    const bytes = index.textBytes(record.facts.chunks);
    const line: PersistedRecord = {
      ...record,
      facts: { ...record.facts, chunks: record.facts.chunks.map(persisted) },
      textBytes: bytes.map((b) => b.length),
      ...windows,
    };
    await body.write(`${JSON.stringify(line)}\n`);
    for (const b of bytes) await texts.write(b);
    records++;
  }
  const exact = index.recordsVersion === version;
  const parts = {
    lexical: binaryPart([...index.lexicalBinary()]),
    windows: binaryPart(exact && !ownWindows ? index.windowsBinary() : []),
  };
  const end: BodyEnd = { frequenciesExact: exact, skipped: index.skipped.entries() };
  await body.write(`${JSON.stringify(end)}\n`);
  return { records, ...parts };
}

/** The body's last line. */
interface BodyEnd {
  /** False when records changed while the body was written: the frequencies (its second line) are then counted. */
  frequenciesExact: boolean;
  /** Files left out for what they hold, with their stat then (`SkipMemory`); absent in a cache written before. */
  skipped?: PersistedSkip[];
}

function persisted(chunk: Chunk): TextlessChunk {
  return { kind: chunk.kind, range: chunk.range, symbols: chunk.symbols };
}

async function writePieces(handle: fs.FileHandle, pieces: Uint8Array[]): Promise<void> {
  for (const piece of pieces) await handle.write(piece);
}

/** `use` on the section at `place` once it matches its checksum (`withFileSection`); throws `what …` otherwise. */
function withSection<T>(place: Place, section: Section, what: string, use: (source: ByteSource) => T): T {
  if (!Number.isSafeInteger(section?.bytes) || section.bytes < 0) throw new Error(`no ${what}`);
  return withFileSection(place.file, place.offset, section, what, use);
}

/** A cache's files, by part. */
interface PartFiles {
  body: string;
  texts: string;
  lexical: string;
  windows: string;
}

/** A cache's parts written to temporary files (`writeParts`), and what its metadata says of them. */
interface WrittenParts {
  files: PartFiles;
  checksum: string;
  records: number;
  texts: Section;
  lexical: Section;
  windows: Section;
}

/**
 * Writes the body (`writeBody`), the texts, the lexical index and the window stores to temporary files named after
 * `base` (their final names, or the shared file's); removes them when any write fails. The window stores are saved
 * whole, and the records without theirs (a third of the body, parsed for nothing on a warm start); when a record
 * changed meanwhile the stores are not the records', and the body is written again with each record's own windows.
 */
async function writeParts(index: RepoIndex, base: PartFiles): Promise<WrittenParts> {
  const whole = await writePartsOnce(index, base, false);
  if (whole.windows.bytes > 0) return whole;
  await removeParts(whole.files);
  return writePartsOnce(index, base, true);
}

async function writePartsOnce(index: RepoIndex, base: PartFiles, ownWindows: boolean): Promise<WrittenParts> {
  const temp = (file: string): string => `${file}.${process.pid}.tmp`;
  const files = {
    body: temp(base.body),
    texts: temp(base.texts),
    lexical: temp(base.lexical),
    windows: temp(base.windows),
  };
  const handles: fs.FileHandle[] = [];
  const open = async (file: string): Promise<fs.FileHandle> => {
    const handle = await fs.open(file, 'w');
    handles.push(handle);
    return handle;
  };
  try {
    const body = new BatchWriter(await open(files.body));
    const texts = new BatchWriter(await open(files.texts));
    const written = await writeBody(index, body, texts, ownWindows);
    const checksum = await body.end();
    const textsSection = { bytes: texts.bytes, checksum: await texts.end() };
    await writePieces(await open(files.lexical), written.lexical.pieces);
    await writePieces(await open(files.windows), written.windows.pieces);
    await Promise.all(handles.splice(0).map((handle) => handle.close()));
    return {
      files,
      checksum,
      records: written.records,
      texts: textsSection,
      lexical: written.lexical.section,
      windows: written.windows.section,
    };
  } catch (error) {
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
    await removeParts(files);
    throw error;
  }
}

async function removeParts(files: PartFiles): Promise<void> {
  for (const file of Object.values(files)) await fs.rm(file, { force: true });
}

/** The parts of a shared cache file, in their order after its header line. */
const SHARED_ORDER = ['lexical', 'windows', 'texts', 'body'] as const;

/**
 * Writes the index as JSON lines (`writeBody`), its chunk texts, its lexical index and its window stores as binary
 * files beside them, with a small metadata file holding the version and the checksums. Each file is written to a
 * temporary name and renamed, the metadata last: a crash, a full disk or a concurrent writer leaves files and
 * metadata that do not match, which the next load detects and discards.
 */
export async function saveIndex(index: RepoIndex, cacheDir: string): Promise<void> {
  await fs.mkdir(cacheDir, { recursive: true });
  const files = cacheFiles(cacheDir);
  const meta = path.join(cacheDir, META_FILE);
  const metaTemp = `${meta}.${process.pid}.tmp`;
  const parts = await writeParts(index, files);
  try {
    const content: CacheMeta = {
      version: CACHE_VERSION,
      checksum: parts.checksum,
      root: index.roots.id,
      records: parts.records,
      lexical: parts.lexical,
      texts: parts.texts,
      windows: parts.windows,
    };
    await fs.writeFile(metaTemp, JSON.stringify(content));
    for (const part of ['body', 'texts', 'lexical', 'windows'] as const)
      await fs.rename(parts.files[part], files[part]);
    await fs.rename(metaTemp, meta);
  } catch (error) {
    await removeParts(parts.files);
    await fs.rm(metaTemp, { force: true });
    throw error;
  }
}

function cacheFiles(cacheDir: string): PartFiles {
  return {
    body: path.join(cacheDir, BODY_FILE),
    texts: path.join(cacheDir, TEXTS_FILE),
    lexical: path.join(cacheDir, LEXICAL_FILE),
    windows: path.join(cacheDir, WINDOWS_FILE),
  };
}

/**
 * Writes the index as one file another checkout can warm-start from (`loadSharedIndex`): a header line, then the
 * parts in `SHARED_ORDER`, the binary ones' lengths in the header, the lines `saveIndex` writes last. Keys are paths
 * within the workspace folders and nothing names this machine's folders; it holds what the index derived from the
 * code (symbols, chunks, windows, the lexical index) and no secret file, since those are never indexed. The parts
 * are written to temporary files beside it and joined under a temporary name, then renamed: a reader never sees
 * half a file.
 */
export async function saveSharedIndex(index: RepoIndex, file: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const parts = await writeParts(index, {
    body: `${file}.body`,
    texts: `${file}.texts`,
    lexical: `${file}.lexical`,
    windows: `${file}.windows`,
  });
  const handle = await fs.open(temp, 'w').catch(async (error: unknown) => {
    await removeParts(parts.files);
    throw error;
  });
  try {
    const header: SharedHeader = {
      format: SHARED_FORMAT,
      version: CACHE_VERSION,
      layout: index.roots.layout,
      records: parts.records,
      lexical: parts.lexical,
      windows: parts.windows,
      texts: parts.texts,
      checksum: parts.checksum,
    };
    await handle.write(`${JSON.stringify(header)}\n`);
    for (const part of SHARED_ORDER) await appendFile(handle, parts.files[part]);
    await handle.close();
    await fs.rename(temp, file);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw error;
  } finally {
    await removeParts(parts.files);
  }
}

/** Copies `file` to the end of what `handle` has written, `WRITE_BATCH` bytes at a time. */
async function appendFile(handle: fs.FileHandle, file: string): Promise<void> {
  const source = await fs.open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(WRITE_BATCH);
    for (;;) {
      const { bytesRead } = await source.read(buffer, 0, buffer.length);
      if (bytesRead === 0) return;
      await handle.write(buffer, 0, bytesRead);
    }
  } finally {
    await source.close();
  }
}

export type LoadResult = { ok: true } | { ok: false; reason: string };

/** What a start will load, as its cache says before any of it is read (`cachedRecords`). */
export interface CachedRecords {
  records: number;
  /** True when it is the shared cache: the workspace's files then all have other mtimes than its records. */
  shared: boolean;
}

/**
 * How many records the cache in `cacheDir`, else the shared cache file, says it holds (0 when neither is there): a
 * look at its metadata or first line only, trusting nothing else (the load checks).
 */
export async function cachedRecords(
  cacheDir: string | undefined,
  sharedCache: string | undefined,
): Promise<CachedRecords> {
  const count = (records: unknown): number => (Number.isSafeInteger(records) ? Number(records) : 0);
  try {
    if (cacheDir)
      return {
        records: count((JSON.parse(await fs.readFile(path.join(cacheDir, META_FILE), 'utf8')) as CacheMeta).records),
        shared: false,
      };
  } catch {
    // No cache of its own: the shared one, if any, is what loads.
  }
  try {
    if (sharedCache) return { records: count((await readHeader(sharedCache)).content?.records), shared: true };
  } catch {
    // Not a cache: the load says why.
  }
  return { records: 0, shared: false };
}

/** Fills `index` from the cache; on any doubt (missing, old, corrupt, other root) it loads nothing. */
export async function loadIndex(index: RepoIndex, cacheDir: string): Promise<LoadResult> {
  let meta: CacheMeta;
  try {
    meta = JSON.parse(await fs.readFile(path.join(cacheDir, META_FILE), 'utf8')) as CacheMeta;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no cache' : `unreadable cache: ${unreadable(error)}` };
  }
  if (meta.version !== CACHE_VERSION)
    return { ok: false, reason: `cache version ${meta.version} is not ${CACHE_VERSION}` };
  if (meta.root !== index.roots.id) return { ok: false, reason: 'cache belongs to other folders' };
  const files = cacheFiles(cacheDir);
  return fill(index, meta, {
    body: { file: files.body, offset: 0 },
    texts: { file: files.texts, offset: 0 },
    lexical: { file: files.lexical, offset: 0 },
    windows: { file: files.windows, offset: 0 },
  });
}

/**
 * Fills `index` from a shared cache file (`saveSharedIndex`) of a checkout in any folder, its records unverified
 * (`UNVERIFIED_MTIME`); on any doubt it loads nothing and says why, in words that quote nothing of the file (it may
 * be any file at all).
 */
export async function loadSharedIndex(index: RepoIndex, file: string): Promise<LoadResult> {
  let header: { content: SharedHeader; bytes: number };
  try {
    header = await readHeader(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (error instanceof SyntaxError) return { ok: false, reason: 'not a RepoGate index cache' };
    return { ok: false, reason: code === 'ENOENT' ? 'no such file' : `unreadable: ${unreadable(error)}` };
  }
  const { content } = header;
  if (content?.format !== SHARED_FORMAT) return { ok: false, reason: 'not a RepoGate index cache' };
  if (content.version !== CACHE_VERSION)
    return { ok: false, reason: `built by index version ${content.version}, this is ${CACHE_VERSION}` };
  if (content.layout !== index.roots.layout)
    return {
      ok: false,
      reason: `built for ${describeLayout(content.layout)}, this workspace has ${describeLayout(index.roots.layout)}`,
    };
  const places: Partial<CacheParts> = {};
  let offset = header.bytes;
  for (const part of SHARED_ORDER) {
    places[part] = { file, offset };
    if (part === 'body') break;
    const bytes = content[part]?.bytes;
    if (!Number.isSafeInteger(bytes) || bytes < 0) return { ok: false, reason: `corrupt cache: no ${part} section` };
    offset += bytes;
  }
  const result = await fill(index, content, places as CacheParts);
  if (result.ok) for (const record of index.files.values()) record.mtimeMs = UNVERIFIED_MTIME;
  return result;
}

/** Why a cache file could not be read; ERR_STRING_TOO_LONG is V8's limit on one string (2^29 characters). */
function unreadable(error: unknown): string {
  if ((error as NodeJS.ErrnoException).code === 'ERR_STRING_TOO_LONG')
    return 'a line too large to load as one string (over 512 MiB)';
  return (error as Error).message;
}

/** A shared cache file's first line, and its length in bytes with the newline: where the body starts. */
async function readHeader(file: string): Promise<{ content: SharedHeader; bytes: number }> {
  const handle = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEADER_MAX_BYTES), 0, HEADER_MAX_BYTES, 0);
    const end = buffer.subarray(0, bytesRead).indexOf(10);
    const bytes = end < 0 ? bytesRead : end;
    return { content: JSON.parse(buffer.toString('utf8', 0, bytes)) as SharedHeader, bytes: bytes + 1 };
  } finally {
    await handle.close();
  }
}

/** A layout in words; a header's may be anything, and is then only "other folders". */
function describeLayout(layout: unknown): string {
  if (layout === '') return 'a single folder';
  try {
    const names: unknown = JSON.parse(String(layout));
    if (Array.isArray(names)) return `the folders ${names.join(', ')}`;
  } catch {
    // Not a layout this version writes.
  }
  return 'other folders';
}

/** Where a cache's parts lie: a file each, or one file at four offsets (a shared cache). */
type CacheParts = Record<keyof PartFiles, Place>;

/** What a cache's metadata or header says of its parts. */
interface PartsMeta {
  checksum: string;
  records: number;
  lexical: Section;
  texts: Section;
  windows: Section;
}

interface Place {
  file: string;
  offset: number;
}

/**
 * Copies the texts into the index's texts' file, then restores every record of the body (the lines from
 * `parts.body`) as it is read, then checks the whole against its checksum and record count, and reads the lexical
 * index; on any doubt it removes what it put.
 */
async function fill(index: RepoIndex, meta: PartsMeta, parts: CacheParts): Promise<LoadResult> {
  let textsAt: number;
  try {
    textsAt = copyTexts(index, parts.texts, meta.texts);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no cache' : `corrupt cache: ${(error as Error).message}` };
  }
  try {
    return await fillBody(index, meta, parts, textsAt);
  } finally {
    index.endRestore();
  }
}

async function fillBody(index: RepoIndex, meta: PartsMeta, parts: CacheParts, textsStart: number): Promise<LoadResult> {
  const hash = createHash('sha256');
  let lines = 0;
  let remap: Int32Array | undefined;
  // The window stores are taken whole when saved with the records (their ids remapped when the vocabulary's differ).
  let windowsLater = false;
  let textsAt = textsStart;
  let end: BodyEnd | undefined;
  // A line that does not parse is remembered and the rest only hashed: a changed file is told from a corrupt one.
  let corrupt: Error | undefined;
  try {
    for await (const line of fileLines(parts.body.file, hash, parts.body.offset)) {
      if (!corrupt) {
        try {
          if (lines === 0) {
            remap = vocabularyRemap(index, line);
            windowsLater = meta.windows?.bytes > 0;
          } else if (lines === 1) index.restoreFrequencies(JSON.parse(line) as [string, number][]);
          else if (lines <= meta.records + 1) textsAt = restoreRecord(index, line, remap, textsAt, windowsLater);
          else if (lines === meta.records + 2) end = JSON.parse(line) as BodyEnd;
        } catch (error) {
          corrupt = error as Error;
        }
      }
      lines++;
    }
  } catch (error) {
    clear(index);
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no cache' : `unreadable cache: ${unreadable(error)}` };
  }
  let reason: string | undefined;
  if (hash.digest('hex') !== meta.checksum) reason = 'cache checksum mismatch';
  else if (corrupt) reason = `corrupt cache: ${corrupt.message}`;
  else if (lines !== meta.records + 3) reason = `corrupt cache: expected ${meta.records} records, found ${lines - 3}`;
  else if (textsAt - textsStart !== meta.texts.bytes) reason = 'corrupt cache: texts and records differ';
  else {
    try {
      if (!end?.frequenciesExact) index.recountFrequencies();
      index.skipped.restore(end?.skipped);
      withSection(parts.lexical, meta.lexical, 'lexical index', (source) => index.restoreLexical(source));
      if (windowsLater)
        withSection(parts.windows, meta.windows, 'window stores', (source) => index.restoreWindows(source, remap));
    } catch (error) {
      reason = `corrupt cache: ${(error as Error).message}`;
    }
  }
  if (!reason) return { ok: true };
  clear(index);
  return { ok: false, reason };
}

/**
 * Copies a cache's texts, checked against their checksum, into space set aside in the index's texts' file; returns
 * where they start. Synchronous: nothing else writes texts between, and a query waits at most as long as the copy.
 */
function copyTexts(index: RepoIndex, from: Place, section: Section): number {
  if (!Number.isSafeInteger(section?.bytes) || section.bytes < 0) throw new Error('no texts');
  const at = index.reserveTexts(section.bytes);
  if (at === undefined) throw new Error('no room for the texts');
  try {
    copyInto(index, at, from, section);
  } catch (error) {
    index.endRestore();
    throw error;
  }
  return at;
}

function copyInto(index: RepoIndex, at: number, from: Place, section: Section): void {
  const hash: Hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(WRITE_BATCH);
  const fd = openSync(from.file, 'r');
  try {
    for (let copied = 0; copied < section.bytes;) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, section.bytes - copied), from.offset + copied);
      if (read === 0) throw new Error('texts truncated');
      const piece = buffer.subarray(0, read);
      hash.update(piece);
      if (!index.writeTexts(at + copied, piece)) throw new Error('no room for the texts');
      copied += read;
    }
  } finally {
    closeSync(fd);
  }
  if (hash.digest('hex') !== section.checksum) throw new Error('texts checksum mismatch');
}

/**
 * Interns the body's first line, the persisted windows' vocabulary; returns how its ids map to this index's, or
 * undefined when they are the same (a load into an empty index), so that no window needs sorting again.
 */
function vocabularyRemap(index: RepoIndex, line: string): Int32Array | undefined {
  const remap = index.restoreVocabulary(JSON.parse(line) as string[]);
  return remap.every((id, i) => id === i) ? undefined : remap;
}

/**
 * A body line: a file record with its windows and its chunks' (left for `RepoIndex.restoreWindows` when
 * `windowsLater`), its texts at `textsAt`; returns where the next's are.
 */
function restoreRecord(
  index: RepoIndex,
  line: string,
  remap: Int32Array | undefined,
  textsAt: number,
  windowsLater: boolean,
): number {
  const { windows, chunkWindows, textBytes, ...record } = JSON.parse(line) as PersistedRecord;
  const [file = []] = windows && !windowsLater ? decodeWindowLists(windows, remap) : [];
  const chunks = chunkWindows && !windowsLater ? decodeWindowLists(chunkWindows, remap) : undefined;
  index.restore(record, textBytes, textsAt, windowsLater ? 'later' : { file, chunks });
  return textsAt + textBytes.reduce((sum, bytes) => sum + bytes, 0);
}

/** Removes every record, and the frequencies a cache added for records it may not have restored. */
function clear(index: RepoIndex): void {
  for (const filePath of [...index.files.keys()]) index.remove(filePath);
  index.recountFrequencies();
}
