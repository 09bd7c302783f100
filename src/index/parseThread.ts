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
  private readonly worker: Worker | undefined;
  private readonly pending = new Map<number, (facts: FileFacts | undefined) => void>();
  private nextId = 0;
  private gone = false;

  constructor(script = path.join(__dirname, 'parseWorker.js')) {
    try {
      this.worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    } catch {
      this.gone = true;
      return;
    }
    this.worker.unref();
    this.worker.on('message', (reply: ParseReply) => {
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      resolve?.('facts' in reply ? sharedStrings(reply.facts) : undefined);
    });
    // An exit (out of memory, terminated) or an error that ends the thread: the caller parses what is left.
    this.worker.on('error', () => this.end());
    this.worker.on('exit', () => this.end());
  }

  /** True while the thread takes files. */
  get alive(): boolean {
    return !this.gone;
  }

  /** The facts of `text` as `filePath`, or `undefined` when the thread cannot give them (the caller parses). */
  facts(filePath: string, text: string): Promise<FileFacts | undefined> {
    if (this.gone || !this.worker) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker!.postMessage({ id, path: filePath, text } satisfies ParseRequest);
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

/** Kinds and language names: a few values, each held once for the whole index. */
const constants = new Map<string, string>();

/**
 * A message brings every string as a copy of its own (a chunk's path, each kind, a name used by several symbols):
 * each is made one string again, as a parse on this thread would have left them, and then some.
 */
function sharedStrings(facts: FileFacts): FileFacts {
  const seen = new Map<string, string>([[facts.path, facts.path]]);
  const one = <T extends string>(text: T): T => (seen.get(text) ?? seen.set(text, text).get(text)!) as T;
  const constant = <T extends string>(text: T): T => (constants.get(text) ?? constants.set(text, text).get(text)!) as T;
  facts.language = constant(facts.language);
  for (const symbol of facts.symbols) {
    symbol.name = one(symbol.name);
    symbol.kind = constant(symbol.kind);
    if (symbol.container) symbol.container = one(symbol.container);
  }
  for (const chunk of facts.chunks) {
    chunk.path = facts.path;
    chunk.kind = constant(chunk.kind);
    chunk.symbols = chunk.symbols.map(one);
  }
  for (const binding of facts.imports) {
    binding.names = binding.names.map(one);
    binding.imported = binding.imported.map(one);
  }
  for (const type of facts.types) {
    type.name = one(type.name);
    type.typeNames = type.typeNames.map(one);
    if (type.container) type.container = one(type.container);
  }
  return facts;
}
