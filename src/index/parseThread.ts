/**
 * A bulk build's parser on a thread of its own (parseWorker.ts): while the index stores one file, the thread parses
 * the next ones, and the parse's garbage (trees, text slices, extraction's temporaries) stays in the thread's heap
 * (decisions-memory.md, M10). It never fails a build: a file it cannot answer for, or every file once the thread is
 * gone, is answered `undefined` and parsed by the caller as before.
 */
import * as path from 'path';
import { Worker } from 'worker_threads';
import type { FileFacts } from './types';

export interface ParseRequest {
  id: number;
  path: string;
  text: string;
}

export type ParseReply = { id: number; facts: FileFacts } | { id: number; error: string };

/**
 * The thread's old-generation cap: room for the largest file the index takes (DEFAULT_MAX_FILE_BYTES) several times
 * over, while its garbage is collected long before it could rival the index's own heap. A file past it ends the
 * thread, and the caller parses that file and the rest.
 */
const THREAD_HEAP_MB = 192;

export class ParseThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (facts: FileFacts | undefined) => void>();
  private nextId = 0;
  private gone = false;

  /** The thread starts with the first file to parse: a start whose files are all the cached ones parses none. */
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
    worker.on('message', (reply: ParseReply) => {
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      resolve?.('facts' in reply ? reply.facts : undefined);
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
  facts(filePath: string, text: string): Promise<FileFacts | undefined> {
    const worker = this.start();
    if (!worker) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, path: filePath, text } satisfies ParseRequest);
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
