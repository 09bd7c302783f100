import * as fs from 'fs';
import * as path from 'path';
import { Worker } from 'worker_threads';
import type { Calibration } from './calibration';
import type { RetrievalRequest, RetrievalResult } from './types';
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

function workerScript(): string {
  // Bundled next to the extension as indexWorker.js; compiled by tsc as worker.js beside this file.
  const bundled = path.join(__dirname, 'indexWorker.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, 'worker.js');
}

/**
 * The index in a worker thread, behind promises. If the worker dies, pending calls fail with its error,
 * `onLost` is told, and the next call starts a fresh, empty worker (which must be rebuilt): the host never
 * crashes with it.
 */
export class IndexClient {
  private worker: Worker | undefined;
  private readonly requests = new PendingRequests<unknown>();
  onProgress: (done: number, total: number) => void = () => undefined;
  /** The worker ended by itself (a crash, out of memory, killed); not called after `dispose`. */
  onLost: (reason: string) => void = () => undefined;

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerScript());
    worker.on(
      'message',
      (message: { id?: number; result?: unknown; error?: string; progress?: { done: number; total: number } }) => {
        if (message.progress) return this.onProgress(message.progress.done, message.progress.total);
        if (message.error !== undefined) this.requests.reject(message.id!, new Error(message.error));
        else this.requests.resolve(message.id!, message.result);
      },
    );
    const fail = (error: Error): void => {
      // 'error' is followed by 'exit', and a disposed worker has already been let go: report each loss once.
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.requests.rejectAll(error);
      this.onLost(error.message);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`index worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private call<T>(request: IndexRequest): Promise<T> {
    const worker = this.ensureWorker();
    return this.requests.request((id) => worker.postMessage({ id, request }), undefined) as Promise<T>;
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

  /** The fusion's calibration on the last build, once done (undefined when none ran or it was replaced). */
  calibration(): Promise<Calibration | undefined> {
    return this.call({ op: 'calibration' });
  }

  stats(): Promise<IndexStats> {
    return this.call({ op: 'stats' });
  }

  async dispose(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.requests.rejectAll(new Error('the index was closed'));
    await worker?.terminate();
  }

  /** Fault injection for the editor-level fault suite: ends the worker as a crash would. */
  async crashWorker(): Promise<void> {
    await this.worker?.terminate();
  }
}
