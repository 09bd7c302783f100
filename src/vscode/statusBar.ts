import * as vscode from 'vscode';
import type { StatsSnapshot } from '../engine/stats';
import type { RemoteModelState } from '../engine/engineProtocol';
import { describeModel } from '../engine/explain';

/** Keystroke to first token beyond this is too late for ghost text to be useful (the issue's "say 1 s"). */
const SLOW_FIRST_TOKEN_MS = 1000;

export interface StatusInputs {
  enabled: boolean;
  model: RemoteModelState;
  /** Files done and total while the index is being built. */
  indexing?: { done: number; total: number };
  index?: { files: number; symbols: number; folders: number };
  stats: StatsSnapshot;
  gate: string;
}

/**
 * The retrieval-rate indicator, e.g. "$(database) RAG 23% · 140 ms", and its other looks: indexing, loading
 * model, no model, error, disabled. A click opens RepoGate's menu.
 */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('repogate.status', vscode.StatusBarAlignment.Right, 100);
  /** What was last handed to the item: every assignment sends the whole item to the workbench again. */
  private shown = { text: '', tooltip: '', command: '', background: '' };
  /** The slow-machine warning is shown once per session. */
  private warnedSlow = false;

  constructor() {
    this.item.name = 'RepoGate';
    this.item.command = 'repogate.menu';
    this.item.show();
  }

  render(s: StatusInputs): void {
    const item = { text: '', command: 'repogate.menu', background: '' };
    const tooltip: string[] = [];
    if (s.model.kind === 'error') {
      item.text = '$(error) RepoGate';
      item.background = 'statusBarItem.errorBackground';
      item.command = 'repogate.showLog';
      tooltip.push(`Model error — ${s.model.message}\n\nClick to open the log.`);
    } else if (!s.enabled) {
      item.text = '$(circle-slash) RepoGate';
      tooltip.push('Completions are disabled. Click for the menu (toggle, reindex, gate policy, log, settings).');
    } else if (s.model.kind === 'no-model') {
      item.text = '$(cloud-download) RepoGate: no model';
      item.background = 'statusBarItem.warningBackground';
      item.command = 'repogate.selectModel';
      tooltip.push(
        'No code model is configured. Click to choose a GGUF file, download one, or use the bundled demo model.',
      );
    } else if (s.model.kind === 'loading') {
      item.text = '$(sync~spin) RepoGate: loading model';
      tooltip.push(`Loading ${s.model.path}…`);
    } else if (s.model.generator.server?.problem) {
      // The server failed the latest request; the next one tries again, so this clears by itself.
      const problem = s.model.generator.server.problem;
      item.text = '$(warning) RepoGate: server';
      item.background = 'statusBarItem.warningBackground';
      item.command = 'repogate.showLog';
      const hint = problem.hint ? `\n\n${problem.hint}` : '';
      tooltip.push(`Inference server — ${problem.message}${hint}\n\nClick to open the log.`);
    } else if (s.indexing) {
      item.text = `$(sync~spin) RepoGate: indexing ${s.indexing.done}/${s.indexing.total}`;
      tooltip.push('Building the repository index in the background; completions work meanwhile, without retrieval.');
    } else {
      const rate = s.stats.retrievalRate === undefined ? '–' : `${Math.round(s.stats.retrievalRate * 100)}%`;
      const latency = s.stats.lastLatencyMs === undefined ? '' : ` · ${Math.round(s.stats.lastLatencyMs)} ms`;
      const slow = this.slowFirstToken(s);
      item.text = `${slow === undefined ? '$(database)' : '$(watch)'} RAG ${rate}${latency}`;
      tooltip.push('RepoGate — share of recent completions where the gate retrieved cross-file context.');
      if (slow !== undefined) {
        item.background = 'statusBarItem.warningBackground';
        tooltip.push(`\n\n${slowAdvice(slow)}`);
        this.warnSlowOnce(slow);
      }
    }
    tooltip.push(`\n\n${this.details(s)}`);
    this.show({ ...item, tooltip: tooltip.join('') });
  }

  /**
   * Hands the item's parts that changed to VS Code. The tooltip is plain text: VS Code's extension host lexes a
   * MarkdownString tooltip as Markdown each time the item is sent (the text changes ten times a second while
   * indexing), which showed as tens of milliseconds of the cold build's stalls (tools/e2e/stalls.mjs).
   */
  private show(next: { text: string; tooltip: string; command: string; background: string }): void {
    const item = this.item;
    const shown = this.shown;
    if (next.text !== shown.text) item.text = next.text;
    if (next.tooltip !== shown.tooltip) item.tooltip = next.tooltip;
    if (next.command !== shown.command) item.command = next.command;
    if (next.background !== shown.background)
      item.backgroundColor = next.background ? new vscode.ThemeColor(next.background) : undefined;
    this.shown = next;
  }

  private details(s: StatusInputs): string {
    const st = s.stats;
    const rows = [
      `retrievals: ${st.recentRetrievals} of the last ${st.recentCompletions} model completions`,
      `model calls ${st.modelCalls}, cache hits ${st.cacheHits}, cancelled ${st.cancelled}`,
      `last P(<cc>): ${st.lastGate && st.lastGate.source !== 'fixed' ? st.lastGate.score.toFixed(3) : '–'}`,
      `gate policy: ${s.gate}`,
      `keystroke to first token (median of recent requests): ${st.firstTokenP50Ms === undefined ? '–' : `${Math.round(st.firstTokenP50Ms)} ms`}`,
    ];
    if (s.model.kind === 'ready') {
      rows.push(`model: ${describeModel(s.model.generator)}`);
      if (s.model.policyModel) rows.push(`policy model: ${describeModel(s.model.policyModel)}`);
    }
    if (s.index) {
      const where = s.index.folders > 1 ? ` in ${s.index.folders} folders` : '';
      rows.push(`index: ${s.index.files} files${where}, ${s.index.symbols} symbols`);
    }
    return rows.map((r) => `- ${r}`).join('\n');
  }

  /** The median keystroke-to-first-token time when it is too slow for ghost text. */
  private slowFirstToken(s: StatusInputs): number | undefined {
    const ms = s.stats.firstTokenP50Ms;
    return s.model.kind === 'ready' && ms !== undefined && ms > SLOW_FIRST_TOKEN_MS ? ms : undefined;
  }

  private warnSlowOnce(ms: number): void {
    if (this.warnedSlow) return;
    this.warnedSlow = true;
    void vscode.window.showWarningMessage(`RepoGate: ${slowAdvice(ms)}`, 'Select Model…').then((choice) => {
      if (choice) void vscode.commands.executeCommand('repogate.selectModel');
    });
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** What the slowness is, measured, and the ways out. */
function slowAdvice(ms: number): string {
  return (
    `the model takes ${(ms / 1000).toFixed(1)} s from a keystroke to its first token on this machine (median of the ` +
    'recent requests), too late for ghost text. Use a smaller model (Qwen2.5-Coder 0.5B or 1.5B), a GPU ' +
    '("repogate.gpuLayers" with CUDA, Metal or Vulkan), or run the model on a faster machine as a server.'
  );
}
