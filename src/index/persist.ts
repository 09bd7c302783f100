import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import { fileLines } from './fileLines';
import type { FileRecord, RepoIndex } from './repoIndex';
import { decodeWindowLists } from './windows';

/** Bump whenever FileFacts, chunking, the windows or the lexical tokenizer change: an old cache is then rebuilt. */
export const CACHE_VERSION = 21;
const BODY_FILE = 'index.jsonl';
const META_FILE = 'index.meta.json';
/** The lexical index in its binary form (`RepoIndex.lexicalBinary`), beside the body. */
const LEXICAL_FILE = 'lexical.bin';
/** Lines are written in batches of about this many characters: few writes, no whole-index string. */
const WRITE_BATCH = 1 << 20;

/** A file record as a line of the cache: with its windows and its chunks' (`RepoIndex.persistedWindows`). */
type PersistedRecord = FileRecord & { windows?: string; chunkWindows?: string };

interface CacheMeta {
  version: number;
  checksum: string;
  /** `WorkspaceRoots.id`: a cache of other folders, or of the same under other names, keys other files. */
  root: string;
  records: number;
  lexical: LexicalSection;
}

/** Where a cache's lexical index is checked against: its length and SHA-256 (hex). */
interface LexicalSection {
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
  /** The lexical index's bytes, which follow this line; the body's lines follow them. */
  lexical: LexicalSection;
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

/**
 * Writes the index's lines (the windows' vocabulary, then a file record with its windows each) to `handle` in
 * batches, and returns their SHA-256.
 * The index is never held as one string.
 */
async function writeBody(index: RepoIndex, handle: fs.FileHandle): Promise<string> {
  const hash = createHash('sha256');
  let batch = '';
  const write = async (line: string): Promise<void> => {
    hash.update(line);
    batch += line;
    if (batch.length >= WRITE_BATCH) {
      await handle.write(batch);
      batch = '';
    }
  };
  await write(`${JSON.stringify(index.vocabularyWords())}\n`);
  for (const record of index.files.values()) {
    const windows = index.persistedWindows(record.facts.path);
    const line: PersistedRecord = windows ? { ...record, ...windows } : record;
    await write(`${JSON.stringify(line)}\n`);
  }
  await handle.write(batch);
  return hash.digest('hex');
}

/**
 * The lexical index's bytes in pieces (views of the index's own arrays, no copy), with their length and checksum:
 * a shared cache's header names them before they are written.
 */
function lexicalSection(index: RepoIndex): { pieces: Uint8Array[]; section: LexicalSection } {
  const pieces = [...index.lexicalBinary()];
  const hash = createHash('sha256');
  for (const piece of pieces) hash.update(piece);
  const bytes = pieces.reduce((sum, piece) => sum + piece.length, 0);
  return { pieces, section: { bytes, checksum: hash.digest('hex') } };
}

async function writePieces(handle: fs.FileHandle, pieces: Uint8Array[]): Promise<void> {
  for (const piece of pieces) await handle.write(piece);
}

/**
 * Replaces the index's lexical index by the `section.bytes` bytes of `file` from `offset`, once they match the
 * section's checksum; throws otherwise (the caller discards the whole cache).
 */
async function readLexical(index: RepoIndex, file: string, offset: number, section: LexicalSection): Promise<void> {
  const data = Buffer.allocUnsafe(section.bytes);
  const handle = await fs.open(file, 'r');
  try {
    for (let filled = 0; filled < data.length;) {
      const { bytesRead } = await handle.read(data, filled, data.length - filled, offset + filled);
      if (bytesRead === 0) throw new Error('lexical index truncated');
      filled += bytesRead;
    }
  } finally {
    await handle.close();
  }
  if (createHash('sha256').update(data).digest('hex') !== section.checksum)
    throw new Error('lexical index checksum mismatch');
  index.restoreLexical(data);
}

/**
 * Writes the index as JSON lines (`writeBody`) and the lexical index as a binary file beside them, with a small
 * metadata file holding the version and both checksums. Each file is written to a temporary name and renamed, the
 * metadata last: a crash, a full disk or a concurrent writer leaves files and metadata that do not match, which the
 * next load detects and discards.
 */
export async function saveIndex(index: RepoIndex, cacheDir: string): Promise<void> {
  await fs.mkdir(cacheDir, { recursive: true });
  const body = path.join(cacheDir, BODY_FILE);
  const meta = path.join(cacheDir, META_FILE);
  const lexical = path.join(cacheDir, LEXICAL_FILE);
  const bodyTemp = `${body}.${process.pid}.tmp`;
  const metaTemp = `${meta}.${process.pid}.tmp`;
  const lexicalTemp = `${lexical}.${process.pid}.tmp`;
  const handle = await fs.open(bodyTemp, 'w');
  try {
    const checksum = await writeBody(index, handle);
    await handle.close();
    const { pieces, section } = lexicalSection(index);
    const lexicalHandle = await fs.open(lexicalTemp, 'w');
    try {
      await writePieces(lexicalHandle, pieces);
    } finally {
      await lexicalHandle.close();
    }
    const content: CacheMeta = {
      version: CACHE_VERSION,
      checksum,
      root: index.roots.id,
      records: index.files.size,
      lexical: section,
    };
    await fs.writeFile(metaTemp, JSON.stringify(content));
    await fs.rename(bodyTemp, body);
    await fs.rename(lexicalTemp, lexical);
    await fs.rename(metaTemp, meta);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(bodyTemp, { force: true });
    await fs.rm(lexicalTemp, { force: true });
    await fs.rm(metaTemp, { force: true });
    throw error;
  }
}

/**
 * Writes the index as one file another checkout can warm-start from (`loadSharedIndex`): a header line, the lexical
 * index's bytes (their length in the header), then the lines `saveIndex` writes. Keys are paths within the workspace folders and nothing names this machine's folders;
 * it holds what the index derived from the code (symbols, chunks, windows, the lexical index) and no secret file,
 * since those are never indexed. Written to a temporary name and renamed: a reader never sees half a file.
 */
export async function saveSharedIndex(index: RepoIndex, file: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const { pieces, section } = lexicalSection(index);
  const header = (checksum: string): string => {
    const content: SharedHeader = {
      format: SHARED_FORMAT,
      version: CACHE_VERSION,
      layout: index.roots.layout,
      records: index.files.size,
      lexical: section,
      checksum,
    };
    return `${JSON.stringify(content)}\n`;
  };
  const handle = await fs.open(temp, 'w');
  try {
    // The checksum is known only after the body: the header is written with a placeholder of its length, then again.
    await handle.write(header('0'.repeat(64)));
    await writePieces(handle, pieces);
    await handle.write(header(await writeBody(index, handle)), 0);
    await handle.close();
    await fs.rename(temp, file);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw error;
  }
}

export type LoadResult = { ok: true } | { ok: false; reason: string };

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
  return fill(index, meta, path.join(cacheDir, BODY_FILE), 0, { file: path.join(cacheDir, LEXICAL_FILE), offset: 0 });
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
  if (!Number.isSafeInteger(content.lexical?.bytes)) return { ok: false, reason: 'corrupt cache: no lexical index' };
  const bodyStart = header.bytes + content.lexical.bytes;
  const result = await fill(index, content, file, bodyStart, { file, offset: header.bytes });
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

/**
 * Puts every record of the body (the lines of `file` from byte `start`) as it is read, then checks the whole against
 * its checksum and record count, and reads the lexical index (from `lexical.offset` in `lexical.file`); on any doubt
 * it removes what it put.
 */
async function fill(
  index: RepoIndex,
  meta: { checksum: string; records: number; lexical: LexicalSection },
  file: string,
  start: number,
  lexical: { file: string; offset: number },
): Promise<LoadResult> {
  const hash = createHash('sha256');
  let lines = 0;
  let remap: Int32Array | undefined;
  // A line that does not parse is remembered and the rest only hashed: a changed file is told from a corrupt one.
  let corrupt: Error | undefined;
  try {
    for await (const line of fileLines(file, hash, start)) {
      if (!corrupt) {
        try {
          if (lines === 0) remap = vocabularyRemap(index, line);
          else if (lines <= meta.records) putRecord(index, line, remap);
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
  else if (lines !== meta.records + 1) reason = `corrupt cache: expected ${meta.records} records, found ${lines - 1}`;
  else {
    try {
      await readLexical(index, lexical.file, lexical.offset, meta.lexical);
    } catch (error) {
      reason = `corrupt cache: ${(error as Error).message}`;
    }
  }
  if (!reason) return { ok: true };
  clear(index);
  return { ok: false, reason };
}

/**
 * Interns the body's first line, the persisted windows' vocabulary; returns how its ids map to this index's, or
 * undefined when they are the same (a load into an empty index), so that no window needs sorting again.
 */
function vocabularyRemap(index: RepoIndex, line: string): Int32Array | undefined {
  const remap = index.restoreVocabulary(JSON.parse(line) as string[]);
  return remap.every((id, i) => id === i) ? undefined : remap;
}

/** A body line: a file record with its windows and its chunks'. */
function putRecord(index: RepoIndex, line: string, remap: Int32Array | undefined): void {
  const { windows, chunkWindows, ...record } = JSON.parse(line) as PersistedRecord;
  const [fileWindows = []] = windows ? decodeWindowLists(windows, remap) : [];
  index.put(record, false, fileWindows, chunkWindows ? decodeWindowLists(chunkWindows, remap) : undefined);
}

function clear(index: RepoIndex): void {
  for (const filePath of [...index.files.keys()]) index.remove(filePath);
}
