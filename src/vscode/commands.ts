import * as path from 'path';
import * as vscode from 'vscode';
import { DEFAULTS } from '../defaults';
import type { CompletionService } from '../engine/completionService';
import { explainCompletion } from '../engine/explain';
import type { EngineClient } from '../engine/engineClient';
import { GATE_POLICIES } from '../gate/gate';
import { BUNDLED_MODEL_LABEL, bundledModelPath } from '../model/bundledModel';
import { downloadModel, RECOMMENDED_MODELS, type DownloadProgress } from '../model/download';
import { listOllamaModels } from '../model/remote/ollama';
import { fetchAndConvert, REPOFORMER_SIZES, type RepoformerSize } from '../convert/hubCheckpoint';

export interface CommandHost {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  service: CompletionService;
  engine: EngineClient;
  reindex(): Promise<void>;
}

/** The inference server's API key in the editor's secret storage: never in settings, never in the log. */
export const API_KEY_SECRET = 'repogate.serverApiKey';
const RECENT_MODELS_KEY = 'repogate.recentModels';
const MAX_RECENT_MODELS = 8;

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('repogate');

/** Sets the model for this machine (the setting has machine scope) and remembers it among the recent ones. */
async function useModel(host: CommandHost, file: string): Promise<void> {
  const recent = host.context.globalState.get<string[]>(RECENT_MODELS_KEY, []).filter((p) => p !== file);
  await host.context.globalState.update(RECENT_MODELS_KEY, [file, ...recent].slice(0, MAX_RECENT_MODELS));
  await config().update('modelPath', file, vscode.ConfigurationTarget.Global);
  host.log.info(`model set to ${file}`);
}

export function demoModelPath(context: vscode.ExtensionContext): string | undefined {
  return bundledModelPath(path.join(context.extensionPath, 'dist'));
}

async function useDemoModel(host: CommandHost): Promise<void> {
  const demo = demoModelPath(host.context);
  if (!demo) {
    void vscode.window.showErrorMessage(
      'RepoGate: the bundled demo model is missing from this installation; select or download a model.',
    );
    return;
  }
  await useModel(host, demo);
  void vscode.window.showInformationMessage(
    `RepoGate: using ${BUNDLED_MODEL_LABEL}. For real completions download a model ("RepoGate: Download Model…").`,
  );
}

async function selectModel(host: CommandHost): Promise<void> {
  type Pick = vscode.QuickPickItem & { run(): Promise<void> };
  const recent = host.context.globalState.get<string[]>(RECENT_MODELS_KEY, []);
  const current = config().get<string>('modelPath', DEFAULTS.modelPath);
  const picks: Pick[] = [
    ...(config().get<string>('engine') === 'ollama' ? await ollamaPicks(host) : []),
    {
      label: '$(folder-opened) Browse for a GGUF file…',
      run: async () => {
        const chosen = await vscode.window.showOpenDialog({
          canSelectMany: false,
          filters: { 'GGUF models': ['gguf'] },
          title: 'RepoGate: choose a FIM code model',
        });
        if (chosen?.[0]) await useModel(host, chosen[0].fsPath);
      },
    },
    { label: '$(cloud-download) Download a model…', run: () => downloadCommand(host) },
    { label: '$(beaker) Use the bundled demo model', description: BUNDLED_MODEL_LABEL, run: () => useDemoModel(host) },
    ...recent.map((file): Pick => ({
      label: `$(history) ${path.basename(file)}`,
      description: file === current ? `${file} (current)` : file,
      run: () => useModel(host, file),
    })),
  ];
  const picked = await vscode.window.showQuickPick(picks, {
    title: 'RepoGate: Select Model',
    placeHolder: 'A fill-in-the-middle GGUF code model',
  });
  await picked?.run();
}

/** With the Ollama engine: its pulled models, one pick each (sets repogate.serverModel), or why there are none. */
async function ollamaPicks(host: CommandHost): Promise<(vscode.QuickPickItem & { run(): Promise<void> })[]> {
  const url = config().get<string>('serverUrl', DEFAULTS.serverUrl);
  const current = config().get<string>('serverModel', DEFAULTS.serverModel);
  try {
    const names = await listOllamaModels(url);
    return names.map((name) => ({
      label: `$(server) ${name}`,
      description: name === current ? 'Ollama (current)' : 'Ollama',
      run: async () => {
        await config().update('serverModel', name, vscode.ConfigurationTarget.Global);
        host.log.info(`Ollama model: ${name}`);
      },
    }));
  } catch (error) {
    const e = error as Error & { hint?: string };
    return [{ label: `$(warning) Ollama: ${e.message}`, detail: e.hint, run: async () => undefined }];
  }
}

function formatProgress(p: DownloadProgress): string {
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(0);
  const eta = p.etaSeconds === undefined ? '' : `, ${Math.ceil(p.etaSeconds)} s left`;
  return `${mb(p.downloadedBytes)} / ${mb(p.totalBytes)} MB at ${(p.bytesPerSecond / 1e6).toFixed(1)} MB/s${eta}`;
}

async function downloadCommand(host: CommandHost): Promise<void> {
  type Pick = vscode.QuickPickItem & { url?: string; fileName?: string; sha256?: string; repoformer?: RepoformerSize };
  const picks: Pick[] = [
    ...RECOMMENDED_MODELS.map((m): Pick => ({
      label: m.label,
      description: `${(m.sizeBytes / 1e9).toFixed(2)} GB`,
      detail: m.note,
      url: m.url,
      fileName: m.fileName,
      sha256: m.sha256,
    })),
    ...REPOFORMER_SIZES.map((r): Pick => ({
      label: `${r.label} (converted on this machine)`,
      description: `${gb(r.parameters * 4)} download, ${gb((r.parameters * 34) / 32)} model`,
      detail: 'Has the <cc> retrieval gate. Downloads the PyTorch checkpoint and converts it to GGUF (Q8_0) here.',
      repoformer: r,
    })),
    { label: '$(link) Custom URL…', detail: 'Any direct link to a .gguf file (e.g. a Hugging Face "resolve" URL)' },
  ];
  const picked = await vscode.window.showQuickPick(picks, {
    title: 'RepoGate: Download Model',
    placeHolder: 'Recommended fill-in-the-middle code models',
  });
  if (!picked) return;
  if (picked.repoformer) return downloadRepoformer(host, picked.repoformer);
  const url =
    picked.url ??
    (await vscode.window.showInputBox({
      title: 'RepoGate: model URL',
      prompt: 'Direct URL of a .gguf file',
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : 'an http(s) URL'),
    }));
  if (!url) return;
  const directory = path.join(host.context.globalStorageUri.fsPath, 'models');
  try {
    const file = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `RepoGate: downloading ${picked.fileName ?? url.split('/').pop()}`,
        cancellable: true,
      },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        let reported = 0;
        return downloadModel({
          url,
          directory,
          fileName: picked.fileName,
          sha256: picked.sha256,
          signal: controller.signal,
          onProgress: (p) => {
            const percent = p.totalBytes ? (p.downloadedBytes / p.totalBytes) * 100 : 0;
            progress.report({ message: formatProgress(p), increment: percent - reported });
            reported = percent;
          },
        });
      },
    );
    await useModel(host, file);
    void vscode.window.showInformationMessage(`RepoGate: downloaded ${path.basename(file)} and switched to it.`);
  } catch (error) {
    const e = error as Error & { hint?: string };
    host.log.error(`download failed: ${e.message}`);
    void vscode.window.showErrorMessage(
      `RepoGate: download failed: ${e.message}${e.hint ? ` ${e.hint}` : ''} An interrupted download resumes when started again.`,
    );
  }
}

const gb = (bytes: number): string => `${(bytes / 1e9).toFixed(1)} GB`;
const STAGE_LABELS = { download: 'downloading', convert: 'converting', validate: 'checking' } as const;

/** How long the engine may take to load a converted model (a 7B Q8_0 from a cold disk). */
const VALIDATION_TIMEOUT_MS = 300_000;
const ENGINE_POLL_MS = 250;

/**
 * Switches to the converted model and waits for the engine process to load it: ready with the <cc> gate, or the
 * previous model back and an error.
 */
async function validateInEngine(host: CommandHost, modelPath: string): Promise<void> {
  const previous = config().get<string>('modelPath', '');
  const before = host.engine.state;
  await useModel(host, modelPath); // the settings listener reloads the engine with it
  const deadline = Date.now() + VALIDATION_TIMEOUT_MS;
  let state = host.engine.state;
  while (!(state !== before && state.kind !== 'loading') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, ENGINE_POLL_MS));
    state = host.engine.state;
  }
  if (state.kind === 'ready' && state.generator.path === modelPath && state.generator.family.hasGate) return;
  await config().update('modelPath', previous, vscode.ConfigurationTarget.Global);
  throw new Error(state.kind === 'error' ? state.message : 'the engine did not load it with its <cc> gate');
}

/** Download → convert → validate, then offer to delete the checkpoint (the GGUF is all RepoGate needs). */
async function downloadRepoformer(host: CommandHost, size: RepoformerSize): Promise<void> {
  const models = path.join(host.context.globalStorageUri.fsPath, 'models');
  const directory = path.join(models, `${size.id}-checkpoint`);
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `RepoGate: ${size.label}`, cancellable: true },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return fetchAndConvert({
          hubBaseUrl: config().get<string>('hubBaseUrl', DEFAULTS.hubBaseUrl),
          repo: size.repo,
          directory,
          out: path.join(models, `${size.id}.q8_0.gguf`),
          signal: controller.signal,
          onStage: (stage, detail) => {
            host.log.info(`${size.id}: ${stage} ${detail}`);
            progress.report({ message: `${STAGE_LABELS[stage]} ${path.basename(detail)}` });
          },
          onDownloadProgress: (p) => progress.report({ message: `${p.file}: ${formatProgress(p)}` }),
          onConvertProgress: (p) =>
            progress.report({ message: `converting: ${((100 * p.doneBytes) / p.totalBytes).toFixed(0)}%` }),
          validate: (modelPath) => validateInEngine(host, modelPath),
        });
      },
    );
    const remove = `Delete the checkpoint (${gb(result.sourceBytes)})`;
    const message = `RepoGate: converted ${size.label} and switched to it.`;
    const choice = await vscode.window.showInformationMessage(message, remove, 'Keep it');
    if (choice === remove) {
      await vscode.workspace.fs.delete(vscode.Uri.file(result.sourceDirectory), { recursive: true });
    }
  } catch (error) {
    const e = error as Error & { hint?: string };
    host.log.error(`${size.id}: ${e.message}`);
    const hint = e.hint ? ` ${e.hint}` : '';
    void vscode.window.showErrorMessage(
      `RepoGate: ${size.label} failed: ${e.message}${hint} Downloaded files are kept; starting again resumes.`,
    );
  }
}

async function explainLast(host: CommandHost): Promise<void> {
  const result = host.service.lastResult;
  const state = host.engine.state;
  if (!result || state.kind !== 'ready') {
    void vscode.window.showInformationMessage('RepoGate: no completion to explain yet.');
    return;
  }
  const text = explainCompletion(state.generator, result, state.policyModel);
  host.log.info(`explain last completion:\n${text}`);
  const document = await vscode.workspace.openTextDocument({ content: text, language: 'markdown' });
  await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}

async function selectGate(): Promise<void> {
  const current = config().get<string>('gate', DEFAULTS.gate);
  const picked = await vscode.window.showQuickPick(
    GATE_POLICIES.map((g) => ({ label: g, description: g === current ? 'current' : undefined })),
    { title: 'RepoGate: gate policy', placeHolder: 'When to retrieve cross-file context' },
  );
  if (picked) await config().update('gate', picked.label, vscode.ConfigurationTarget.Global);
}

async function toggle(): Promise<void> {
  await config().update(
    'enabled',
    !config().get<boolean>('enabled', DEFAULTS.enabled),
    vscode.ConfigurationTarget.Global,
  );
}

async function menu(host: CommandHost): Promise<void> {
  const enabled = config().get<boolean>('enabled', DEFAULTS.enabled);
  const items: (vscode.QuickPickItem & { command: string; args?: unknown[] })[] = [
    {
      label: enabled ? '$(circle-slash) Disable completions' : '$(check) Enable completions',
      command: 'repogate.toggle',
    },
    { label: '$(refresh) Reindex repository', command: 'repogate.reindex' },
    {
      label: '$(git-merge) Switch gate policy…',
      description: config().get<string>('gate'),
      command: 'repogate.selectGate',
    },
    { label: '$(question) Explain last completion', command: 'repogate.explainLast' },
    { label: '$(file-binary) Select model…', command: 'repogate.selectModel' },
    { label: '$(cloud-download) Download model…', command: 'repogate.downloadModel' },
    { label: '$(output) Show log', command: 'repogate.showLog' },
    { label: '$(settings-gear) Settings', command: 'workbench.action.openSettings', args: ['repogate'] },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'RepoGate' });
  if (picked) await vscode.commands.executeCommand(picked.command, ...(picked.args ?? []));
  host.log.trace(`menu: ${picked?.label ?? 'dismissed'}`);
}

async function setServerApiKey(host: CommandHost): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'RepoGate: server API key',
    prompt: 'Sent as a bearer token to "repogate.serverUrl"; kept in the secret storage. Empty removes it.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key) await host.context.secrets.store(API_KEY_SECRET, key.trim());
  else await host.context.secrets.delete(API_KEY_SECRET);
  host.log.info(key ? 'server API key stored in the secret storage' : 'server API key removed');
}

export function registerCommands(host: CommandHost): vscode.Disposable[] {
  const register = (id: string, run: () => Promise<void> | void): vscode.Disposable =>
    vscode.commands.registerCommand(id, run);
  return [
    register('repogate.reindex', () => host.reindex()),
    register('repogate.toggle', toggle),
    register('repogate.selectModel', () => selectModel(host)),
    register('repogate.downloadModel', () => downloadCommand(host)),
    register('repogate.useDemoModel', () => useDemoModel(host)),
    register('repogate.explainLast', () => explainLast(host)),
    register('repogate.selectGate', selectGate),
    register('repogate.showLog', () => host.log.show()),
    register('repogate.menu', () => menu(host)),
    register('repogate.setServerApiKey', () => setServerApiKey(host)),
  ];
}

/** First run without a model: one click to a working setup. */
export async function offerFirstModel(host: CommandHost): Promise<void> {
  const choice = await vscode.window.showInformationMessage(
    'RepoGate needs a local code model (GGUF) for completions. Nothing leaves this machine.',
    'Use demo model',
    'Download model…',
    'Choose file…',
  );
  if (choice === 'Use demo model') await useDemoModel(host);
  else if (choice === 'Download model…') await downloadCommand(host);
  else if (choice === 'Choose file…') await selectModel(host);
}
