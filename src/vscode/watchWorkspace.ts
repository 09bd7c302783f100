import * as vscode from 'vscode';
import type { IndexClient } from '../retrieval/indexClient';

/** Editor buffers are re-indexed this long after the last keystroke in them. */
const EDIT_SETTLE_MS = 400;

/**
 * Forwards edits, saves and file events to the index worker, one file at a time. Paths outside the folder
 * and non-file documents are ignored; the worker itself drops secrets and ignored files.
 */
export function watchWorkspace(
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
