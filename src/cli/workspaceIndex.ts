import * as os from 'os';
import * as path from 'path';
import { setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';
import { cacheDirFor } from '../index/persist';
import { RepoIndex } from '../index/repoIndex';
import { buildIndex, type BuildReport } from '../index/workspace';
import { repositoryDir } from './inputs';

export interface OpenOptions {
  cacheBase?: string;
  /** A shared cache file to warm-start from when the own cache is missing or unusable (`--shared-cache`). */
  sharedCache?: string;
  fresh?: boolean;
  quiet?: boolean;
}

/** The CLI's index: persisted under ~/.cache/repogate (or --cache), progress on stderr. */
export async function openIndex(
  dir: string,
  options: OpenOptions = {},
): Promise<{ index: RepoIndex; report: BuildReport }> {
  const root = await repositoryDir(dir);
  const index = new RepoIndex(root);
  const cacheBase =
    options.cacheBase ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'repogate');
  let lastPrint = 0;
  const report = await buildIndex(index, {
    root,
    cacheDir: cacheDirFor(cacheBase, root),
    sharedCache: options.sharedCache && path.resolve(options.sharedCache),
    fresh: options.fresh,
    onProgress: (done, total) => {
      const now = Date.now();
      if (!options.quiet && process.stderr.isTTY && (now - lastPrint > 200 || done === total)) {
        process.stderr.write(`\rindexing ${done}/${total}`);
        lastPrint = now;
        if (done === total) process.stderr.write('\n');
      }
    },
  });
  if (report.saveError && !options.quiet) process.stderr.write(`warning: index cache not saved: ${report.saveError}\n`);
  if (report.sharedCache && !report.sharedCache.ok && !options.quiet)
    process.stderr.write(
      `warning: shared index cache not used (${report.sharedCache.reason}); every file was parsed\n`,
    );
  return { index, report };
}

export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * The JavaScript heap still in use after a full collection while `index` is held: what the index itself keeps,
 * without the garbage a build leaves behind (peak RSS also counts that, the parser's wasm memory and the runtime).
 */
export function liveHeapMb(index: RepoIndex): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const mb = process.memoryUsage().heapUsed / 2 ** 20;
  // Read after the collection, so that the index is certainly live during it.
  return index.files.size >= 0 ? mb : 0;
}
