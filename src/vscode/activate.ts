import * as vscode from 'vscode';
import { CompletionService } from '../engine/completionService';
import { WorkspaceFolders } from './folders';
import type { IndexStats } from '../index/repoIndex';
import { IndexClient } from '../retrieval/indexClient';
import { API_KEY_SECRET, offerFirstModel, registerCommands, type CommandHost } from './commands';
import { createEngineClient, MODEL_SETTINGS, modelChanged, ModelLoader } from './models';
import { InlineProvider } from './provider';
import { WorkspaceIndexer } from './reindex';
import type { RequestLedgerSnapshot } from './requestLedger';
import { whenQuiet } from './quietStart';
import { readSettings } from './settings';
import { StatusBar } from './statusBar';
import { watchWorkspace, type WorkspaceWatch } from './watchWorkspace';

/**
 * What the soak (test/soak) cannot see from outside: the live index's size and the provider's calls. Exported only
 * when the test sets TEST_HOOKS_ENV.
 */
export interface TestHooks {
  /** The live index's size, as incremental updates left it. */
  indexStats(): Promise<IndexStats>;
  /** How the provider's calls ended so far. */
  requests(): RequestLedgerSnapshot;
}
const TEST_HOOKS_ENV = 'REPOGATE_TEST_HOOKS';

/**
 * The composition root of the editor side: the index in a process of its own (src/vscode/reindex.ts), the models
 * and the completion engine in another (src/vscode/models.ts), the completion service (cursor cache,
 * statistics), the provider, the status bar and the commands. This side only translates VS Code events; no
 * indexing or model work runs on the extension host's event loop.
 */
export function activateRepoGate(context: vscode.ExtensionContext): TestHooks | undefined {
  const log = vscode.window.createOutputChannel('RepoGate', { log: true });
  const client = new IndexClient();
  const statusBar = new StatusBar();
  const folders = new WorkspaceFolders();
  let settings = readSettings();
  const notify = (message: string): void => {
    log.warn(message);
    void vscode.window.showWarningMessage(`RepoGate: ${message}`);
  };
  const render = (): void =>
    statusBar.render({
      enabled: settings.enabled,
      model: engine.state,
      indexing: indexer.indexing,
      index: indexer.indexInfo,
      stats: service.stats.snapshot(),
      gate: settings.gate,
    });
  const engine = createEngineClient(log, render, notify, () => void models.load());
  const configureEngine = (): void => {
    const retrieval = folders.list.length > 0 && vscode.workspace.isTrusted;
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
    folders,
    () => settings,
    () => engine.state.kind === 'ready',
    log,
    render,
  );
  const models = new ModelLoader(context, engine, service, log, () => settings);
  const indexer = new WorkspaceIndexer({ context, client, folders, log, settings: () => settings, notify, render });
  let watch: WorkspaceWatch | undefined;
  const startWatching = (): void => void (watch ??= watchWorkspace(context, folders, client, log));

  const host: CommandHost = { context, log, service, engine, reindex: () => indexer.reindex(true) };
  context.subscriptions.push(
    log,
    statusBar,
    { dispose: () => void client.dispose() },
    { dispose: () => void engine.dispose() },
    models,
    ...registerCommands(host),
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET && settings.engine !== 'local') void models.load();
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
        void models.load();
      render();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      configureEngine();
      startWatching();
      void indexer.reindex(false);
    }),
    // The index keeps the other folders' files: only an added folder's are parsed (src/index/roots.ts).
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      folders.refresh();
      configureEngine();
      watch?.sync();
      void indexer.reindex(false);
    }),
  );
  if (vscode.workspace.isTrusted) startWatching();
  render();
  startUp(indexer, models, host, () => engine.state.kind === 'no-model');
  return process.env[TEST_HOOKS_ENV] === '1'
    ? {
        indexStats: () => client.stats(),
        requests: () => provider.ledger.snapshot(),
      }
    : undefined;
}

/**
 * The start-up work: the model load, then the index build. Both wait for the host's own start-up work to settle
 * (quietStart.ts): the engine process loading the model takes a core for a second or more, and on a two-core
 * machine that slowed the activation of VS Code's other extensions on the host's event loop (decision S1). The
 * build follows the load: retrieval is of no use before a model is there to complete with, and the two would
 * compete for the cores in the same way.
 */
function startUp(indexer: WorkspaceIndexer, models: ModelLoader, host: CommandHost, noModel: () => boolean): void {
  const activated = performance.now();
  void whenQuiet().then(async (waitedMs) => {
    host.log.info(`start-up model load after ${Math.round(waitedMs)} ms for the extension host to settle`);
    try {
      await models.load();
      if (noModel()) void offerFirstModel(host);
    } catch (error) {
      host.log.error(`model load failed: ${(error as Error).message}`);
    }
    host.log.info(`start-up index build after ${Math.round(performance.now() - activated)} ms from the activation`);
    void indexer.reindex(false);
  });
}
