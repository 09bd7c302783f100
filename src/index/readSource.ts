/** Reading one workspace file safely: never throws, never hangs on a FIFO, never reads a huge file whole. */
import * as fs from 'fs';
import * as path from 'path';
import { decodeSource, type ReadResult } from './decode';
import { leavesRoot, normalizeRel } from './relPath';
import { errorReason } from './skipReason';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** Never throws: every failure becomes a SkipReason. */
export async function readSourceFile(
  root: string,
  relPath: string,
  maxFileBytes: number = DEFAULT_MAX_FILE_BYTES,
): Promise<ReadResult> {
  const rel = normalizeRel(relPath);
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
