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
  cutLeftAnchored,
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
import { offsetOf } from '../index/cursor';
import { ModelState, type LeftAnchor, type LineState } from './modelState';
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

/** One request's prompt before the cross-file context: its mode, budgets, cut contexts and line start. */
interface PromptPlan {
  mode: CompletionMode;
  budget: PromptBudget;
  policy: GatePolicyName;
  /** The typed part of the cursor's line: after the middle marker with the 'line' layout, else empty. */
  typed: number[];
  input: PromptInput;
  /** The next rung of the time budget, grown into the cache in the background. */
  grow?: PromptInput;
  lineKey: string;
  /** Where the left context of the whole budget starts: the anchor for the requests after this one. */
  anchor: LeftAnchor;
  /** The context this line start has, or is expected to get (see expectedContext). */
  expected: Snippet[];
}

/** A line start decided: its state, the prompt tokens the decision evaluated, and the heuristic gate's draft. */
interface LineDecision {
  line: LineState;
  evaluated: number;
  draft?: GenerateResult;
  /** The context the draft was written after: the completion continues the draft only over the same context. */
  draftContext?: readonly Snippet[];
  gateMs: number;
  retrievalMs: number;
}

/** What generation produced after the prompt (continuing the heuristic's draft when there is one). */
interface Streamed {
  raw: string;
  text: string;
  evaluated: number;
  firstTokenAt?: number;
  generationTokS?: number;
}

/**
 * The left context is cut for the typed part of the line rounded up to this many tokens, so that the cut does not
 * move while the line is typed, nor between a line start prepared in the background and the request there.
 */
const TYPED_TOKENS_STEP = 32;
/**
 * The left window stays where it started while the cursor moves down at most this many lines of the same
 * document (typing new lines, a pasted block); farther is a jump, cut afresh like any first request.
 */
const STRETCH_LINES = 16;
/**
 * When the anchored window outgrows the budget, the fresh cut leaves this many tokens free: about 25 lines of
 * code are then appended before it moves again (each move re-evaluates the whole left context).
 */
const ANCHOR_SLACK_TOKENS = 256;
/**
 * A stretch keeps its cross-file context unless the new retrieval's best snippet is not in it and fewer than this
 * share of the new snippets are: retrieval that mostly agrees is not clearly better, and changing the context
 * re-evaluates it and everything after it.
 */
const KEPT_CONTEXT_OVERLAP = 0.5;
/** A line ending like a statement, a block or an argument ends: the next line start is worth preparing. */
const FINISHED_LINE = /[;{}()[\],:]\s*$/;

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

  /**
   * The request's steps: fit the prompt to the token and time budgets, take the line start's gate decision and
   * context (decided at its first request, or prepared in the background), stream the generation, then leave
   * work for the next pause (grow the cut prompt, or prepare the next line).
   */
  async complete(request: CompletionRequest, options: CompleteOptions = {}): Promise<CompletionResult> {
    const started = performance.now();
    this.kv.stopBackground();
    const plan = this.planPrompt(request, true);
    this.kv.anchor = plan.anchor;
    const known = this.kv.line(plan.lineKey);
    const decided = known
      ? { line: known, evaluated: 0, gateMs: 0, retrievalMs: 0 }
      : await this.decideLine(request, plan, options.signal);
    if (!options.signal?.aborted) this.kv.remember(decided.line);
    const tokens = [...this.promptHead(plan.input, decided.line.snippets), ...plan.typed];
    const draft = sameSnippets(decided.draftContext, decided.line.snippets) ? decided.draft : undefined;
    const streamed = await this.stream(request, plan, tokens, draft, options);
    if (!options.signal?.aborted) this.scheduleBackground(request, plan, decided.line, streamed.text);
    const count = (text: string): number => this.options.generator.countTokens(text);
    return {
      text: streamed.text,
      raw: streamed.raw,
      mode: plan.mode,
      gate: decided.line.gate,
      snippets: decided.line.snippets,
      prompt: {
        tokens: tokens.length,
        evaluated: decided.evaluated + streamed.evaluated,
        leftTokens: count(plan.input.left) + plan.typed.length,
        rightTokens: count(plan.input.right),
        contextTokens: decided.line.contextTokens,
      },
      timings: {
        gateMs: decided.gateMs,
        retrievalMs: decided.retrievalMs,
        firstTokenMs: streamed.firstTokenAt === undefined ? undefined : streamed.firstTokenAt - started,
        totalMs: performance.now() - started,
        generationTokS: streamed.generationTokS,
      },
      aborted: options.signal?.aborted ?? false,
    };
  }

  /**
   * Mode, budgets and layout of a request, and its left and right contexts cut to the token budget — and, when
   * `timeBudget`, to what evaluates within the time budget (see fitTime).
   */
  private planPrompt(request: CompletionRequest, timeBudget: boolean): PromptPlan {
    const { generator } = this.options;
    const mode = request.mode ?? detectMode(request.text, request.cursor);
    const budget = this.budget(mode);
    const offset = offsetOf(request.text, request.cursor);
    const order = generator.info.family.family.order;
    const split = leftEnd(request.text, offset, order === 'psm' ? this.layout(generator, budget) : 'cursor');
    // The typed part of the line follows the middle marker: the start of the middle the model continues.
    const typed = generator.tokenize([{ text: request.text.slice(split, offset) }]);
    const typedAllowance = Math.ceil(typed.length / TYPED_TOKENS_STEP) * TYPED_TOKENS_STEP;
    const anchor = this.anchorFor(request, split);
    // The whole budget's window starts at the anchor while it fits; the time budget's shorter rungs are cut afresh.
    const cut = (leftTokens: number, rightTokens: number): PromptInput =>
      cutInput(generator, request, split, offset, leftTokens - typedAllowance, rightTokens, {
        anchor: leftTokens === budget.leftTokens ? anchor : undefined,
        slack: ANCHOR_SLACK_TOKENS,
      });
    const policy = request.gate ?? this.options.gate;
    const lineKey = [
      request.path,
      mode,
      policy,
      this.thresholds.line,
      budget.contextTokens,
      request.text.slice(0, split),
      request.text.slice(offset),
    ].join('\0');
    const expected = this.expectedContext(request.path, policy, lineKey);
    const whole = cut(budget.leftTokens, budget.rightTokens);
    const fitted = timeBudget
      ? this.fitTime(generator, budget, whole, cut, (input) => [...this.promptHead(input, expected), ...typed])
      : { input: whole };
    const windowed = { path: request.path, offset: split - whole.left.length, text: whole.left };
    return { mode, budget, policy, typed, ...fitted, lineKey, anchor: windowed, expected };
  }

  /**
   * The offset the left window starts at when the last request's window is still in the document, unchanged, and
   * this request's line is at most STRETCH_LINES below where it ended (the same editing stretch).
   */
  private anchorFor(request: CompletionRequest, split: number): number | undefined {
    const anchor = this.kv.anchor;
    if (!anchor || anchor.path !== request.path || !request.text.startsWith(anchor.text, anchor.offset))
      return undefined;
    const end = anchor.offset + anchor.text.length;
    if (split < end) return undefined;
    let lines = 0;
    for (let at = request.text.indexOf('\n', end); at >= 0 && at < split; at = request.text.indexOf('\n', at + 1))
      if (++lines > STRETCH_LINES) return undefined;
    return anchor.offset;
  }

  /**
   * The context a line start's prompt has or will likely have: its own once decided; before that, where the
   * family puts the context before the current file, the stretch's (kept unless retrieval finds clearly better);
   * else none. The time budget measures what is cached against it, and the heuristic's draft is written after it.
   */
  private expectedContext(path: string, policy: GatePolicyName, lineKey: string): Snippet[] {
    const known = this.kv.line(lineKey);
    if (known) return known.snippets;
    const stretch = this.kv.context;
    return this.contextFirst() && stretch?.path === path && stretch.policy === policy ? stretch.snippets : [];
  }

  /** The family puts the cross-file context before the current file (not after it, as Repoformer's gate does). */
  private contextFirst(): boolean {
    return this.options.generator.info.family.family.context !== 'gate';
  }

  /** The prompt up to the typed part of the line: the gate prefix and its continuation, or the family's prompt. */
  private promptHead(input: PromptInput, snippets: readonly Snippet[]): number[] {
    const { generator } = this.options;
    const family = generator.info.family;
    const withSnippets: PromptInput = { ...input, context: snippets };
    return family.hasGate
      ? [
          ...generator.promptTokens(renderGatePrefix(family, input)),
          ...generator.tokenize(renderGateContinuation(family, withSnippets)),
        ]
      : generator.promptTokens(renderPrompt(family, withSnippets));
  }

  /** The gate's decision for a line start and, when it fires, the retrieved context fitted to its token cap. */
  private async decideLine(request: CompletionRequest, plan: PromptPlan, signal?: AbortSignal): Promise<LineDecision> {
    let evaluated = 0;
    let draft: GenerateResult | undefined;
    let trial: RetrievalResult | undefined;
    const gateStarted = performance.now();
    const gate = await decideGate(
      plan.policy,
      {
        gateProbability: async () => {
          const read = await this.readGate(plan.input);
          evaluated += read?.evaluated ?? 0;
          return read;
        },
        heuristicFeatures: async () => {
          trial = await this.retrieveFor(request, undefined, gateNames(request.text, request.cursor.line));
          draft = await this.draft(plan, plan.expected, signal);
          evaluated += draft.evaluated;
          const declaredElsewhere = new Set(trial?.declaredElsewhere);
          const inputs = { text: request.text, cursor: request.cursor, trial: trial?.snippets ?? [], draft };
          return heuristicFeatures({ ...inputs, declaredElsewhere });
        },
      },
      { multiline: plan.mode === 'multiline', thresholds: this.thresholds, heuristic: this.heuristic },
    );
    const gateMs = performance.now() - gateStarted;
    const retrievalStarted = performance.now();
    let context: { snippets: Snippet[]; contextTokens: number } = { snippets: [], contextTokens: 0 };
    if (gate.fire && !signal?.aborted) {
      // RepoCoder's second iteration: a draft is a better query than the unfinished line.
      const retrieved = draft?.text.trim()
        ? await this.retrieveFor(request, draft.text)
        : (trial ?? (await this.retrieveFor(request)));
      context = this.keptContext(request.path, plan, this.fitContext(plan, retrieved?.snippets ?? []));
    }
    const retrievalMs = gate.fire ? performance.now() - retrievalStarted : 0;
    const draftContext = draft ? plan.expected : undefined;
    return { line: { key: plan.lineKey, gate, ...context }, evaluated, draft, draftContext, gateMs, retrievalMs };
  }

  /**
   * The stretch's context instead of the freshly retrieved one unless the latter is clearly better (its best
   * snippet new and most of it new), where the family puts the context first: the KV cache then still holds it
   * and the left context after it. Recorded as the stretch's context.
   */
  private keptContext(
    path: string,
    plan: PromptPlan,
    fresh: { snippets: Snippet[]; contextTokens: number },
  ): { snippets: Snippet[]; contextTokens: number } {
    if (!this.contextFirst() || fresh.snippets.length === 0) return fresh;
    const stretch = this.kv.context;
    const kept =
      stretch?.path === path && stretch.policy === plan.policy && !clearlyBetter(fresh.snippets, stretch.snippets)
        ? this.fitContext(plan, stretch.snippets)
        : fresh;
    this.kv.context = { path, policy: plan.policy, snippets: kept.snippets };
    return kept;
  }

  /** P(<cc>) after the gate prefix, from the generator (whose generation then continues it) or the policy model. */
  private async readGate(
    input: PromptInput,
  ): Promise<{ probability: number; source: 'generator' | 'policy-model'; evaluated: number } | undefined> {
    const { generator } = this.options;
    const gateModel = this.gateModel();
    if (!gateModel) return undefined;
    const probe = await gateModel.session.probe(gateModel.promptTokens(renderGatePrefix(gateModel.info.family, input)));
    return {
      probability: probabilityOf(probe, gateModel.info.family.ids.cc!),
      source: gateModel === generator ? 'generator' : 'policy-model',
      evaluated: probe.evaluated,
    };
  }

  /**
   * The heuristic gate's short completion without new retrieval: after the stretch's context where the family
   * puts it first (the prompt the KV cache holds), else after none.
   */
  private draft(plan: PromptPlan, context: readonly Snippet[], signal?: AbortSignal): Promise<GenerateResult> {
    const { generator } = this.options;
    return generator.session.generate([...this.promptHead(plan.input, context), ...plan.typed], {
      maxTokens: DRAFT_TOKENS,
      stopIds: generator.info.family.stopIds,
      signal,
    });
  }

  /** The most best-first snippets whose rendering fits the context cap, and their tokens in the prompt. */
  private fitContext(plan: PromptPlan, retrieved: readonly Snippet[]): { snippets: Snippet[]; contextTokens: number } {
    const { generator } = this.options;
    const family = generator.info.family;
    const render = (kept: readonly Snippet[]): number =>
      generator.tokenize(
        family.hasGate
          ? renderGateContinuation(family, { ...plan.input, context: kept })
          : renderPrompt(family, { ...plan.input, context: kept }),
      ).length;
    const without = render([]);
    const snippets = fitSnippets(retrieved, plan.budget.contextTokens, (kept) => render(kept) - without);
    return { snippets, contextTokens: snippets.length ? render(snippets) - without : 0 };
  }

  /**
   * Generates after `tokens`, showing the first line as soon as it is complete (or late, after showWithinMs).
   * Without retrieval the heuristic's draft is the start of the same completion: continued, not redone.
   */
  private async stream(
    request: CompletionRequest,
    plan: PromptPlan,
    tokens: number[],
    draft: GenerateResult | undefined,
    options: CompleteOptions,
  ): Promise<Streamed> {
    const { generator } = this.options;
    const family = generator.info.family;
    const post = postprocessContext(
      request,
      plan.mode,
      this.options.maxLines ?? DEFAULTS.maxLines,
      specialTexts(family),
    );
    const fromDraft = draft !== undefined && draft.stoppedBy !== 'abort' ? draft : undefined;
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
      return plan.mode === 'line';
    };
    const rest =
      fromDraft?.stoppedBy === 'stop-token'
        ? undefined
        : await generator.session.generate(fromDraft ? [...tokens, ...fromDraft.tokens] : tokens, {
            maxTokens: plan.budget.generationTokens - (fromDraft?.tokens.length ?? 0),
            stopIds: family.stopIds,
            signal: options.signal,
            onText,
          });
    const raw = head + (rest?.text ?? '');
    const text = postprocess(raw, post);
    // A completion that ended before its first line did is complete now: streamed like any first line.
    if (text && text !== lastShown && !options.signal?.aborted) options.onPartial?.(text);
    return {
      raw,
      text,
      evaluated: rest?.evaluated ?? 0,
      firstTokenAt: fromDraft?.firstTokenAt ?? rest?.firstTokenAt,
      generationTokS:
        rest?.firstTokenAt !== undefined && rest.tokens.length > 1
          ? (rest.tokens.length - 1) / ((performance.now() - rest.firstTokenAt) / 1000)
          : undefined,
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
  private get kv(): ModelState {
    return ModelState.of(this.options.generator);
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
    full: PromptInput,
    cut: (leftTokens: number, rightTokens: number) => PromptInput,
    plainTokens: (input: PromptInput) => number[],
  ): { input: PromptInput; grow?: PromptInput } {
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

  /**
   * What a pause after this request is used for: once the line looks finished, preparing the next line's start
   * (grown a rung if the time budget cut this one: the finished line's own prompt is of no more use), else
   * growing a prompt the time budget cut into the cache. Local models only (a server's cache is not ours to
   * fill), and only with the time budget on (a benchmark of quality starts every request cold).
   */
  private scheduleBackground(request: CompletionRequest, plan: PromptPlan, line: LineState, completion: string): void {
    const timed = timedSession(this.options.generator.session);
    if (!timed || (this.options.firstPromptMs ?? FIRST_PROMPT_MS) <= 0) return;
    if (lineLooksFinished(request, completion)) {
      this.kv.schedule(GROW_IDLE_MS, (signal) => this.prepareNextLine(request, signal));
    } else if (plan.grow) {
      // With the line's context: the next keystroke on the line finds it cached after the growth too.
      const tokens = [...this.promptHead(plan.grow, line.snippets), ...plan.typed];
      this.kv.schedule(GROW_IDLE_MS, (signal) => timed.prefill(tokens, signal));
    }
  }

  /**
   * Prepares the start of a new line after the cursor's (as Enter would make it, with the same indentation): the
   * gate's decision and context for it, and its prompt evaluated into the KV cache, in steps the next request
   * interrupts. With Repoformer's layout the context follows the right context, so a new line re-evaluates all
   * of it; prepared during the pause at the end of a line, the line start evaluates only what was typed on it.
   */
  private async prepareNextLine(request: CompletionRequest, signal: AbortSignal): Promise<void> {
    const timed = timedSession(this.options.generator.session);
    const next = newLineAfter(request);
    // The rung of the time budget its request will find cached: one above what would fit now, as a growth.
    const planned = this.planPrompt(next, true);
    const plan = { ...planned, input: planned.grow ?? planned.input, grow: undefined };
    if (!timed) return;
    this.kv.anchor = plan.anchor;
    // What the gate reads first, in steps: its own evaluation is then a token or two.
    if (!(await timed.prefill(this.promptHead(plan.input, plan.expected), signal))) return;
    const line = this.kv.line(plan.lineKey) ?? (await this.decideLine(next, plan, signal)).line;
    if (signal.aborted) return;
    this.kv.remember(line);
    await timed.prefill(this.promptHead(plan.input, line.snippets), signal);
  }

  /**
   * Evaluates the prompt of the cursor's line start into the KV cache in the background (a file opened, the
   * cursor moved somewhere): the first request on that line then evaluates only what was typed since, instead
   * of the whole prompt. The next request stops it; a server's cache is not ours to fill.
   */
  warm(request: CompletionRequest): void {
    const { generator } = this.options;
    const timed = timedSession(generator.session);
    if (!timed) return;
    const family = generator.info.family;
    const budget = this.budget('line');
    const lineStart = offsetOf(request.text, { line: request.cursor.line, character: 0 });
    const input = cutInput(generator, request, lineStart, lineStart, budget.leftTokens, budget.rightTokens);
    // What a request on this line evaluates first: the gate prefix, which its generation continues, or the prompt.
    const tokens = generator.promptTokens(
      family.hasGate ? renderGatePrefix(family, input) : renderPrompt(family, input),
    );
    this.kv.schedule(0, (signal) => timed.prefill(tokens, signal));
  }

  /** Stops the background growth of the cached prompt (the model is about to be used for something else). */
  stopBackground(): void {
    this.kv.stopBackground();
  }

  /** Resolves when the background growth the last request scheduled has finished or stopped (what a pause allows). */
  settled(): Promise<void> {
    return this.kv.settled();
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
    try {
      return await this.options.retrieve({
        path: request.path,
        text: request.text,
        cursor: request.cursor,
        draft,
        recent: request.recent,
        budget: this.options.contextBudget ?? DEFAULTS.contextBudget,
        names,
      });
    } catch {
      // The index is rebuilding or its worker was lost (the editor restarts it and says so): a completion without
      // cross-file context beats none.
      return undefined;
    }
  }
}

/**
 * The left context ending at `split` (the cursor or its line start), from `window.anchor` while it fits, and the
 * right context from `offset`.
 */
function cutInput(
  generator: TokenModel,
  request: Pick<CompletionRequest, 'path' | 'text'>,
  split: number,
  offset: number,
  leftTokens: number,
  rightTokens: number,
  window: { anchor?: number; slack: number } = { slack: 0 },
): PromptInput {
  const count = (text: string): number => generator.countTokens(text);
  return {
    path: request.path,
    left: cutLeftAnchored(request.text.slice(0, split), window.anchor, leftTokens, window.slack, count),
    right: cutRight(request.text.slice(offset), rightTokens, count),
  };
}

const snippetKey = (s: Snippet): string => `${s.path}\0${s.text}`;

function sameSnippets(a: readonly Snippet[] | undefined, b: readonly Snippet[]): boolean {
  return a !== undefined && a.length === b.length && a.every((s, i) => snippetKey(s) === snippetKey(b[i]));
}

/** The fresh retrieval's best snippet is not in the kept context, and most of the fresh snippets are not either. */
function clearlyBetter(fresh: readonly Snippet[], kept: readonly Snippet[]): boolean {
  const known = new Set(kept.map(snippetKey));
  if (kept.length === 0 || known.has(snippetKey(fresh[0]))) return kept.length === 0;
  return fresh.filter((s) => known.has(snippetKey(s))).length < KEPT_CONTEXT_OVERLAP * fresh.length;
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

/**
 * The cursor is at the end of a line that ends as a statement or block does, or the model had nothing to add to
 * it: the next thing typed is probably a new line.
 */
function lineLooksFinished(request: CompletionRequest, completion: string): boolean {
  const line = request.text.split('\n')[request.cursor.line] ?? '';
  const before = line.slice(0, request.cursor.character);
  if (line.slice(request.cursor.character).trim() || !before.trim()) return false;
  return FINISHED_LINE.test(before) || completion.trim() === '';
}

/** The request after Enter at the end of the cursor's line: a new line with the same indentation, nothing typed. */
function newLineAfter(request: CompletionRequest): CompletionRequest {
  const offset = offsetOf(request.text, request.cursor);
  const line = request.text.split('\n')[request.cursor.line] ?? '';
  const indent = line.slice(0, line.length - line.trimStart().length);
  return {
    ...request,
    text: `${request.text.slice(0, offset)}\n${indent}${request.text.slice(offset)}`,
    cursor: { line: request.cursor.line + 1, character: indent.length },
    mode: 'line',
  };
}
