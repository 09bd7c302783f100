/**
 * The editor side of the engine process: the same `complete` as CompletionEngine, answered by a forked Node
 * process that holds the models. If that process dies, pending requests fail, the state says so, and the next
 * load starts a fresh one: the extension host never goes down with it.
 */
import { fork, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { CompleteOptions, CompletionRequest, CompletionResult, RetrieveFn } from './completionEngine';
import type { EngineSettings, FromEngine, RemoteModelState, ToEngine } from './engineProtocol';
import type { ModelRequest } from './modelHost';

interface Pending {
  resolve(result: CompletionResult): void;
  reject(error: Error): void;
  onPartial?(text: string): void;
}

/** How long a disposing engine may take to release its models before it is killed. */
const DISPOSE_TIMEOUT_MS = 3000;

function engineScript(): string {
  // Bundled next to the extension as engineProcess.js; compiled by tsc beside this file under the same name.
  return path.join(__dirname, 'engineProcess.js');
}

export class EngineClient {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private settings: EngineSettings | undefined;
  private settled: ((state: RemoteModelState) => void)[] = [];
  private current: RemoteModelState = { kind: 'no-model' };
  /** Answers the engine's retrieval requests (the index client); unset: none are made. */
  retrieve: RetrieveFn | undefined;

  constructor(
    private readonly onState: (state: RemoteModelState) => void = () => undefined,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  get state(): RemoteModelState {
    return this.current;
  }

  /** Loads models in the engine process; resolves with the state once loading has ended (ready, error or none). */
  load(request: ModelRequest): Promise<RemoteModelState> {
    if (!request.generator && !this.child) return Promise.resolve(this.setState({ kind: 'no-model' }));
    const done = new Promise<RemoteModelState>((resolve) => this.settled.push(resolve));
    this.send({ op: 'load', request });
    return done;
  }

  configure(settings: EngineSettings): void {
    this.settings = settings;
    if (this.child) this.send({ op: 'configure', settings });
  }

  complete(request: CompletionRequest, options: CompleteOptions = {}): Promise<CompletionResult> {
    const id = this.nextId++;
    return new Promise<CompletionResult>((resolve, reject) => {
      const abort = (): void => {
        if (this.pending.has(id)) this.send({ op: 'abort', id });
      };
      options.signal?.addEventListener('abort', abort, { once: true });
      const settle = (): void => options.signal?.removeEventListener('abort', abort);
      this.pending.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
        onPartial: options.onPartial,
      });
      this.send({ op: 'complete', id, request });
      if (options.signal?.aborted) abort();
    });
  }

  /** Asks the engine to release its models and exit; kills it if it does not in time. */
  async dispose(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.send({ op: 'dispose' });
    const timer = setTimeout(() => child.kill('SIGKILL'), DISPOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private send(message: ToEngine): void {
    this.ensureChild().send(message);
  }

  private ensureChild(): ChildProcess {
    if (this.child) return this.child;
    if (!fs.existsSync(engineScript())) throw new Error(`the engine script is missing: ${engineScript()}`);
    const child = fork(engineScript(), [], { serialization: 'advanced', stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const forward = (data: Buffer): void => {
      for (const line of data.toString().split('\n')) if (line.trim()) this.log(line);
    };
    child.stdout?.on('data', forward);
    child.stderr?.on('data', forward);
    child.on('message', (message: FromEngine) => this.receive(message));
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      const reason = new Error(`the engine process exited (${signal ?? `code ${code}`})`);
      for (const pending of this.pending.values()) pending.reject(reason);
      this.pending.clear();
      if (this.current.kind !== 'no-model') {
        this.setState({ kind: 'error', message: `${reason.message}; the model was unloaded.`, hint: 'Reload the model (RepoGate: Select Model…) or see the log.' });
      }
    });
    this.child = child;
    if (this.settings) child.send({ op: 'configure', settings: this.settings } satisfies ToEngine);
    return child;
  }

  private receive(message: FromEngine): void {
    switch (message.type) {
      case 'state':
        this.setState(message.state);
        return;
      case 'partial':
        this.pending.get(message.id)?.onPartial?.(message.text);
        return;
      case 'result':
        this.pending.get(message.id)?.resolve(message.result);
        this.pending.delete(message.id);
        return;
      case 'failed':
        this.pending.get(message.id)?.reject(new Error(message.message));
        this.pending.delete(message.id);
        return;
      case 'retrieve':
        void this.answerRetrieval(message.id, message.request);
        return;
      case 'disposed':
        return;
    }
  }

  private async answerRetrieval(id: number, request: Parameters<RetrieveFn>[0]): Promise<void> {
    try {
      if (!this.retrieve) throw new Error('retrieval is not available');
      this.child?.send({ op: 'retrieved', id, result: await this.retrieve(request) } satisfies ToEngine);
    } catch (error) {
      this.child?.send({ op: 'retrieved', id, error: (error as Error).message } satisfies ToEngine);
    }
  }

  private setState(state: RemoteModelState): RemoteModelState {
    this.current = state;
    this.onState(state);
    if (state.kind !== 'loading') for (const resolve of this.settled.splice(0)) resolve(state);
    return state;
  }
}
