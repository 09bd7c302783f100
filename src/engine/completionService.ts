/**
 * Serves completion requests as the editor makes them, one keystroke after another: the cursor cache first,
 * then the engine. Never queues: a new request aborts the previous generation unless the user is typing
 * along it. Answers as soon as the first line is complete and keeps generating the rest in the background
 * into the cache, calling `onBackgroundResult` so the editor can ask again and show the longer completion.
 */
import type { CompletionBackend, CompletionRequest, CompletionResult } from './completionEngine';
import { CursorCache, type CursorContext } from './cursorCache';
import { offsetOf } from '../index/cursor';
import { CompletionStats } from './stats';

/** A request cancelled sooner than this says nothing about the machine's speed (the user just typed on). */
const MIN_WAIT_RECORDED_MS = 50;

export interface ServedCompletion {
  text: string;
  source: 'cache' | 'model';
  latencyMs: number;
  /** The engine's full account (model completions only). */
  result?: CompletionResult;
}

interface InFlight {
  context: CursorContext;
  controller: AbortController;
  /** The longest post-processed text streamed so far. */
  text: string;
}

export class CompletionService {
  readonly cache = new CursorCache();
  readonly stats = new CompletionStats();
  /** The most recent finished model completion, for "Explain Last Completion". */
  lastResult?: CompletionResult;
  private inFlight?: InFlight;

  constructor(
    private readonly engine: () => CompletionBackend | undefined,
    private readonly onBackgroundResult: () => void = () => undefined,
  ) {}

  /**
   * `signal` is the editor's cancellation of this request (the user typed again). Until the first line is
   * shown it aborts the generation; afterwards the generation goes on until a diverging keystroke.
   */
  async provide(request: CompletionRequest, signal?: AbortSignal): Promise<ServedCompletion | undefined> {
    return this.fromCache(request) ?? this.generate(request, signal);
  }

  /**
   * The cache alone, at once (the editor asks it before its debounce). A miss that leaves the stream in flight
   * behind (the user typed something else) aborts it.
   */
  fromCache(request: CompletionRequest): ServedCompletion | undefined {
    const started = performance.now();
    const context = cursorContext(request);
    if (!this.follows(context)) this.abortInFlight();
    const hit = this.cache.get(context);
    if (!hit) return undefined;
    this.stats.recordCacheHit(performance.now() - started);
    return { text: hit.text, source: 'cache', latencyMs: performance.now() - started };
  }

  /** A model completion; the editor calls it after its debounce, with the cache already asked. */
  async generate(request: CompletionRequest, signal?: AbortSignal): Promise<ServedCompletion | undefined> {
    const started = performance.now();
    const context = cursorContext(request);
    this.abortInFlight();
    const engine = this.engine();
    if (!engine || signal?.aborted) return undefined;

    const flight: InFlight = { context, controller: new AbortController(), text: '' };
    this.inFlight = flight;
    const onCancel = (): void => {
      if (!flight.text) flight.controller.abort();
    };
    signal?.addEventListener('abort', onCancel);
    return new Promise<ServedCompletion | undefined>((resolve, reject) => {
      let answered = false;
      const answer = (text: string, result?: CompletionResult): void => {
        if (answered) return;
        answered = true;
        resolve(text ? { text, source: 'model', latencyMs: performance.now() - started, result } : undefined);
      };
      engine
        .complete(request, {
          signal: flight.controller.signal,
          onPartial: (text) => {
            flight.text = text;
            this.cache.set(context, text);
            answer(text);
          },
        })
        .then((result) => {
          signal?.removeEventListener('abort', onCancel);
          if (this.inFlight === flight) this.inFlight = undefined;
          const waited =
            result.aborted && result.timings.totalMs >= MIN_WAIT_RECORDED_MS ? result.timings.totalMs : undefined;
          const firstToken = result.timings.firstTokenMs ?? waited;
          if (firstToken !== undefined) this.stats.recordFirstToken(firstToken);
          if (result.aborted) {
            this.stats.recordCancelled();
            answer('');
            return;
          }
          this.lastResult = result;
          this.stats.recordModel(result.gate, performance.now() - started);
          this.cache.set(context, result.text);
          const grew = answered && result.text.length > flight.text.length;
          answer(result.text, result);
          if (grew) this.onBackgroundResult();
        })
        .catch((error: unknown) => {
          signal?.removeEventListener('abort', onCancel);
          if (this.inFlight === flight) this.inFlight = undefined;
          if (answered) return;
          answered = true;
          reject(error);
        });
    });
  }

  /**
   * The cursor moved to where the user may type next (a file opened, a jump): the engine prepares its cache for
   * that line, unless a generation is in flight (it is the user's request, and uses the model now).
   */
  warm(request: CompletionRequest): void {
    if (!this.inFlight) this.engine()?.warm(request);
  }

  /** Stops the generation in flight, if any (a diverging keystroke, a disabled extension, a model switch). */
  abortInFlight(): void {
    this.inFlight?.controller.abort();
    this.inFlight = undefined;
  }

  /** True while the user types exactly what the generation in flight has streamed so far. */
  private follows(context: CursorContext): boolean {
    const flight = this.inFlight;
    if (!flight || flight.context.path !== context.path || flight.context.after !== context.after) return false;
    if (!context.before.startsWith(flight.context.before)) return false;
    return flight.text.startsWith(context.before.slice(flight.context.before.length));
  }
}

export function cursorContext(request: CompletionRequest): CursorContext {
  const offset = offsetOf(request.text, request.cursor);
  return { path: request.path, before: request.text.slice(0, offset), after: request.text.slice(offset) };
}
