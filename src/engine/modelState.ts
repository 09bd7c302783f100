/**
 * What belongs to a loaded model's KV cache rather than to one engine (the engine process makes an engine per
 * request): the line starts decided, the layout chosen for the model, and the background work on the cached
 * prompt, which the next request stops.
 */
import type { GateDecision } from '../gate/gate';
import type { PromptLayout } from '../model/promptBudget';
import type { TokenModel } from '../model/tokenModel';
import type { Snippet } from '../retrieval/types';

/**
 * The gate's decision and the packed context for one line start (the document above the cursor's line and after
 * the cursor, the mode and the policy): with the 'line' layout they do not depend on what is typed in the line,
 * so keystrokes in the line reuse them, and the context's KV cache with them. The time budget's cut does not
 * change them either: the gate decides once per line start.
 */
export interface LineState {
  key: string;
  gate: GateDecision;
  snippets: Snippet[];
  contextTokens: number;
}

/**
 * The cross-file context of the current editing stretch (its file and gate policy): where the family puts the
 * context before the current file, later line starts keep it unless retrieval finds clearly better, so the KV
 * cache's copy of it, and of the left context after it, stays valid.
 */
export interface StretchContext {
  path: string;
  policy: string;
  snippets: Snippet[];
}

/**
 * Where the left context window started at the last request: later requests a few lines further down the same
 * document start there too while it fits, so a new line only appends to the prompt.
 */
export interface LeftAnchor {
  path: string;
  /** Offset of the window's first character in the document. */
  offset: number;
  /** The window's text (from `offset` to the end of the left context): still there, unchanged, for the anchor to hold. */
  text: string;
}

/** The line states kept: the line being typed and the next one, prepared in the background. */
const KEPT_LINE_STATES = 2;

export class ModelState {
  private static readonly states = new WeakMap<TokenModel, ModelState>();
  private lines: LineState[] = [];
  layout?: PromptLayout;
  context?: StretchContext;
  anchor?: LeftAnchor;
  private background?: AbortController;
  private done: Promise<void> = Promise.resolve();

  /** The one state of a loaded model, shared by every engine that uses it. */
  static of(model: TokenModel): ModelState {
    let state = ModelState.states.get(model);
    if (!state) ModelState.states.set(model, (state = new ModelState()));
    return state;
  }

  line(key: string): LineState | undefined {
    return this.lines.find((line) => line.key === key);
  }

  /** Keeps a decided line start, most recent first (a line prepared in the background does not evict the typed one). */
  remember(line: LineState): void {
    this.lines = [line, ...this.lines.filter((kept) => kept.key !== line.key)].slice(0, KEPT_LINE_STATES);
  }

  /** After `idleMs` without a request, runs `work` (which stops between its steps when the next request comes). */
  schedule(idleMs: number, work: (signal: AbortSignal) => Promise<unknown>): void {
    this.stopBackground();
    const controller = new AbortController();
    this.background = controller;
    this.done = new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          void work(controller.signal)
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

  stopBackground(): void {
    this.background?.abort();
  }

  /** Resolves when the background work last scheduled has finished or stopped. */
  settled(): Promise<void> {
    return this.done;
  }
}
