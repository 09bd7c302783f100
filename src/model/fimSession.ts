import type { LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';

/** Token ids as plain numbers outside this module; node-llama-cpp's branded Token type stays inside it. */
const asTokens = (ids: readonly number[]): Token[] => ids as Token[];

/** What one evaluation cost: tokens taken from the KV cache versus tokens the model had to evaluate. */
export interface EvaluationCost {
  reused: number;
  evaluated: number;
}

export interface ProbeResult extends EvaluationCost {
  /** The next-token distribution after the last token (plain softmax). */
  probabilities: Map<number, number>;
}

export interface GenerateOptions {
  maxTokens: number;
  /** Tokens that end the completion; they are not part of the text. */
  stopIds: readonly number[];
  signal?: AbortSignal;
  /** Called with the whole text so far whenever it grows; return true to stop generating. */
  onText?(text: string): boolean | void;
}

export interface GenerateResult extends EvaluationCost {
  text: string;
  tokens: number[];
  /** Probability the model gave each generated token (greedy choice), for uncertainty signals. */
  confidences: number[];
  /** performance.now() when the first token was generated (undefined when none came). */
  firstTokenAt?: number;
  stoppedBy: 'stop-token' | 'max-tokens' | 'caller' | 'abort';
}

/**
 * One KV-cache sequence of a model, used for fill-in-the-middle requests one after another. Every call is given
 * the whole token sequence; only the part after the longest prefix shared with what the cache holds is
 * evaluated, so a keystroke costs the changed tail, and a gate probe followed by generation on the same tokens
 * plus a continuation costs the continuation only.
 */
/** Time of one background prefill step: a request arriving meanwhile waits for at most about this long. */
const PREFILL_STEP_MS = 150;
const MAX_PREFILL_STEP_TOKENS = 256;
/** Evaluations of fewer tokens say little about prompt speed (fixed costs dominate). */
const MIN_TIMED_TOKENS = 8;
/** Weight of the newest measurement in the running prompt-speed estimate. */
const SPEED_SMOOTHING = 0.3;

export class FimSession {
  private tail: Promise<unknown> = Promise.resolve();
  private msPerToken?: number;

  constructor(
    private readonly model: LlamaModel,
    private readonly sequence: LlamaContextSequence,
  ) {}

  get contextSize(): number {
    return this.sequence.contextSize;
  }

  /** Empties the KV cache: the next request evaluates its whole prompt (benchmarks compare policies from the same start). */
  reset(): Promise<void> {
    return this.exclusive(() => this.sequence.clearHistory());
  }

  /** Measured milliseconds per prompt token on this machine (undefined before the first measured evaluation). */
  get promptMsPerToken(): number | undefined {
    return this.msPerToken;
  }

  /** How many leading tokens of `tokens` the KV cache holds now (what a request for them would not evaluate). */
  cachedPrefix(tokens: readonly number[]): number {
    return tokens.length ? this.sequence.compareContextTokens(asTokens(tokens)).firstDifferentIndex : 0;
  }

  /**
   * Evaluates `tokens` into the KV cache in small steps, stopping between steps when `signal` aborts: prompt
   * growth in the background that a new request interrupts. Returns whether all of `tokens` are cached.
   */
  async prefill(tokens: readonly number[], signal: AbortSignal): Promise<boolean> {
    return this.exclusive(async () => {
      if (signal.aborted) return false;
      const { reused } = await this.align(tokens);
      const step = Math.max(1, Math.min(MAX_PREFILL_STEP_TOKENS, Math.floor(PREFILL_STEP_MS / (this.msPerToken ?? 1))));
      for (let at = reused; at < tokens.length; at += step) {
        if (signal.aborted) return false;
        const chunk = tokens.slice(at, at + step);
        const started = performance.now();
        await this.sequence.evaluateWithoutGeneratingNewTokens(asTokens(chunk));
        this.timed(chunk.length, performance.now() - started);
      }
      return true;
    });
  }

  /** Evaluates `tokens` and returns the distribution of the token after them. */
  async probe(tokens: readonly number[]): Promise<ProbeResult> {
    return this.exclusive(async () => {
      const cost = await this.align(tokens);
      const rest = asTokens(tokens.slice(cost.reused));
      const input = rest.map((t, i) =>
        i === rest.length - 1 ? ([t, { generateNext: { probabilities: true } }] as const) : t,
      );
      const started = performance.now();
      const result = await this.sequence.controlledEvaluate(
        input as Parameters<LlamaContextSequence['controlledEvaluate']>[0],
      );
      this.timed(rest.length, performance.now() - started);
      const probabilities = result[rest.length - 1]?.next.probabilities;
      if (!probabilities) throw new Error('the model returned no next-token probabilities');
      return { ...cost, probabilities };
    });
  }

  /** Greedy generation after `tokens`, streamed; stops within one token of an abort. */
  async generate(tokens: readonly number[], options: GenerateOptions): Promise<GenerateResult> {
    return this.exclusive(async () => {
      const cost = await this.align(tokens);
      const out: Token[] = [];
      const confidences: number[] = [];
      let text = '';
      let firstTokenAt: number | undefined;
      let stoppedBy: GenerateResult['stoppedBy'] = 'max-tokens';
      if (options.signal?.aborted || options.maxTokens <= 0) {
        return { ...cost, text, tokens: out, confidences, stoppedBy: options.signal?.aborted ? 'abort' : 'max-tokens' };
      }
      const evaluationStarted = performance.now();
      const stream = this.sequence.evaluateWithMetadata(
        asTokens(tokens.slice(cost.reused)),
        { confidence: true },
        { temperature: 0 },
      );
      for await (const { token, confidence } of stream) {
        if (firstTokenAt === undefined) {
          firstTokenAt = performance.now();
          this.timed(cost.evaluated, firstTokenAt - evaluationStarted);
        }
        if (options.stopIds.includes(token)) {
          stoppedBy = 'stop-token';
          break;
        }
        out.push(token);
        confidences.push(confidence);
        const decoded = this.model.detokenize(out, false);
        // A token can end inside a multi-byte character; wait for the rest before showing it.
        if (!decoded.endsWith('\uFFFD') && decoded !== text) {
          text = decoded;
          if (options.onText?.(text)) {
            stoppedBy = 'caller';
            break;
          }
        }
        if (options.signal?.aborted) {
          stoppedBy = 'abort';
          break;
        }
        if (out.length >= options.maxTokens) break;
      }
      return { ...cost, text: this.model.detokenize(out, false), tokens: out, confidences, firstTokenAt, stoppedBy };
    });
  }

  private timed(tokens: number, ms: number): void {
    if (tokens < MIN_TIMED_TOKENS) return;
    const perToken = ms / tokens;
    this.msPerToken =
      this.msPerToken === undefined ? perToken : this.msPerToken + SPEED_SMOOTHING * (perToken - this.msPerToken);
  }

  /** Drops what the cache holds after the prefix it shares with `tokens`; at least the last token is re-evaluated so its logits exist. */
  private async align(tokens: readonly number[]): Promise<EvaluationCost> {
    if (tokens.length === 0) throw new Error('empty prompt');
    if (tokens.length > this.sequence.contextSize) {
      throw new Error(`prompt of ${tokens.length} tokens exceeds the context of ${this.sequence.contextSize}`);
    }
    const shared = Math.min(
      this.sequence.compareContextTokens(asTokens(tokens)).firstDifferentIndex,
      tokens.length - 1,
    );
    if (shared < this.sequence.nextTokenIndex) {
      await this.sequence.eraseContextTokenRanges([{ start: shared, end: this.sequence.nextTokenIndex }]);
    }
    return { reused: shared, evaluated: tokens.length - shared };
  }

  /**
   * Requests on one sequence run one at a time: the cache state is the next request's starting point. Callers
   * abort the previous request first, so the wait is at most one token.
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
