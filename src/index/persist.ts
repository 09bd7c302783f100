import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import type { FileRecord, RepoIndex } from './repoIndex';

/** Bump whenever FileFacts, chunking or the lexical tokenizer change: an old cache is then rebuilt. */
export const CACHE_VERSION = 6;
const CACHE_FILE = 'index.json';

interface CachePayload {
  root: string;
  records: FileRecord[];
  lexical: string;
}

export function cacheDirFor(baseDir: string, root: string): string {
  return path.join(baseDir, createHash('sha1').update(path.resolve(root)).digest('hex').slice(0, 16));
}

/**
 * Writes the index as `{"version","checksum"}\n<payload>`, via a temporary file and a rename so that a
 * crash or a full disk leaves the previous cache (or none), never a torn one.
 */
export async function saveIndex(index: RepoIndex, cacheDir: string): Promise<void> {
  const payload: CachePayload = { root: index.root, records: [...index.files.values()], lexical: index.lexicalJSON() };
  const body = JSON.stringify(payload);
  const header = JSON.stringify({ version: CACHE_VERSION, checksum: checksum(body) });
  await fs.mkdir(cacheDir, { recursive: true });
  const target = path.join(cacheDir, CACHE_FILE);
  const temp = `${target}.${process.pid}.tmp`;
  try {
    await fs.writeFile(temp, `${header}\n${body}`);
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

export type LoadResult = { ok: true } | { ok: false; reason: string };

/** Fills `index` from the cache; on any doubt (missing, old, corrupt, other root) it loads nothing. */
export async function loadIndex(index: RepoIndex, cacheDir: string): Promise<LoadResult> {
  let raw: string;
  try {
    raw = await fs.readFile(path.join(cacheDir, CACHE_FILE), 'utf8');
  } catch {
    return { ok: false, reason: 'no cache' };
  }
  const newline = raw.indexOf('\n');
  try {
    const header = JSON.parse(raw.slice(0, newline)) as { version?: number; checksum?: string };
    if (header.version !== CACHE_VERSION) return { ok: false, reason: `cache version ${header.version} is not ${CACHE_VERSION}` };
    const body = raw.slice(newline + 1);
    if (newline < 0 || header.checksum !== checksum(body)) return { ok: false, reason: 'cache checksum mismatch' };
    const payload = JSON.parse(body) as CachePayload;
    if (payload.root !== index.root) return { ok: false, reason: 'cache belongs to another folder' };
    for (const record of payload.records) index.put(record, false);
    index.restoreLexical(payload.lexical);
    return { ok: true };
  } catch (error) {
    for (const filePath of [...index.files.keys()]) index.remove(filePath);
    return { ok: false, reason: `corrupt cache: ${(error as Error).message}` };
  }
}

function checksum(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
