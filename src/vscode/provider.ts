import * as vscode from 'vscode';
import type { CompletionRequest } from '../engine/completionEngine';
import type { CompletionService } from '../engine/completionService';
import { isSecretPath } from '../index/secrets';
import { RECENT_FILE_CHARS, RECENT_FILES } from '../retrieval/recent';
import type { RecentFile } from '../retrieval/types';
import type { WorkspaceFolders } from './folders';
import { RequestLedger, type RequestOutcome } from './requestLedger';
import type { RepoGateSettings } from './settings';

/** Below this gap between keystrokes the user is typing a burst: wait the full debounce for the pause. */
const BURST_FACTOR = 2;
/** After a pause the next keystroke is likely the last for a while: answer almost at once. */
const PAUSED_DEBOUNCE_FRACTION = 0.25;
/** Cursor moves closer together than this (a held arrow key, a run of jumps) warm the engine once. */
const WARM_DELAY_MS = 50;
/** A request still open after this long counts as hanging (the soak figure). */
const SLOW_REQUEST_MS = 10_000;
/** Weight of the newest gap in the typing pace's moving average: a few keystrokes change it, one does not. */
const NEW_GAP_WEIGHT = 0.3;

/**
 * Ghost text. Every request asks the cursor cache at once; on a miss it waits an adaptive debounce, then asks
 * the service, which aborts whatever generation the previous keystroke started. VS Code cancels the request's
 * token on the next keystroke; the token is turned into an AbortSignal for the engine.
 */
export class InlineProvider implements vscode.InlineCompletionItemProvider {
  private lastKeystroke = 0;
  private typingGapMs = Number.POSITIVE_INFINITY;
  private warmTimer?: ReturnType<typeof setTimeout>;
  /** Each document's version at its last cursor move: a move that comes with a new version is an edit's own. */
  private readonly versions = new WeakMap<vscode.TextDocument, number>();
  /** How every call ended (the soak's "no request hangs": each answered or cancelled within SLOW_REQUEST_MS). */
  readonly ledger = new RequestLedger(SLOW_REQUEST_MS);

  constructor(
    private readonly service: CompletionService,
    private readonly folders: WorkspaceFolders,
    private readonly settings: () => RepoGateSettings,
    private readonly ready: () => boolean,
    private readonly log: vscode.LogOutputChannel,
    /** Called after each served completion (the status bar shows the new rate and latency). */
    private readonly onServed: () => void,
  ) {}

  /** Fed by the document-change listener: the gap between keystrokes drives the adaptive debounce. */
  noteKeystroke(): void {
    const now = performance.now();
    const gap = now - this.lastKeystroke;
    this.lastKeystroke = now;
    this.typingGapMs =
      this.typingGapMs === Number.POSITIVE_INFINITY
        ? gap
        : (1 - NEW_GAP_WEIGHT) * this.typingGapMs + NEW_GAP_WEIGHT * gap;
  }

  /**
   * The cursor went where the user may type next — another file, or a jump rather than an edit's own move:
   * shortly after, the engine evaluates that line's prompt into its cache, so the first request there is quick.
   */
  noteCursor(editor: vscode.TextEditor, { jump = false } = {}): void {
    const { document } = editor;
    // Output panels and other views are text editors too, but nobody types code there.
    if (document.uri.scheme !== 'file' && document.uri.scheme !== 'untitled') return;
    const known = this.versions.get(document);
    this.versions.set(document, document.version);
    if (!jump && known !== undefined && known !== document.version) return;
    clearTimeout(this.warmTimer);
    this.warmTimer = setTimeout(() => {
      if (editor !== vscode.window.activeTextEditor) return;
      // No recent files: a warm-up retrieves nothing.
      const request = this.request(editor.document, editor.selection.active, { recent: false });
      if (request) this.service.warm(request);
    }, WARM_DELAY_MS);
  }

  async provideInlineCompletionItems(
    document: vscode.TextDocument,
    position: vscode.Position,
    _context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    const id = this.ledger.begin();
    const { items, outcome } = await this.serve(document, position, token);
    this.ledger.end(id, outcome);
    return items;
  }

  private async serve(
    document: vscode.TextDocument,
    position: vscode.Position,
    token: vscode.CancellationToken,
  ): Promise<{ items?: vscode.InlineCompletionItem[]; outcome: RequestOutcome }> {
    const settings = this.settings();
    const request = this.request(document, position);
    if (!request) return { outcome: 'empty' };
    const started = performance.now();
    const cached = this.service.fromCache(request);
    if (cached) {
      this.log.info(`completion from cache in ${cached.latencyMs.toFixed(1)} ms (${cached.text.length} chars)`);
      this.onServed();
      return { items: [item(cached.text, position)], outcome: 'answered' };
    }
    const burst = this.typingGapMs < settings.debounceMs * BURST_FACTOR;
    const debounce = burst ? settings.debounceMs : settings.debounceMs * PAUSED_DEBOUNCE_FRACTION;
    // Counted from the keystroke: VS Code calls the provider some 60 ms after it, which is part of the pause.
    if (!(await sleep(debounce - (started - this.lastKeystroke), token))) return { outcome: 'cancelled' };
    const controller = new AbortController();
    const subscription = token.onCancellationRequested(() => controller.abort());
    try {
      const served = await this.service.generate(request, controller.signal);
      if (token.isCancellationRequested) return { outcome: 'cancelled' };
      if (!served) return { outcome: 'empty' };
      const r = served.result;
      const gate = r
        ? `gate ${r.gate.policy} ${r.gate.fire ? 'fired' : 'closed'} (score ${r.gate.score.toFixed(3)}), ${r.snippets.length} snippets, `
        : '';
      this.log.info(
        `completion from model in ${(performance.now() - started).toFixed(0)} ms: ${gate}${served.text.length} chars`,
      );
      this.onServed();
      return { items: [item(served.text, position)], outcome: 'answered' };
    } catch (error) {
      this.log.error(`completion failed: ${(error as Error).message}`);
      return { outcome: 'failed' };
    } finally {
      subscription.dispose();
    }
  }

  /** The engine's request for this cursor, or undefined where RepoGate gives no completions. */
  private request(
    document: vscode.TextDocument,
    position: vscode.Position,
    { recent = true } = {},
  ): CompletionRequest | undefined {
    const settings = this.settings();
    if (!settings.enabled || !this.ready() || !languageEnabled(settings, document.languageId)) return undefined;
    // A secret file's text never goes into a prompt, not even a local one.
    if (isSecretPath(folderPath(document.uri), settings.secretGlobs)) return undefined;
    return {
      path: this.indexPath(document.uri),
      text: document.getText(),
      cursor: { line: position.line, character: position.character },
      ...(recent && { recent: this.recentFiles(document, settings.secretGlobs) }),
    };
  }

  /** What retrieval calls the file: its index path, or where it lies for a file in no folder. */
  private indexPath(uri: vscode.Uri): string {
    return this.folders.key(uri) ?? (uri.fsPath || uri.toString());
  }

  /** The other files open in editors, most recently visible first: retrieval's "recent" path. */
  private recentFiles(current: vscode.TextDocument, secretGlobs: string[]): RecentFile[] {
    return vscode.window.visibleTextEditors
      .map((e) => e.document)
      .filter((d) => d !== current && d.uri.scheme === 'file' && !isSecretPath(folderPath(d.uri), secretGlobs))
      .slice(0, RECENT_FILES)
      .map((d) => ({ path: this.indexPath(d.uri), text: d.getText().slice(0, RECENT_FILE_CHARS) }));
  }
}

/** Inserted at the cursor: the engine already dropped what would repeat the text right of it. */
function item(text: string, position: vscode.Position): vscode.InlineCompletionItem {
  return new vscode.InlineCompletionItem(text, new vscode.Range(position, position));
}

function languageEnabled(settings: RepoGateSettings, languageId: string): boolean {
  return settings.enabledLanguages.includes('*') || settings.enabledLanguages.includes(languageId);
}

/** The path within its own folder, which the secret globs are relative to as the index's rules are (roots.ts). */
function folderPath(uri: vscode.Uri): string {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  return folder ? vscode.workspace.asRelativePath(uri, false).split('\\').join('/') : uri.fsPath || uri.toString();
}

/** Resolves true after `ms`, false as soon as the token is cancelled. */
function sleep(ms: number, token: vscode.CancellationToken): Promise<boolean> {
  if (token.isCancellationRequested) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      subscription.dispose();
      resolve(true);
    }, ms);
    const subscription = token.onCancellationRequested(() => {
      clearTimeout(timer);
      subscription.dispose();
      resolve(false);
    });
  });
}
