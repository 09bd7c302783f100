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
  void reindex(false);
}
