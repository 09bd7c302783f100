import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import type { FileRecord, RepoIndex } from './repoIndex';

/** Bump whenever FileFacts, chunking, the windows or the lexical tokenizer change: an old cache is then rebuilt. */
export const CACHE_VERSION = 18;
const BODY_FILE = 'index.jsonl';
const META_FILE = 'index.meta.json';
/** Lines are written in batches of about this many characters: few writes, no whole-index string. */
const WRITE_BATCH = 1 << 20;

/** A file record as a line of the cache: with its similar-code windows (`RepoIndex.persistedWindows`). */
type PersistedRecord = FileRecord & { windows?: string[] };

interface CacheMeta {
  version: number;
  checksum: string;
  /** `WorkspaceRoots.id`: a cache of other folders, or of the same under other names, keys other files. */
  root: string;
  records: number;
}

export function cacheDirFor(baseDir: string, root: string): string {
  return path.join(baseDir, createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 16));
}

/**
 * Writes the index as JSON lines (one a file record with its windows, the last the lexical index) with a small metadata file
 * holding the version and the body's checksum. Each file is written to a temporary name and renamed, the
 * body first: a crash, a full disk or a concurrent writer leaves a body and metadata that do not match,
 * which the next load detects and discards. The index is never held as one string.
 */
export async function saveIndex(index: RepoIndex, cacheDir: string): Promise<void> {
  await fs.mkdir(cacheDir, { recursive: true });
  const body = path.join(cacheDir, BODY_FILE);
  const meta = path.join(cacheDir, META_FILE);
  const bodyTemp = `${body}.${process.pid}.tmp`;
  const metaTemp = `${meta}.${process.pid}.tmp`;
  const hash = createHash('sha256');
  const handle = await fs.open(bodyTemp, 'w');
  try {
    let batch = '';
    const write = async (line: string): Promise<void> => {
      hash.update(line);
      batch += line;
      if (batch.length >= WRITE_BATCH) {
        await handle.write(batch);
        batch = '';
      }
    };
    for (const record of index.files.values()) {
      const windows = index.persistedWindows(record.facts.path);
      const line: PersistedRecord = windows ? { ...record, windows } : record;
      await write(`${JSON.stringify(line)}\n`);
    }
    for (const piece of index.lexicalJSON()) await write(piece);
    await write('\n');
    await handle.write(batch);
    await handle.close();
    const content: CacheMeta = {
      version: CACHE_VERSION,
      checksum: hash.digest('hex'),
      root: index.roots.id,
      records: index.files.size,
    };
    await fs.writeFile(metaTemp, JSON.stringify(content));
    await fs.rename(bodyTemp, body);
    await fs.rename(metaTemp, meta);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(bodyTemp, { force: true });
    await fs.rm(metaTemp, { force: true });
    throw error;
  }
}

export type LoadResult = { ok: true } | { ok: false; reason: string };

/** Fills `index` from the cache; on any doubt (missing, old, corrupt, other root) it loads nothing. */
export async function loadIndex(index: RepoIndex, cacheDir: string): Promise<LoadResult> {
  let meta: CacheMeta;
  let raw: string;
  try {
    meta = JSON.parse(await fs.readFile(path.join(cacheDir, META_FILE), 'utf8')) as CacheMeta;
    raw = await fs.readFile(path.join(cacheDir, BODY_FILE), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no cache' : `unreadable cache: ${(error as Error).message}` };
  }
  if (meta.version !== CACHE_VERSION)
    return { ok: false, reason: `cache version ${meta.version} is not ${CACHE_VERSION}` };
  if (meta.root !== index.roots.id) return { ok: false, reason: 'cache belongs to other folders' };
  if (createHash('sha256').update(raw).digest('hex') !== meta.checksum)
    return { ok: false, reason: 'cache checksum mismatch' };
  try {
    const lines = raw.split('\n');
    if (lines.length !== meta.records + 2)
      throw new Error(`expected ${meta.records} records, found ${lines.length - 2}`);
    for (let i = 0; i < meta.records; i++) {
      const { windows, ...record } = JSON.parse(lines[i]) as PersistedRecord;
      index.put(record, false, index.decodeWindows(windows ?? []));
    }
    index.restoreLexical(lines[meta.records]);
    return { ok: true };
  } catch (error) {
    for (const filePath of [...index.files.keys()]) index.remove(filePath);
    return { ok: false, reason: `corrupt cache: ${(error as Error).message}` };
  }
}
