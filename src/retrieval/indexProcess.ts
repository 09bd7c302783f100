import * as fs from 'fs';
import * as os from 'os';
import { DEFAULTS } from '../defaults';
import { RepoIndex } from '../index/repoIndex';
import { WorkspaceRoots } from '../index/roots';
import { buildIndex, FileRefresher } from '../index/workspace';
import { calibrateProjects, servingProfiles, type WorkspaceCalibration } from './calibration';
import type { IndexReply, IndexRequest } from './indexClient';
import { FUSED, type FusionProfile } from './profiles';
import { retrieve } from './retrieve';

/**
 * The index's own process (forked beside the extension host, indexClient.ts): parsing and BM25 updates never run
 * on the extension host's event loop, and neither the index's memory, its garbage collection nor its threads are
 * the host's. Requests are answered in arrival order of their completion; a build yields between files so that
 * retrievals and single-file updates interleave with it.
 */

/**
 * The nice value of this process. The index is background work beside the editor: on a two-core machine a build
 * takes a core for 15-20 s, and at equal priority the extension host's thread waits behind it. At 10 (or the
 * host's own, if higher) the scheduler gives the host about ten times the share when both want a core, and an
 * idle core is still the build's.
 */
const INDEX_NICE = 10;

/**
 * Lowers the whole process. On Linux the nice value is per thread, and V8's and libuv's threads (garbage
 * collection, file reads) already run when this script starts: each is lowered, and threads started later inherit
 * it from the thread that starts them.
 */
function lowerPriority(): void {
  try {
    const nice = Math.max(os.getPriority(), INDEX_NICE);
    os.setPriority(nice);
    if (process.platform === 'linux')
      for (const task of fs.readdirSync('/proc/self/task')) os.setPriority(Number(task), nice);
  } catch {
    // A sandbox that forbids it: the index runs at the editor's priority.
  }
}
lowerPriority();

const send = (message: IndexReply): void => void process.send!(message);

let index: RepoIndex | undefined;
let refresher: FileRefresher | undefined;
let building: AbortController | undefined;
/** The calibration of the last build, running or done; retrieval uses its projects' profiles once it is done. */
let calibration: { controller: AbortController; result: Promise<WorkspaceCalibration | undefined> } | undefined;
let profileOf: ((path: string) => FusionProfile) | undefined;

/** Starts calibrating each project on the freshly built index, in steps that let requests interleave. */
function startCalibration(target: RepoIndex): void {
  const controller = new AbortController();
  const read = async (file: string): Promise<string | undefined> => {
    const source = await target.roots.read(file);
    return 'text' in source ? source.text : undefined;
  };
  const result = calibrateProjects(target, read, { budget: DEFAULTS.contextBudget, signal: controller.signal }).then(
    (done) => {
      if (controller.signal.aborted) return undefined;
      profileOf = servingProfiles(done);
      return done;
    },
    // A failed calibration leaves the fusion in place: it is a refinement, never a requirement.
    () => undefined,
  );
  calibration = { controller, result };
}

async function handle(request: IndexRequest): Promise<unknown> {
  switch (request.op) {
    case 'build': {
      building?.abort();
      calibration?.controller.abort();
      profileOf = undefined;
      const controller = new AbortController();
      building = controller;
      // A fresh build ("Reindex Repository") starts from an empty index, so that every file is parsed again; a
      // folder added or removed keeps the other folders' files when their paths stay (roots.ts).
      const roots = new WorkspaceRoots(request.options.root);
      if (index && !request.options.fresh && index.roots.keepsKeysOf(roots)) {
        index.moveTo(roots);
      } else {
        index?.dispose();
        index = new RepoIndex(request.options.root);
      }
      refresher = new FileRefresher(index, request.options);
      let lastReport = 0;
      try {
        const report = await buildIndex(index, {
          ...request.options,
          signal: controller.signal,
          onProgress: (done, total) => {
            if (Date.now() - lastReport > 100 || done === total) {
              lastReport = Date.now();
              send({ progress: { done, total } });
            }
          },
        });
        startCalibration(index);
        return report;
      } finally {
        if (building === controller) building = undefined;
      }
    }
    case 'cancelBuild':
      building?.abort();
      return undefined;
    case 'update':
      return requireRefresher().refresh(request.path, request.text);
    case 'remove':
      return requireRefresher().remove(request.path);
    case 'rename':
      return requireRefresher().rename(request.from, request.to);
    case 'retrieve':
      return retrieve(requireIndex(), request.request, profileOf?.(request.request.path) ?? FUSED);
    case 'calibration':
      return calibration?.result;
    case 'stats':
      return index?.stats() ?? { files: 0, symbols: 0, chunks: 0 };
  }
}

function requireRefresher(): FileRefresher {
  if (!refresher) throw new Error('the index has not been built yet');
  return refresher;
}

function requireIndex(): RepoIndex {
  if (!index) throw new Error('the index has not been built yet');
  return index;
}

process.on('message', ({ id, request }: { id: number; request: IndexRequest }) => {
  handle(request).then(
    (result) => send({ id, result }),
    (error: Error) => send({ id, error: error.name === 'AbortError' ? 'cancelled' : error.message }),
  );
});
// The extension host (or its launcher thread) is gone: nobody is left to ask.
process.on('disconnect', () => process.exit(0));
