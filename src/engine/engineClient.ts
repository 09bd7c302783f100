/**
 * The editor side of the engine process: the same `complete` as CompletionEngine, answered by a forked Node
 * process that holds the models. If that process dies, pending requests fail, the state says so, and the next
 * load starts a fresh one: the extension host never goes down with it.
 */
import * as path from 'path';
import { ForkedProcess } from '../index/forkedProcess';
import { PendingRequests } from '../index/pendingRequests';
import type { CompleteOptions, CompletionRequest, CompletionResult, RetrieveFn } from './completionEngine';
import type { EngineSettings, FromEngine, RemoteModelState, ToEngine } from './engineProtocol';
import type { ModelRequest } from './modelHost';

/** How long a disposing engine may take to release its models before it is killed. */
const DISPOSE_TIMEOUT_MS = 3000;

// Bundled next to the extension under this name; compiled by tsc beside this file under the same name.
const engineScript = (): string => path.join(__dirname, 'engineProcess.js');

export class EngineClient {
  private child: ForkedProcess<ToEngine, FromEngine> | undefined;
  /** Completions in flight, each with its streaming callback. */
  private readonly pending = new PendingRequests<CompletionResult, CompleteOptions['onPartial']>();
  private settings: EngineSettings | undefined;
  private settled: ((state: RemoteModelState) => void)[] = [];
  private current: RemoteModelState = { kind: 'no-model' };
  /** Answers the engine's retrieval requests (the index client); unset: none are made. */
  retrieve: RetrieveFn | undefined;

  constructor(
    private readonly onState: (state: RemoteModelState) => void = () => undefined,
    private readonly log: (line: string) => void = () => undefined,
    /** The engine process ended without being asked to (killed, crashed); its state is already an error. */
    private readonly onExit: (reason: string) => void = () => undefined,
  ) {}

  get state(): RemoteModelState {
    return this.current;
  }

  /**
   * Loads models in a fresh engine process; resolves with the state once loading has ended (ready, error or none).
   * A process that held a model is ended first: what it held (its allocator's arenas, GPU buffers) goes back to
   * the system at once, which a model disposed in place does not do.
   */
  async load(request: ModelRequest): Promise<RemoteModelState> {
    if (this.child && this.current.kind !== 'no-model') await this.dispose();
    if (!request.generator && !this.child) return this.setState({ kind: 'no-model' });
    const done = new Promise<RemoteModelState>((resolve) => this.settled.push(resolve));
    this.send({ op: 'load', request });
    return done;
  }

  configure(settings: EngineSettings): void {
    this.settings = settings;
    if (this.child) this.send({ op: 'configure', settings });
  }

  complete(request: CompletionRequest, options: CompleteOptions = {}): Promise<CompletionResult> {
    let abort: (() => void) | undefined;
    const result = this.pending.request((id) => {
      abort = (): void => {
        if (this.pending.has(id)) this.send({ op: 'abort', id });
      };
      options.signal?.addEventListener('abort', abort, { once: true });
      this.send({ op: 'complete', id, request });
      if (options.signal?.aborted) abort();
    }, options.onPartial);
    return result.finally(() => {
      if (abort) options.signal?.removeEventListener('abort', abort);
    });
  }

  /** Only to a running engine: a warm-up is not worth starting the process for. */
  warm(request: CompletionRequest): void {
    if (this.child) this.send({ op: 'warm', request });
  }

  /** Asks the engine to release its models and exit; kills it if it does not in time. */
  async dispose(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.send({ op: 'dispose' });
    // Let go of it first: its exit is then an asked-for one, neither an error state nor a reason to restart.
    this.child = undefined;
    this.pending.rejectAll(new Error('the engine was closed'));
    const timer = setTimeout(() => child.kill(), DISPOSE_TIMEOUT_MS);
    await child.exited;
    clearTimeout(timer);
  }

  private send(message: ToEngine): void {
    this.ensureChild().send(message);
  }

  private ensureChild(): ForkedProcess<ToEngine, FromEngine> {
    if (this.child) return this.child;
    const child = new ForkedProcess<ToEngine, FromEngine>(engineScript(), {
      message: (message) => this.receive(message),
      output: (line) => this.log(line),
      exit: (reason) => {
        if (this.child !== child) return;
        this.child = undefined;
        const error = new Error(`the engine process exited (${reason})`);
        this.pending.rejectAll(error);
        if (this.current.kind !== 'no-model') {
          this.setState({
            kind: 'error',
            message: `${error.message}; the model was unloaded.`,
            hint: 'Reload the model (RepoGate: Select Model…) or see the log.',
          });
        }
        this.onExit(reason);
      },
    });
    this.child = child;
    if (this.settings) child.send({ op: 'configure', settings: this.settings });
    return child;
  }

  private receive(message: FromEngine): void {
    switch (message.type) {
      case 'state':
        this.setState(message.state);
        return;
      case 'partial':
        this.pending.extra(message.id)?.(message.text);
        return;
      case 'result':
        this.pending.resolve(message.id, message.result);
        return;
      case 'failed':
        this.pending.reject(message.id, new Error(message.message));
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
      this.child?.send({ op: 'retrieved', id, result: await this.retrieve(request) });
    } catch (error) {
      this.child?.send({ op: 'retrieved', id, error: (error as Error).message });
    }
  }

  private setState(state: RemoteModelState): RemoteModelState {
    this.current = state;
    this.onState(state);
    if (state.kind !== 'loading') for (const resolve of this.settled.splice(0)) resolve(state);
    return state;
  }
}
