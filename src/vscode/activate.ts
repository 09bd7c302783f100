import { monitorEventLoopDelay } from 'perf_hooks';
import { watch, type FSWatcher } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { CompletionService } from '../engine/completionService';
import { EngineClient } from '../engine/engineClient';
import { describeModel } from '../engine/explain';
import type { ModelRequest } from '../engine/modelHost';
import { IndexClient } from '../retrieval/indexClient';
import { API_KEY_SECRET, offerFirstModel, registerCommands, type CommandHost } from './commands';
import { InlineProvider } from './provider';
import { readSettings, type RepoGateSettings } from './settings';
import { RestartBudget } from './restartBudget';
import { StatusBar } from './statusBar';

/** Settings whose change needs the models reloaded; the others apply to the next request. */
const MODEL_SETTINGS = [
  'modelPath',
  'policyModelPath',
  'gpuLayers',
  'threads',
  'contextSize',
  'engine',
  'serverUrl',
  'serverModel',
];

/**
 * What the editor-level fault suite (test/integration) cannot do from outside: the index worker is a thread of the
 * extension host, so no signal reaches it alone. Exported only when the suite sets FAULT_HOOKS_ENV.
 */
export interface FaultHooks {
  crashIndexWorker(): Promise<void>;
}
const FAULT_HOOKS_ENV = 'REPOGATE_FAULT_HOOKS';

/** A part that dies by itself is restarted up to this often per window; more means it will not stay up. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** A model file is reloaded this long after its last change on disk: a copy or download lands in many writes. */
const MODEL_FILE_SETTLE_MS = 500;

/**
 * The composition root of the editor side: the index in a worker thread, the models and the completion engine
 * in a child process, the completion service (cursor cache, statistics), the provider, the status bar and the
 * commands. This side only translates VS Code events; no indexing or model work runs on the extension host's
 * event loop.
 */
export function activateRepoGate(context: vscode.ExtensionContext): FaultHooks | undefined {
  const log = vscode.window.createOutputChannel('RepoGate', { log: true });
  const client = new IndexClient();
  const statusBar = new StatusBar();
  const folder = vscode.workspace.workspaceFolders?.[0];
  let settings = readSettings();
  let indexing: { done: number; total: number } | undefined;
  let indexInfo: { files: number; symbols: number } | undefined;
  let lastServerProblem: string | undefined;
  let cacheSaveWarned = false;
  const engineRestarts = new RestartBudget(MAX_RESTARTS, RESTART_WINDOW_MS);
  const indexRestarts = new RestartBudget(MAX_RESTARTS, RESTART_WINDOW_MS);
  /** A warning the user sees, with the same words in the log. */
  const notify = (message: string): void => {
    log.warn(message);
    void vscode.window.showWarningMessage(`RepoGate: ${message}`);
  };

  const render = (): void =>
    statusBar.render({
      enabled: settings.enabled,
      model: engine.state,
      indexing,
      index: indexInfo,
      stats: service.stats.snapshot(),
      gate: settings.gate,
    });
  const engine = new EngineClient(
    (state) => {
      render();
      if (state.kind === 'ready')
        log.info(
          `model ready: ${state.generator.path}: ${describeModel(state.generator)}, loaded in ${state.generator.loadMs.toFixed(0)} ms`,
        );
      if (state.kind === 'error') log.error(`model error: ${state.message}`);
      const problem = state.kind === 'ready' ? state.generator.server?.problem : undefined;
      if (problem && problem.message !== lastServerProblem) {
        log.error(`server: ${problem.message}${problem.hint ? ` (${problem.hint})` : ''}`);
      } else if (!problem && lastServerProblem && state.kind === 'ready') log.info('server: answering again');
      lastServerProblem = state.kind === 'ready' ? problem?.message : undefined;
    },
    (line) => log.trace(`engine: ${line}`),
    (reason) => {
      if (engineRestarts.take()) {
        notify(`the engine process stopped (${reason}); it was restarted with the same model.`);
        void loadModels();
      } else {
        log.error(`the engine process stopped (${reason}) again; it is left stopped`);
        void vscode.window.showErrorMessage(
          `RepoGate: the engine process stopped ${MAX_RESTARTS + 1} times within ${RESTART_WINDOW_MS / 1000} s; ` +
            'it is left stopped. Reload the model (RepoGate: Select Model…) or see the log.',
        );
      }
    },
  );
  const configureEngine = (): void => {
    const retrieval = folder !== undefined && vscode.workspace.isTrusted;
    engine.retrieve = retrieval ? client.retrieve.bind(client) : undefined;
    engine.configure({
      gate: settings.gate,
      gateThreshold: settings.gateThreshold,
      budget: { contextTokens: settings.contextTokens },
      maxLines: settings.maxLines,
      contextBudget: settings.contextBudget,
      retrieval,
    });
  };
  configureEngine();
  const service = new CompletionService(
    () => (engine.state.kind === 'ready' ? engine : undefined),
    () => void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger'),
  );
  const provider = new InlineProvider(
    service,
    () => settings,
    () => engine.state.kind === 'ready',
    log,
    render,
  );

  const loadModels = async (): Promise<void> => {
    service.abortInFlight();
    service.cache.clear();
    const request = modelRequest(settings);
    if (request.server) request.server.apiKey = (await context.secrets.get(API_KEY_SECRET)) || undefined;
    watchModelFiles(request);
    const state = await engine.load(request);
    if (state.kind === 'error') {
      const choice = await vscode.window.showErrorMessage(`RepoGate: ${state.message}`, 'Select Model…', 'Show Log');
      if (choice === 'Select Model…') await vscode.commands.executeCommand('repogate.selectModel');
      if (choice === 'Show Log') log.show();
    }
  };

  // A model file replaced or rewritten on disk (a new download, a copy) is reloaded, so that a broken file gives
  // its error now and a repaired one is used without a restart.
  let modelWatchers: FSWatcher[] = [];
  let modelFileTimer: NodeJS.Timeout | undefined;
  const watchModelFiles = (request: ModelRequest): void => {
    for (const watcher of modelWatchers) watcher.close();
    const files = [request.generator?.modelPath, request.policyModel?.modelPath].filter((f): f is string => !!f);
    modelWatchers = files.flatMap((file) => {
      try {
        const watcher = watch(path.dirname(file), (_event, name) => {
          if (name !== path.basename(file)) return;
          clearTimeout(modelFileTimer);
          modelFileTimer = setTimeout(() => {
            log.info(`model file changed on disk: ${file}; reloading it`);
            void loadModels();
          }, MODEL_FILE_SETTLE_MS);
        });
        watcher.on('error', () => watcher.close());
        return [watcher];
      } catch {
        // A folder that cannot be watched (gone, no permission): the load itself reports what is wrong.
        return [];
      }
    });
  };

  const reindex = async (fresh: boolean): Promise<void> => {
    if (!folder) {
      if (fresh) void vscode.window.showWarningMessage('RepoGate: open a folder to index it.');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      log.warn('workspace is not trusted: its files are not indexed; completions run without retrieval');
      if (fresh)
        void vscode.window.showWarningMessage('RepoGate: this workspace is not trusted, so it is not indexed.');
      return;
    }
    // Measures what indexing costs the editor: the longest the event loop waited during the build. The histogram
    // records whole intervals between its timer's ticks, so its sampling period is part of every value: at 1 ms
    // the max is the longest stall to within a millisecond (at 10 ms an idle loop already reads 10 ms).
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'RepoGate: indexing', cancellable: true },
      async (progress, token) => {
        let reported = 0;
        client.onProgress = (done, total) => {
          indexing = { done, total };
          const percent = total ? (done / total) * 100 : 100;
          progress.report({ message: `${done}/${total} files`, increment: percent - reported });
          reported = percent;
          render();
        };
        token.onCancellationRequested(() => void client.cancelBuild());
        try {
          const report = await client.build({
            root: folder.uri.fsPath,
            cacheDir: context.storageUri?.fsPath,
            fresh,
            excludeGlobs: settings.excludeGlobs,
            secretGlobs: settings.secretGlobs,
          });
          indexInfo = { files: report.files, symbols: report.symbols };
          const message = `indexed ${report.files} files, ${report.symbols} symbols in ${(report.buildMs / 1000).toFixed(1)} s`;
          const cache = report.cache.ok ? 'loaded' : report.cache.reason;
          log.info(
            `${message}; event loop max delay ${(delay.max / 1e6).toFixed(1)} ms; ${report.parsed} parsed; cache: ${cache}`,
          );
          if (!report.cache.ok && !CACHE_ABSENT.includes(report.cache.reason))
            log.warn(`index cache discarded (${report.cache.reason}); every file was parsed again`);
          if (report.saveError) {
            const problem = `could not save the index cache (${report.saveError})`;
            if (cacheSaveWarned) log.warn(problem);
            else
              notify(
                `${problem}. The index stays in memory; the next start parses every file again. Free disk space to keep it.`,
              );
            cacheSaveWarned = true;
          }
          void client.calibration().then(
            (done) => {
              if (!done) return;
              const recall = Object.entries(done.recall).map(([name, r]) => `${name} ${Math.round(r * 100)}%`);
              log.info(
                `retrieval calibrated on ${done.samples} lines of this repository in ${Math.round(done.ms)} ms: ` +
                  `${done.profile.name === 'fused' ? 'all retrievers fused' : `${done.profile.name} alone`} (${recall.join(', ')})`,
              );
            },
            () => undefined,
          );
          if (fresh) void vscode.window.showInformationMessage(`RepoGate: ${message}.`);
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
          indexing = undefined;
          render();
        }
      },
    );
  };

  client.onLost = (reason) => {
    if (!indexRestarts.take()) {
      log.error(`the index worker stopped (${reason}) again; it is left stopped until "RepoGate: Reindex Repository"`);
      return;
    }
    log.warn(`the index worker stopped (${reason}); rebuilding the index from its cache`);
    void reindex(false);
  };

  const host: CommandHost = { context, log, service, engine, reindex: () => reindex(true) };
  context.subscriptions.push(
    log,
    statusBar,
    { dispose: () => void client.dispose() },
    { dispose: () => void engine.dispose() },
    { dispose: () => modelWatchers.forEach((watcher) => watcher.close()) },
    { dispose: () => clearTimeout(modelFileTimer) },
    ...registerCommands(host),
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET && settings.engine !== 'local') void loadModels();
    }),
    vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, provider),
    vscode.window.onDidChangeActiveTextEditor((editor) => editor && provider.noteCursor(editor, { jump: true })),
    vscode.window.onDidChangeTextEditorSelection(({ textEditor }) => provider.noteCursor(textEditor)),
    vscode.workspace.onDidChangeTextDocument(({ document, contentChanges }) => {
      if (contentChanges.length && document === vscode.window.activeTextEditor?.document) provider.noteKeystroke();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration('repogate')) return;
      const before = settings;
      settings = readSettings();
      if (!settings.enabled) service.abortInFlight();
      configureEngine();
      if (MODEL_SETTINGS.some((key) => event.affectsConfiguration(`repogate.${key}`)) && modelChanged(before, settings))
        void loadModels();
      render();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      configureEngine();
      if (folder) watchWorkspace(context, folder, client, log);
      void reindex(false);
    }),
  );
  if (folder && vscode.workspace.isTrusted) watchWorkspace(context, folder, client, log);
  render();
  void reindex(false);
  void loadModels().then(() => {
    if (engine.state.kind === 'no-model') void offerFirstModel(host);
  });
  return process.env[FAULT_HOOKS_ENV] === '1' ? { crashIndexWorker: () => client.crashWorker() } : undefined;
}

/** Cache load outcomes that are not a problem: there was none yet, or the build did not ask for it. */
const CACHE_ABSENT = ['no cache', 'disabled'];

function modelRequest(settings: RepoGateSettings): ModelRequest {
  const common = { threads: settings.threads, gpuLayers: settings.gpuLayers, contextSize: settings.contextSize };
  const server =
    settings.engine === 'local'
      ? undefined
      : { engine: settings.engine, url: settings.serverUrl, model: settings.serverModel || undefined };
  return {
    generator: settings.modelPath ? { modelPath: settings.modelPath, ...common } : undefined,
    policyModel: settings.policyModelPath ? { modelPath: settings.policyModelPath, ...common } : undefined,
    server,
  };
}

function modelChanged(a: RepoGateSettings, b: RepoGateSettings): boolean {
  return JSON.stringify(modelRequest(a)) !== JSON.stringify(modelRequest(b));
}

/** Editor buffers are re-indexed this long after the last keystroke in them. */
const EDIT_SETTLE_MS = 400;

/**
 * Forwards edits, saves and file events to the index worker, one file at a time. Paths outside the folder
 * and non-file documents are ignored; the worker itself drops secrets and ignored files.
 */
function watchWorkspace(
  context: vscode.ExtensionContext,
  folder: vscode.WorkspaceFolder,
  client: IndexClient,
  log: vscode.LogOutputChannel,
): void {
  const relative = (uri: vscode.Uri): string | undefined => {
    if (uri.scheme !== 'file') return undefined;
    const rel = vscode.workspace.asRelativePath(uri, false);
    return rel === uri.fsPath || rel.startsWith('..') ? undefined : rel.split('\\').join('/');
  };
  const report = (what: string) => (error: Error) => log.warn(`${what}: ${error.message}`);
  const pending = new Map<string, NodeJS.Timeout>();
  const refresh = (uri: vscode.Uri, text?: string): void => {
    const rel = relative(uri);
    if (rel) void client.update(rel, text).catch(report(`re-indexing ${rel}`));
  };
  const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**/*'));
  context.subscriptions.push(
    watcher,
    vscode.workspace.onDidChangeTextDocument(({ document }) => {
      const key = document.uri.toString();
      clearTimeout(pending.get(key));
      pending.set(
        key,
        setTimeout(() => {
          pending.delete(key);
          refresh(document.uri, document.getText());
        }, EDIT_SETTLE_MS),
      );
    }),
    vscode.workspace.onDidSaveTextDocument((document) => refresh(document.uri, document.getText())),
    watcher.onDidCreate((uri) => refresh(uri)),
    watcher.onDidChange((uri) => refresh(uri)),
    watcher.onDidDelete((uri) => {
      const rel = relative(uri);
      if (rel) void client.remove(rel).catch(report(`removing ${rel}`));
    }),
    vscode.workspace.onDidRenameFiles(({ files }) => {
      for (const { oldUri, newUri } of files) {
        const from = relative(oldUri);
        const to = relative(newUri);
        if (from && to) void client.rename(from, to).catch(report(`renaming ${from}`));
      }
    }),
    { dispose: () => pending.forEach((timer) => clearTimeout(timer)) },
  );
}
