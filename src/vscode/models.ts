/**
 * The models' side of the editor: the engine process's client (restarted when it dies by itself), loading the
 * configured models into it, and reloading them when a model file changes on disk.
 */
import { watch, type FSWatcher } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { CompletionService } from '../engine/completionService';
import { EngineClient } from '../engine/engineClient';
import { describeModel } from '../engine/explain';
import type { ModelRequest } from '../engine/modelHost';
import { API_KEY_SECRET } from './commands';
import { RestartBudget } from './restartBudget';
import type { RepoGateSettings } from './settings';

/** Settings whose change needs the models reloaded; the others apply to the next request. */
export const MODEL_SETTINGS = [
  'modelPath',
  'policyModelPath',
  'gpuLayers',
  'threads',
  'contextSize',
  'engine',
  'serverUrl',
  'serverModel',
  'serverPromptFormat',
];

/** A part that dies by itself is restarted up to this often per window; more means it will not stay up. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 60_000;
/** A model file is reloaded this long after its last change on disk: a copy or download lands in many writes. */
const MODEL_FILE_SETTLE_MS = 500;

/**
 * The engine process's client: its states go to the log and the status bar (`render`), and a process that stops
 * by itself is restarted with the same models (`restart`) up to MAX_RESTARTS times a window, with one warning each.
 */
export function createEngineClient(
  log: vscode.LogOutputChannel,
  render: () => void,
  notify: (message: string) => void,
  restart: () => void,
): EngineClient {
  const restarts = new RestartBudget(MAX_RESTARTS, RESTART_WINDOW_MS);
  let lastServerProblem: string | undefined;
  return new EngineClient(
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
      if (restarts.take()) {
        notify(`the engine process stopped (${reason}); it was restarted with the same model.`);
        restart();
      } else {
        log.error(`the engine process stopped (${reason}) again; it is left stopped`);
        void vscode.window.showErrorMessage(
          `RepoGate: the engine process stopped ${MAX_RESTARTS + 1} times within ${RESTART_WINDOW_MS / 1000} s; ` +
            'it is left stopped. Reload the model (RepoGate: Select Model…) or see the log.',
        );
      }
    },
  );
}

/** Loads the configured models into the engine, and again when one of their files changes on disk. */
export class ModelLoader implements vscode.Disposable {
  private watchers: FSWatcher[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly engine: EngineClient,
    private readonly service: CompletionService,
    private readonly log: vscode.LogOutputChannel,
    private readonly settings: () => RepoGateSettings,
  ) {}

  /**
   * Resolves once loading has ended (ready, error or none); an error's message is shown without waiting for it.
   * Loads run one at a time: settings changed during a load (a URL, then the engine) load once more after it, with
   * the settings as they are then, so the last change always wins.
   */
  load(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        await this.loadOnce();
      } while (this.again);
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async loadOnce(): Promise<void> {
    this.service.abortInFlight();
    this.service.cache.clear();
    const request = modelRequest(this.settings());
    if (request.server) request.server.apiKey = (await this.context.secrets.get(API_KEY_SECRET)) || undefined;
    this.watchFiles(request);
    const state = await this.engine.load(request);
    if (state.kind === 'error') void this.offerFix(state.message);
  }

  private async offerFix(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`RepoGate: ${message}`, 'Select Model…', 'Show Log');
    if (choice === 'Select Model…') await vscode.commands.executeCommand('repogate.selectModel');
    if (choice === 'Show Log') this.log.show();
  }

  /**
   * A model file replaced or rewritten on disk (a new download, a copy) is reloaded, so that a broken file gives
   * its error now and a repaired one is used without a restart.
   */
  private watchFiles(request: ModelRequest): void {
    for (const watcher of this.watchers) watcher.close();
    const files = [request.generator?.modelPath, request.policyModel?.modelPath].filter((f): f is string => !!f);
    this.watchers = files.flatMap((file) => {
      try {
        const watcher = watch(path.dirname(file), (_event, name) => {
          if (name !== path.basename(file)) return;
          clearTimeout(this.settleTimer);
          this.settleTimer = setTimeout(() => {
            this.log.info(`model file changed on disk: ${file}; reloading it`);
            void this.load();
          }, MODEL_FILE_SETTLE_MS);
        });
        watcher.on('error', () => watcher.close());
        return [watcher];
      } catch {
        // A folder that cannot be watched (gone, no permission): the load itself reports what is wrong.
        return [];
      }
    });
  }

  dispose(): void {
    this.watchers.forEach((watcher) => watcher.close());
    clearTimeout(this.settleTimer);
  }
}

function modelRequest(settings: RepoGateSettings): ModelRequest {
  const common = { threads: settings.threads, gpuLayers: settings.gpuLayers, contextSize: settings.contextSize };
  const server =
    settings.engine === 'local'
      ? undefined
      : {
          engine: settings.engine,
          url: settings.serverUrl,
          model: settings.serverModel || undefined,
          promptFormat: settings.serverPromptFormat,
        };
  // Ollama's model brings its own GGUF (its vocabulary): no model path needed.
  const generator = settings.modelPath || settings.engine === 'ollama';
  return {
    generator: generator ? { modelPath: settings.modelPath, ...common } : undefined,
    policyModel: settings.policyModelPath ? { modelPath: settings.policyModelPath, ...common } : undefined,
    server,
  };
}

export function modelChanged(a: RepoGateSettings, b: RepoGateSettings): boolean {
  return JSON.stringify(modelRequest(a)) !== JSON.stringify(modelRequest(b));
}
