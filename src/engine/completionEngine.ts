/**
 * One completion, end to end (docs/architecture.md, "The flow of one completion"): cut the prompt to its token budget,
 * ask the gate, retrieve and pack cross-file context only when it fires, generate with streaming and abort,
 * post-process. With a gate-token model the gate prefix is evaluated once: generation continues the same
 * KV-cache sequence with `<cc>CC<fim_middle>` or `<fim_middle>`.
 */
import { DEFAULTS } from '../defaults';
import { decideGate, type GateDecision, type GatePolicyName, type GateThresholds } from '../gate/gate';
import { FITTED_HEURISTIC, gateNames, heuristicFeatures, type HeuristicModel } from '../gate/heuristic';
import {
  renderGateContinuation,
  renderGatePrefix,
  renderPrompt,
  specialTexts,
  type PromptInput,
} from '../model/families';
import {
  cutLeft,
  cutRight,
  DEFAULT_BUDGET,
  fitBudget,
  fitSnippets,
  leftEnd,
  type PromptBudget,
  type PromptLayout,
} from '../model/promptBudget';
import { probabilityOf, timedSession, type GenerateResult, type TokenModel } from '../model/tokenModel';
import type { Cursor, RecentFile, RetrievalRequest, RetrievalResult, Snippet } from '../retrieval/types';
import { offsetOf } from '../retrieval/cursor';
import { firstLineReady, postprocess, type CompletionMode, type PostprocessContext } from './postprocess';

export type RetrieveFn = (request: RetrievalRequest) => Promise<RetrievalResult>;

export interface EngineOptions {
  generator: TokenModel;
  /** A small `<cc>` model that decides for a generator without a gate token (Repoformer §5.3). */
  policyModel?: TokenModel;
  /** Absent where the workspace may not be read (untrusted): completions without retrieval. */
  retrieve?: RetrieveFn;
  gate: GatePolicyName;
  /** Overrides the model's recommended threshold (line mode); multi-line uses 0.75 of it, as 0.15 is to 0.2. */
  gateThreshold?: number;
  budget?: Partial<PromptBudget>;
  /** Most lines of a multi-line completion. */
  maxLines?: number;
  /** Characters of packed context asked from retrieval before the token cap applies. */
  contextBudget?: number;
  heuristic?: HeuristicModel;
  /**
   * Longest expected evaluation of a request's uncached prompt before the prompt is cut shorter and grown in the
   * background; 0 turns the time budget off (benchmarks of quality, where every request starts cold).
   */
  firstPromptMs?: number;
  /** Default 'auto': the 'line' layout (typing within a line only appends to the prompt) where the model is slow. */
  layout?: PromptLayout | 'auto';
  /**
   * Longest generation after the first token before the first line is shown as it stands (a line completion
   * stops there); 0 turns the cap off.
   */
  showWithinMs?: number;
}

export interface CompletionRequest {
  path: string;
  text: string;
  cursor: Cursor;
  /** Default: multi-line on an empty line that opens a block body, single line elsewhere. */
  mode?: CompletionMode;
  recent?: RecentFile[];
  /** Forces a policy for this request (benchmarks compare policies on the same engine). */
  gate?: GatePolicyName;
}

export interface CompletionTimings {
  gateMs: number;
  retrievalMs: number;
  firstTokenMs?: number;
  totalMs: number;
  /** Generated tokens per second after the first token (undefined when fewer than two were generated). */
  generationTokS?: number;
}

export interface CompletionResult {
  text: string;
  raw: string;
  mode: CompletionMode;
  gate: GateDecision;
  snippets: Snippet[];
  prompt: { tokens: number; evaluated: number; leftTokens: number; rightTokens: number; contextTokens: number };
  timings: CompletionTimings;
  aborted: boolean;
}

/** What serves completions: the engine itself, or its client in another process. */
export interface CompletionBackend {
  complete(request: CompletionRequest, options?: CompleteOptions): Promise<CompletionResult>;
  /** Prepares the KV cache for requests at this cursor's line, in the background (see CompletionEngine.warm). */
  warm(request: CompletionRequest): void;
}

export interface CompleteOptions {
  signal?: AbortSignal;
  /** The post-processed completion whenever its first line is complete and it grows. */
  onPartial?(text: string): void;
}

/** Tokens of the draft the heuristic gate generates without retrieval. */
const DRAFT_TOKENS = 8;
const MULTILINE_GENERATION_TOKENS = 256;
const REPOFORMER_LINE_THRESHOLD = 0.2;
/** A prompt whose uncached part would take longer to evaluate is cut shorter: a suggestion within about a second. */
const FIRST_PROMPT_MS = 700;
/** The shortest contexts of a cut prompt: below these a suggestion is mostly noise. */
const MIN_QUICK_LEFT_TOKENS = 32;
const MIN_QUICK_RIGHT_TOKENS = 16;
/**
 * Longest acceptable re-evaluation of what follows the cursor per keystroke: a model slower than this gets the
 * 'line' layout. The tiny demo model (~1 ms a token, ~70 ms a keystroke) stays on the layout it was trained on
 * even on a loaded machine; a 0.5B model on a 2-core CPU (~14 ms a token, ~1 s a keystroke) does not.
 */
const LINE_LAYOUT_MS = 300;
/** Markers after the cursor in a psm prompt: suffix, eof, cc, middle, with a margin. */
const SPECIAL_TOKENS_AFTER_CURSOR = 6;
/** A pause this long after a request lets the cached prompt grow in the background. */
const GROW_IDLE_MS = 800;
/**
 * Generation after the first token before an unfinished first line is shown as it stands: on a slow machine a
 * shorter suggestion in time beats a whole line late (llama.vscode's t_max_predict_ms idea). A 0.5B model on a
 * 2-core CPU writes ~25 tokens in it, a typical line; the demo model finishes its lines well within it.
 */
const SHOW_WITHIN_MS = 1000;

/**
 * The gate's decision and the packed context for one line start (left context up to the line, right context):
 * with the 'line' layout they do not depend on what is typed in the line, so keystrokes in the line reuse them
 * and the context's KV cache with them.
 */
interface LineState {
  key: string;
  gate: GateDecision;
  snippets: Snippet[];
  contextTokens: number;
}

/**
 * What belongs to a generator's KV cache rather than to one engine (the engine process makes an engine per
 * request): the line state, the layout chosen for the model, and the background growth of the cached prompt.
 */
interface KvState {
  line?: LineState;
  layout?: PromptLayout;
  /** Stopped by the next request. */
  growth?: AbortController;
  grown: Promise<void>;
}

const kvStates = new WeakMap<TokenModel, KvState>();

/** A block opener at the end of the previous line and nothing typed yet on this one: a body is wanted. */
export function detectMode(text: string, cursor: Cursor): CompletionMode {
  const lines = text.split('\n');
  const current = lines[cursor.line] ?? '';
  if (current.slice(0, cursor.character).trim() || current.slice(cursor.character).trim()) return 'line';
  let previous = cursor.line - 1;
  while (previous >= 0 && !lines[previous].trim()) previous--;
  return previous >= 0 && /[{:(\[]\s*$|=>\s*$/.test(lines[previous]) ? 'multiline' : 'line';
}

export class CompletionEngine implements CompletionBackend {
  private readonly heuristic: HeuristicModel;

  constructor(private readonly options: EngineOptions) {
    this.heuristic = options.heuristic ?? FITTED_HEURISTIC;
  }

  get thresholds(): GateThresholds {
    const line = this.options.gateThreshold ?? this.gateModel()?.info.gateThreshold ?? REPOFORMER_LINE_THRESHOLD;
    return { line, multiline: line * 0.75 };
  }

  async complete(request: CompletionRequest, options: CompleteOptions = {}): Promise<CompletionResult> {
    const started = performance.now();
    this.kv.growth?.abort();
    const { generator } = this.options;
    const family = generator.info.family;
    const mode = request.mode ?? detectMode(request.text, request.cursor);
    const budget = this.budget(mode);
    const offset = offsetOf(request.text, request.cursor);
    const split = leftEnd(
      request.text,
      offset,
      family.family.order === 'psm' ? this.layout(generator, budget) : 'cursor',
    );
    const count = (text: string): number => generator.countTokens(text);
    // The typed part of the line follows the middle marker: the start of the middle the model continues.
    const typed = generator.tokenize([{ text: request.text.slice(split, offset) }]);
    const cut = (leftTokens: number, rightTokens: number): PromptInput =>
      cutInput(generator, request, split, offset, leftTokens - typed.length, rightTokens);
    const plainTokens = (prompt: PromptInput): number[] => [
      ...generator.promptTokens(renderPrompt(family, prompt)),
      ...typed,
    ];
    const { input, grow } = this.fitTime(generator, budget, cut, plainTokens);
    const post = postprocessContext(request, mode, this.options.maxLines ?? DEFAULTS.maxLines, specialTexts(family));
    const gatePrefix = family.hasGate ? generator.promptTokens(renderGatePrefix(family, input)) : undefined;
    const plainPrompt = (): number[] => plainTokens(input);
    const policy = request.gate ?? this.options.gate;
    const lineKey =
      split < offset
        ? [request.path, mode, policy, this.thresholds.line, budget.contextTokens, input.left, input.right].join('\0')
        : undefined;
    const known = lineKey !== undefined && this.kv.line?.key === lineKey ? this.kv.line : undefined;

    // Prompt tokens the models evaluated for this request (the rest came from the KV cache).
    let evaluated = 0;
    let draft: GenerateResult | undefined;
    let trial: RetrievalResult | undefined;
    const gateStarted = performance.now();
    const gate =
      known?.gate ??
      (await decideGate(
        policy,
        {
          gateProbability: async () => {
            const gateModel = this.gateModel();
            if (!gateModel) return undefined;
            const tokens =
              gateModel === generator
                ? gatePrefix!
                : gateModel.promptTokens(renderGatePrefix(gateModel.info.family, input));
            const probe = await gateModel.session.probe(tokens);
            evaluated += probe.evaluated;
            const cc = gateModel.info.family.ids.cc!;
            return {
              probability: probabilityOf(probe, cc),
              source: gateModel === generator ? 'generator' : 'policy-model',
            };
          },
          heuristicFeatures: async () => {
            trial = await this.retrieveFor(request, undefined, gateNames(request.text, request.cursor.line));
            draft = await generator.session.generate(plainPrompt(), {
              maxTokens: DRAFT_TOKENS,
              stopIds: family.stopIds,
              signal: options.signal,
            });
            evaluated += draft.evaluated;
            const declaredElsewhere = new Set(trial?.declaredElsewhere);
            return heuristicFeatures({
              text: request.text,
              cursor: request.cursor,
              trial: trial?.snippets ?? [],
              draft,
              declaredElsewhere,
            });
          },
        },
        { multiline: mode === 'multiline', thresholds: this.thresholds, heuristic: this.heuristic },
      ));
    const gateMs = performance.now() - gateStarted;

    let snippets: Snippet[] = known?.snippets ?? [];
    let contextTokens = known?.contextTokens ?? 0;
    const retrievalStarted = performance.now();
    if (!known && gate.fire && !options.signal?.aborted) {
      // RepoCoder's second iteration: a draft is a better query than the unfinished line.
      const retrieved = draft?.text.trim()
        ? await this.retrieveFor(request, draft.text)
        : (trial ?? (await this.retrieveFor(request)));
      const render = (kept: readonly Snippet[]): number =>
        generator.tokenize(
          family.hasGate
            ? renderGateContinuation(family, { ...input, context: kept })
            : renderPrompt(family, { ...input, context: kept }),
        ).length;
      const without = render([]);
      snippets = fitSnippets(retrieved?.snippets ?? [], budget.contextTokens, (kept) => render(kept) - without);
      contextTokens = snippets.length ? render(snippets) - without : 0;
    }
    const retrievalMs = gate.fire && !known ? performance.now() - retrievalStarted : 0;
    if (lineKey !== undefined && !options.signal?.aborted)
      this.kv.line = { key: lineKey, gate, snippets, contextTokens };

    const withSnippets: PromptInput = { ...input, context: snippets };
    const tokens = [
      ...(gatePrefix
        ? [...gatePrefix, ...generator.tokenize(renderGateContinuation(family, withSnippets))]
        : generator.promptTokens(renderPrompt(family, withSnippets))),
      ...typed,
    ];
    // Without retrieval the heuristic's draft is the start of the same completion: continue it, don't redo it.
    const fromDraft = !gate.fire && draft !== undefined && draft.stoppedBy !== 'abort' ? draft : undefined;
    const head = fromDraft?.text ?? '';
    let lastShown = '';
    const showWithinMs = this.options.showWithinMs ?? SHOW_WITHIN_MS;
    let firstTextAt: number | undefined;
    const onText = (text: string): boolean => {
      const raw = head + text;
      firstTextAt ??= performance.now();
      const late = showWithinMs > 0 && performance.now() - firstTextAt >= showWithinMs;
      if (!late && !firstLineReady(raw, post)) return false;
      const shown = postprocess(raw, post);
      if (shown && shown !== lastShown) {
        lastShown = shown;
        options.onPartial?.(shown);
      }
      return mode === 'line';
    };
    const rest =
      fromDraft?.stoppedBy === 'stop-token'
        ? undefined
        : await generator.session.generate(fromDraft ? [...tokens, ...fromDraft.tokens] : tokens, {
            maxTokens: budget.generationTokens - (fromDraft?.tokens.length ?? 0),
            stopIds: family.stopIds,
            signal: options.signal,
            onText,
          });
    if (grow && !options.signal?.aborted) this.scheduleGrowth(generator, plainTokens(grow), GROW_IDLE_MS);
    const raw = head + (rest?.text ?? '');
    const firstTokenAt = fromDraft?.firstTokenAt ?? rest?.firstTokenAt;
    evaluated += rest?.evaluated ?? 0;
    const text = postprocess(raw, post);
    // A completion that ended before its first line did is complete now: streamed like any first line.
    if (text && text !== lastShown && !options.signal?.aborted) options.onPartial?.(text);
    return {
      text,
      raw,
      mode,
      gate,
      snippets,
      prompt: {
        tokens: tokens.length,
        evaluated,
        leftTokens: count(input.left) + typed.length,
        rightTokens: count(input.right),
        contextTokens,
      },
      timings: {
        gateMs,
        retrievalMs,
        firstTokenMs: firstTokenAt === undefined ? undefined : firstTokenAt - started,
        totalMs: performance.now() - started,
        generationTokS:
          rest?.firstTokenAt !== undefined && rest.tokens.length > 1
            ? (rest.tokens.length - 1) / ((performance.now() - rest.firstTokenAt) / 1000)
            : undefined,
      },
      aborted: options.signal?.aborted ?? false,
    };
  }

  /** The token budgets of a request in `mode`, fitted to the generator's context. */
  private budget(mode: CompletionMode): PromptBudget {
    return fitBudget(
      {
        ...DEFAULT_BUDGET,
        ...(mode === 'multiline' ? { generationTokens: MULTILINE_GENERATION_TOKENS } : {}),
        ...this.options.budget,
      },
      this.options.generator.info.contextSize,
    );
  }

  /** What this engine keeps with its generator's KV cache (shared with the other engines of the same model). */
  private get kv(): KvState {
    const generator = this.options.generator;
    let state = kvStates.get(generator);
    if (!state) kvStates.set(generator, (state = { grown: Promise.resolve() }));
    return state;
  }

  /**
   * 'auto' (the default) chooses once per loaded model from its measured prompt speed: the 'line' layout when
   * re-evaluating what follows the cursor (the right context and the markers) would take longer than
   * LINE_LAYOUT_MS, the 'cursor' layout (the one FIM models are trained on) otherwise.
   */
  private layout(generator: TokenModel, budget: PromptBudget): PromptLayout {
    const chosen = this.options.layout ?? 'auto';
    if (chosen !== 'auto') return chosen;
    // A server's prompt speed is not measured here: keep the layout the model was trained on.
    const timed = timedSession(generator.session);
    if (!timed) return 'cursor';
    const msPerToken = timed.promptMsPerToken;
    if (msPerToken === undefined) return 'line';
    this.kv.layout ??=
      msPerToken * (budget.rightTokens + SPECIAL_TOKENS_AFTER_CURSOR) > LINE_LAYOUT_MS ? 'line' : 'cursor';
    return this.kv.layout;
  }

  /**
   * The prompt for this request under the time budget: the configured budget when what the KV cache lacks of it
   * evaluates within `firstPromptMs` at the measured speed (the usual case while typing), else the largest rung
   * of a ladder of halved left contexts that does (a new file, a jump) — then `grow` is the next rung up, filled
   * into the cache in the background once the user pauses, so that later requests get the longer context.
   */
  private fitTime(
    generator: TokenModel,
    budget: PromptBudget,
    cut: (leftTokens: number, rightTokens: number) => PromptInput,
    plainTokens: (input: PromptInput) => number[],
  ): { input: PromptInput; grow?: PromptInput } {
    const full = cut(budget.leftTokens, budget.rightTokens);
    const limitMs = this.options.firstPromptMs ?? FIRST_PROMPT_MS;
    const timed = timedSession(generator.session);
    const msPerToken = timed?.promptMsPerToken;
    if (!timed || limitMs <= 0 || msPerToken === undefined) return { input: full };
    const fits = (input: PromptInput): boolean => {
      const tokens = plainTokens(input);
      return (tokens.length - timed.cachedPrefix(tokens)) * msPerToken <= limitMs;
    };
    if (fits(full)) return { input: full };
    let above = full;
    for (let left = Math.floor(budget.leftTokens / 2); ; left = Math.floor(left / 2)) {
      const rung = cut(
        Math.max(left, MIN_QUICK_LEFT_TOKENS),
        Math.min(budget.rightTokens, Math.max(MIN_QUICK_RIGHT_TOKENS, left / 2)),
      );
      if (left <= MIN_QUICK_LEFT_TOKENS || fits(rung)) return { input: rung, grow: above };
      above = rung;
    }
  }

  /** After `idleMs` without a request, evaluates `tokens` into the cache in steps (the next request stops it). */
  private scheduleGrowth(generator: TokenModel, tokens: number[], idleMs: number): void {
    const timed = timedSession(generator.session);
    if (!timed) return;
    const controller = new AbortController();
    this.kv.growth = controller;
    this.kv.grown = new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          void timed
            .prefill(tokens, controller.signal)
            .catch(() => false)
            .then(() => resolve()),
        idleMs,
      );
      controller.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Evaluates the prompt of the cursor's line start into the KV cache in the background (a file opened, the
   * cursor moved somewhere): the first request on that line then evaluates only what was typed since, instead
   * of the whole prompt. The next request stops it; a server's cache is not ours to fill.
   */
  warm(request: CompletionRequest): void {
    const { generator } = this.options;
    if (!timedSession(generator.session)) return;
    const family = generator.info.family;
    const budget = this.budget('line');
    const lineStart = offsetOf(request.text, { line: request.cursor.line, character: 0 });
    const input = cutInput(generator, request, lineStart, lineStart, budget.leftTokens, budget.rightTokens);
    // What a request on this line evaluates first: the gate prefix, which its generation continues, or the prompt.
    const prompt = family.hasGate ? renderGatePrefix(family, input) : renderPrompt(family, input);
    this.kv.growth?.abort();
    this.scheduleGrowth(generator, generator.promptTokens(prompt), 0);
  }

  /** Stops the background growth of the cached prompt (the model is about to be used for something else). */
  stopBackground(): void {
    this.kv.growth?.abort();
  }

  /** Resolves when the background growth the last request scheduled has finished or stopped (what a pause allows). */
  settled(): Promise<void> {
    return this.kv.grown;
  }

  /** The model that reads P(<cc>): the generator when it has the gate token, else the policy model. */
  private gateModel(): TokenModel | undefined {
    if (this.options.generator.info.family.hasGate) return this.options.generator;
    return this.options.policyModel?.info.family.hasGate ? this.options.policyModel : undefined;
  }

  private async retrieveFor(
    request: CompletionRequest,
    draft?: string,
    names?: string[],
  ): Promise<RetrievalResult | undefined> {
    if (!this.options.retrieve) return undefined;
    return this.options.retrieve({
      path: request.path,
      text: request.text,
      cursor: request.cursor,
      draft,
      recent: request.recent,
      budget: this.options.contextBudget ?? DEFAULTS.contextBudget,
      names,
    });
  }
}

/** The left context ending at `split` (the cursor or its line start) and the right context from `offset`. */
function cutInput(
  generator: TokenModel,
  request: Pick<CompletionRequest, 'path' | 'text'>,
  split: number,
  offset: number,
  leftTokens: number,
  rightTokens: number,
): PromptInput {
  const count = (text: string): number => generator.countTokens(text);
  return {
    path: request.path,
    left: cutLeft(request.text.slice(0, split), leftTokens, count),
    right: cutRight(request.text.slice(offset), rightTokens, count),
  };
}

function postprocessContext(
  request: CompletionRequest,
  mode: CompletionMode,
  maxLines: number,
  specialTokens: string[],
): PostprocessContext {
  const lines = request.text.split('\n');
  const current = lines[request.cursor.line] ?? '';
  return {
    mode,
    maxLines,
    linePrefix: current.slice(0, request.cursor.character),
    lineSuffix: current.slice(request.cursor.character),
    nextLines: lines.slice(request.cursor.line + 1),
    specialTokens,
  };
}
