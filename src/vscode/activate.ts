import * as vscode from 'vscode';
import { IndexClient } from '../index/indexClient';
import { DEFAULT_EXCLUDE_GLOBS } from '../index/scan';

/** Settings that shape the index; read on each (re)index so that changes apply without a reload. */
function indexSettings(): { excludeGlobs: string[]; secretGlobs: string[] } {
  const config = vscode.workspace.getConfiguration('repogate');
  return {
    excludeGlobs: [...DEFAULT_EXCLUDE_GLOBS, ...config.get<string[]>('excludeGlobs', [])],
    secretGlobs: config.get<string[]>('secretGlobs', []),
  };
}

/**
 * Wires the index into VS Code: it lives in a worker thread; this side only forwards workspace events and
 * shows progress. The first workspace folder is indexed (multi-root workspaces: the first root for now).
 */
export function activateRepoGate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('RepoGate', { log: true });
  const client = new IndexClient();
  context.subscriptions.push(log, { dispose: () => void client.dispose() });
  const folder = vscode.workspace.workspaceFolders?.[0];
  const cacheDir = context.storageUri?.fsPath;

  const reindex = async (fresh: boolean): Promise<void> => {
    if (!folder) {
      void vscode.window.showWarningMessage('RepoGate: open a folder to index it.');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      log.warn('workspace is not trusted: its files are not indexed');
      return;
    }
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'RepoGate: indexing', cancellable: true },
      async (progress, token) => {
        let reported = 0;
        client.onProgress = (done, total) => {
          const percent = total ? (done / total) * 100 : 100;
          progress.report({ message: `${done}/${total} files`, increment: percent - reported });
          reported = percent;
        };
        token.onCancellationRequested(() => void client.cancelBuild());
        try {
          const report = await client.build({ root: folder.uri.fsPath, cacheDir, fresh, ...indexSettings() });
          const message = `indexed ${report.files} files, ${report.symbols} symbols in ${(report.buildMs / 1000).toFixed(1)} s`;
          log.info(message);
          if (fresh) void vscode.window.showInformationMessage(`RepoGate: ${message}.`);
        } catch (error) {
          const message = (error as Error).message;
          log.error(`indexing failed: ${message}`);
          if (message !== 'cancelled') void vscode.window.showErrorMessage(`RepoGate: indexing failed: ${message}`);
        }
      },
    );
  };

  context.subscriptions.push(vscode.commands.registerCommand('repogate.reindex', () => reindex(true)));
  if (folder && vscode.workspace.isTrusted) watchWorkspace(context, folder, client, log);
  void reindex(false);
}

/** Editor buffers are re-indexed this long after the last keystroke in them. */
const EDIT_SETTLE_MS = 400;

/**
 * Forwards edits, saves and file events to the index worker, one file at a time. Paths outside the folder
 * and non-file documents are ignored; the worker itself drops secrets and ignored files.
 */
function watchWorkspace(context: vscode.ExtensionContext, folder: vscode.WorkspaceFolder, client: IndexClient, log: vscode.LogOutputChannel): void {
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
      pending.set(key, setTimeout(() => {
        pending.delete(key);
        refresh(document.uri, document.getText());
      }, EDIT_SETTLE_MS));
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
