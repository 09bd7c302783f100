import * as path from 'path';
import type { WorkspaceCalibration } from './calibration';
import type { RetrievalRequest, RetrievalResult } from './types';
import { ForkedProcess } from '../index/forkedProcess';
import { PendingRequests } from '../index/pendingRequests';
import type { IndexStats } from '../index/repoIndex';
import type { SkipReason } from '../index/skipReason';
import type { BuildOptions, BuildReport } from '../index/workspace';

/** Build options that can cross a thread boundary (no callbacks, no signal). */
export type WorkerBuildOptions = Omit<BuildOptions, 'signal' | 'onProgress' | 'parser'>;

export type IndexRequest =
  | { op: 'build'; options: WorkerBuildOptions }
  | { op: 'cancelBuild' }
  | { op: 'update'; path: string; text?: string }
  | { op: 'remove'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'retrieve'; request: RetrievalRequest }
  | { op: 'stats' }
  | { op: 'calibration' };

/** To the index process: a request under its id. */
type ToIndex = { id: number; request: IndexRequest };

/** From the index process: an answer by id, or the progress of the build. */
export type IndexReply =
  { id: number; result: unknown } | { id: number; error: string } | { progress: { done: number; total: number } };

// Bundled next to the extension under this name; compiled by tsc beside this file under the same name.
const indexScript = (): string => path.join(__dirname, 'indexProcess.js');

/**
 * The index in a process of its own (indexProcess.ts), behind promises. If the process dies, pending calls fail
 * with its reason, `onLost` is told, and the next call starts a fresh, empty process (which must be rebuilt): the
 * host never crashes with it.
 */
export class IndexClient {
  private child: ForkedProcess<ToIndex, IndexReply> | undefined;
  private readonly requests = new PendingRequests<unknown>();
  onProgress: (done: number, total: number) => void = () => undefined;
  /** The process ended by itself (a crash, out of memory, killed), with why; not called after `dispose`. */
  onLost: (reason: string) => void = () => undefined;
  /** A line the process wrote to its stdout or stderr. */
  onOutput: (line: string) => void = () => undefined;

  /** The index process's id, once it has been started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private ensureChild(): ForkedProcess<ToIndex, IndexReply> {
    if (this.child) return this.child;
    const child = new ForkedProcess<ToIndex, IndexReply>(indexScript(), {
      message: (message) => {
        if ('progress' in message) this.onProgress(message.progress.done, message.progress.total);
        else if ('error' in message) this.requests.reject(message.id, new Error(message.error));
        else this.requests.resolve(message.id, message.result);
      },
      output: (line) => this.onOutput(line),
      exit: (reason) => {
        // A disposed process has already been let go: report only a loss.
        if (this.child !== child) return;
        this.child = undefined;
        const error = new Error(`the index process exited (${reason})`);
        this.requests.rejectAll(error);
        this.onLost(reason);
      },
    });
    this.child = child;
    return child;
  }

  private call<T>(request: IndexRequest): Promise<T> {
    const child = this.ensureChild();
    return this.requests.request((id) => child.send({ id, request }), undefined) as Promise<T>;
  }

  build(options: WorkerBuildOptions): Promise<BuildReport> {
    return this.call({ op: 'build', options });
  }

  cancelBuild(): Promise<void> {
    return this.call({ op: 'cancelBuild' });
  }

  /** Re-indexes a file from the given editor text, or from disk; secrets and ignored files are dropped. */
  update(filePath: string, text?: string): Promise<'updated' | 'unchanged' | SkipReason> {
    return this.call({ op: 'update', path: filePath, text });
  }

  remove(filePath: string): Promise<boolean> {
    return this.call({ op: 'remove', path: filePath });
  }

  rename(from: string, to: string): Promise<'updated' | 'unchanged' | SkipReason> {
    return this.call({ op: 'rename', from, to });
  }

  retrieve(request: RetrievalRequest): Promise<RetrievalResult> {
    return this.call({ op: 'retrieve', request });
  }

  /** Each project's calibration on the last build, once done (undefined when none ran or it was replaced). */
  calibration(): Promise<WorkspaceCalibration | undefined> {
    return this.call({ op: 'calibration' });
  }

  stats(): Promise<IndexStats> {
    return this.call({ op: 'stats' });
  }

  /** Ends the process: it holds nothing to release, and a cache it was writing is renamed into place only whole. */
  async dispose(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.requests.rejectAll(new Error('the index was closed'));
    child?.kill();
    await child?.exited;
  }
}
