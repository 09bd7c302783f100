/**
 * A bulk build's parser on a thread of its own (parseWorker.ts): while the index stores one file, the thread parses
 * the next ones, and the parse's garbage (trees, text slices, extraction's temporaries) stays in the thread's heap
 * (decisions-memory.md, M10). While a large cache loads, one walks the workspace (M14), and reads and hashes it too
 * when the cache is a shared one (M17). It never fails a build: a file or a walk it cannot answer for, or any once the
 * thread is gone, is answered `undefined` and done by the caller as before.
 */
import * as path from 'path';
import { Worker } from 'worker_threads';
import type { ScanOptions, ScanResult } from './scan';
import type { FileFacts } from './types';

export type ThreadRequest =
  { id: number; path: string; text: string } | { id: number; scan: ScanOptions; hash: boolean };

export type ThreadReply =
  { id: number; facts: FileFacts } | { id: number; scan: ScanResult } | { id: number; error: string };

/**
 * The thread's old-generation cap: room for the largest file the index takes (DEFAULT_MAX_FILE_BYTES) several times
 * over, while its garbage is collected long before it could rival the index's own heap. A file past it ends the
 * thread, and the caller parses that file and the rest.
 */
const THREAD_HEAP_MB = 192;

export class ParseThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (reply: ThreadReply | undefined) => void>();
  private nextId = 0;
  private gone = false;

  /** The thread starts with the first request: a build with nothing to parse or walk starts none. */
  constructor(private readonly script = path.join(__dirname, 'parseWorker.js')) {}

  private start(): Worker | undefined {
    if (this.worker || this.gone) return this.worker;
    let worker: Worker;
    try {
      worker = new Worker(this.script, { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    } catch {
      this.gone = true;
      return undefined;
    }
    worker.unref();
    worker.on('message', (reply: ThreadReply) => {
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      resolve?.(reply);
    });
    // An exit (out of memory, terminated) or an error that ends the thread: the caller parses what is left.
    worker.on('error', () => this.end());
    worker.on('exit', () => this.end());
    return (this.worker = worker);
  }

  /** True while the thread takes files. */
  get alive(): boolean {
    return !this.gone;
  }

  /** The facts of `text` as `filePath`, or `undefined` when the thread cannot give them (the caller parses). */
  async facts(filePath: string, text: string): Promise<FileFacts | undefined> {
    const reply = await this.ask((id) => ({ id, path: filePath, text }));
    return reply && 'facts' in reply ? reply.facts : undefined;
  }

  /**
   * `scanWorkspace(options)` on the thread, or `undefined` when it cannot or the walk failed (the caller walks).
   * `hash`: each file found is also read and given its content hash (`hashWalked`).
   */
  async scan(options: ScanOptions, hash = false): Promise<ScanResult | undefined> {
    const reply = await this.ask((id) => ({ id, scan: options, hash }));
    return reply && 'scan' in reply ? reply.scan : undefined;
  }

  private ask(request: (id: number) => ThreadRequest): Promise<ThreadReply | undefined> {
    const worker = this.start();
    if (!worker) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage(request(id));
    });
  }

  async close(): Promise<void> {
    this.end();
    await this.worker?.terminate();
  }

  private end(): void {
    this.gone = true;
    for (const resolve of this.pending.values()) resolve(undefined);
    this.pending.clear();
  }
}
