/** Reading one workspace file safely: never throws, never hangs on a FIFO, never reads a huge file whole. */
import * as fs from 'fs';
import * as path from 'path';
import { decodeSource, type ReadResult } from './decode';
import { leavesRoot, normalizeRel } from './relPath';
import { errorReason } from './skipReason';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/**
 * Never throws: every failure becomes a SkipReason. The file is read with blocking calls on purpose: a build reads
 * every file of the workspace, and each call through the thread pool cost a round trip (decisions-memory.md, M13).
 * Opening never blocks (O_NONBLOCK), so a FIFO cannot hang the indexer; nothing past `maxFileBytes` is read.
 */
export async function readSourceFile(
  root: string,
  relPath: string,
  maxFileBytes: number = DEFAULT_MAX_FILE_BYTES,
): Promise<ReadResult> {
  const read = readSourceBytes(root, relPath, maxFileBytes);
  return 'skip' in read ? read : decodeSource(read.bytes);
}

/** The file's bytes as `readSourceFile` reads them, before they are decoded and checked; never throws. */
export function readSourceBytes(
  root: string,
  relPath: string,
  maxFileBytes: number = DEFAULT_MAX_FILE_BYTES,
): { bytes: Buffer } | Extract<ReadResult, { skip: unknown }> {
  const rel = normalizeRel(relPath);
  if (leavesRoot(rel)) return { skip: 'excluded', detail: 'path leaves the workspace' };
  let fd: number;
  try {
    fd = fs.openSync(path.join(root, rel), fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return { skip: errorReason(e), detail: (e as NodeJS.ErrnoException).code };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { skip: 'unreadable', detail: 'not a regular file' };
    if (st.size > maxFileBytes) return { skip: 'too-large', detail: `${st.size} bytes` };
    const bytes = readWhole(fd, st.size, maxFileBytes);
    // The file may have grown since stat.
    if (bytes.length > maxFileBytes) return { skip: 'too-large', detail: `${bytes.length} bytes` };
    return { bytes };
  } catch (e) {
    return { skip: errorReason(e), detail: (e as NodeJS.ErrnoException).code };
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // A descriptor that cannot be closed was never going to be read again.
    }
  }
}

/** The file's bytes to its end, or the first `maxFileBytes` + 1 when it has grown past them since `size`. */
function readWhole(fd: number, size: number, maxFileBytes: number): Buffer {
  let buf = Buffer.allocUnsafe(size + 1);
  let length = 0;
  for (;;) {
    const read = fs.readSync(fd, buf, length, buf.length - length, null);
    if (read === 0) return buf.subarray(0, length);
    length += read;
    if (length > maxFileBytes) return buf.subarray(0, length);
    if (length === buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, maxFileBytes + 1));
      buf.copy(grown, 0, 0, length);
      buf = grown;
    }
  }
}
