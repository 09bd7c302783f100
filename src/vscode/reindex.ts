/**
 * Indexing the workspace from the editor, every folder of it into the one index: a build at start, on *Reindex
 * Repository*, when folders are added or removed, and after the index process was lost, with progress,
 * cancellation, the event loop's longest wait, and what the cache did, in the log.
 */
import * as path from 'path';
import { monitorEventLoopDelay } from 'perf_hooks';
import * as vscode from 'vscode';
import type { BuildReport } from '../index/workspace';
import { describeTimeLeft, timeLeftMs } from '../index/progressEstimate';
import { describeCalibration } from '../retrieval/calibrationReport';
import type { IndexClient } from '../retrieval/indexClient';
import type { RootFolder } from '../index/roots';
import type { WorkspaceFolders } from './folders';
import { MAX_RESTARTS, RESTART_WINDOW_MS } from './models';
import { RestartBudget } from './restartBudget';
import type { RepoGateSettings } from './settings';

/** Cache load outcomes that are not a problem: there was none yet, or the build did not ask for it. */
const CACHE_ABSENT = ['no cache', 'disabled'];

export interface IndexerHost {
  context: vscode.ExtensionContext;
  client: IndexClient;
  folders: WorkspaceFolders;
  log: vscode.LogOutputChannel;
  settings: () => RepoGateSettings;
  /** A warning the user sees, with the same words in the log. */
  notify: (message: string) => void;
  /** The status bar shows `indexing` and `indexInfo`. */
  render: () => void;
}

export class WorkspaceIndexer {
  /** Files done of the build in progress, if one is. */
  indexing: { done: number; total: number } | undefined;
  /** The last finished build's size, over all its folders. */
  indexInfo: { files: number; symbols: number; folders: number } | undefined;
  private cacheSaveWarned = false;
  private readonly restarts = new RestartBudget(MAX_RESTARTS, RESTART_WINDOW_MS);

  constructor(private readonly host: IndexerHost) {
    host.client.onLost = (reason) => this.processLost(reason);
    host.client.onOutput = (line) => host.log.trace(`index: ${line}`);
  }

  /** Builds the index (`fresh`: every file parsed again, as the command asks), when the workspace may be read. */
  async reindex(fresh: boolean): Promise<void> {
    const { log } = this.host;
    const folders = this.host.folders.list;
    if (!folders.length) {
      if (fresh) void vscode.window.showWarningMessage('RepoGate: open a folder to index it.');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      log.warn('workspace is not trusted: its files are not indexed; completions run without retrieval');
      if (fresh)
        void vscode.window.showWarningMessage('RepoGate: this workspace is not trusted, so it is not indexed.');
      return;
    }
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'RepoGate: indexing', cancellable: true },
      (progress, token) => this.build(folders, fresh, progress, token),
    );
  }

  private async build(
    folders: readonly RootFolder[],
    fresh: boolean,
    progress: vscode.Progress<{ message?: string; increment?: number }>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const { client, context, log, render } = this.host;
    // Measures what indexing costs the editor: the longest the event loop waited during the build. The histogram
    // records whole intervals between its timer's ticks, so its sampling period is part of every value: at 1 ms
    // the max is the longest stall to within a millisecond (at 10 ms an idle loop already reads 10 ms).
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    let reported = 0;
    const started = performance.now();
    client.onProgress = (done, total) => {
      this.indexing = { done, total };
      const percent = total ? (done / total) * 100 : 100;
      const left = describeTimeLeft(timeLeftMs(done, total, performance.now() - started));
      progress.report({ message: `${done}/${total} files${left ? `, ${left}` : ''}`, increment: percent - reported });
      reported = percent;
      render();
    };
    token.onCancellationRequested(() => void client.cancelBuild());
    try {
      const settings = this.host.settings();
      const sharedCache = this.sharedCachePath(settings.sharedIndexCache);
      const report = await client.build({
        root: folders,
        cacheDir: context.storageUri?.fsPath,
        sharedCache,
        fresh,
        excludeGlobs: settings.excludeGlobs,
        secretGlobs: settings.secretGlobs,
      });
      this.built(report, folders.length, delay.max / 1e6, fresh, sharedCache);
    } catch (error) {
      const message = (error as Error).message;
      if (message === 'cancelled') {
        log.info('indexing cancelled (by the user, or replaced by a newer build)');
      } else {
        log.error(`indexing failed: ${message}`);
        void vscode.window.showErrorMessage(`RepoGate: indexing failed: ${message}`);
      }
    } finally {
      delay.disable();
      this.indexing = undefined;
      render();
    }
  }

  /** `repogate.sharedIndexCache` as a file the index process can open: a relative path would name one in its cwd. */
  private sharedCachePath(setting: string): string | undefined {
    if (!setting) return undefined;
    if (path.isAbsolute(setting)) return setting;
    this.host.log.warn(`repogate.sharedIndexCache is not an absolute path, so it is not used: ${setting}`);
    return undefined;
  }

  /** A finished build: its size and cost in the log, a discarded or unsaved cache said, the calibration logged. */
  private built(report: BuildReport, folders: number, maxDelayMs: number, fresh: boolean, sharedCache?: string): void {
    const { log, notify } = this.host;
    this.indexInfo = { files: report.files, symbols: report.symbols, folders };
    const where = folders > 1 ? ` in ${folders} folders` : '';
    const message = `indexed ${report.files} files${where}, ${report.symbols} symbols in ${(report.buildMs / 1000).toFixed(1)} s`;
    const cache = report.cache.ok ? 'loaded' : report.cache.reason;
    log.info(`${message}; event loop max delay ${maxDelayMs.toFixed(1)} ms; ${report.parsed} parsed; cache: ${cache}`);
    const shared = report.sharedCache;
    if (shared?.ok)
      log.info(
        `started from the shared index cache ${sharedCache}: ${report.verified} files unchanged, ${report.parsed} parsed`,
      );
    else if (shared) log.warn(`shared index cache ${sharedCache} not used (${shared.reason}); every file was parsed`);
    if (!report.cache.ok && !CACHE_ABSENT.includes(report.cache.reason))
      log.warn(
        `index cache discarded (${report.cache.reason}); ${shared?.ok ? 'started from the shared one' : 'every file was parsed again'}`,
      );
    if (report.saveError) {
      const problem = `could not save the index cache (${report.saveError})`;
      if (this.cacheSaveWarned) log.warn(problem);
      else
        notify(
          `${problem}. The index stays in memory; the next start parses every file again. Free disk space to keep it.`,
        );
      this.cacheSaveWarned = true;
    }
    void this.host.client.calibration().then(
      (done) => {
        if (done) log.info(describeCalibration(done));
      },
      () => undefined,
    );
    if (fresh) void vscode.window.showInformationMessage(`RepoGate: ${message}.`);
  }

  /** The index process died by itself: rebuilt from its cache, up to MAX_RESTARTS times a window. */
  private processLost(reason: string): void {
    const { log } = this.host;
    if (!this.restarts.take()) {
      log.error(`the index process stopped (${reason}) again; it is left stopped until "RepoGate: Reindex Repository"`);
      return;
    }
    log.warn(`the index process stopped (${reason}); rebuilding the index from its cache`);
    void this.reindex(false);
  }
}
