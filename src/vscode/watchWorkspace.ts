import * as vscode from 'vscode';
import type { IndexClient } from '../retrieval/indexClient';
import type { WorkspaceFolders } from './folders';

/** Editor buffers are re-indexed this long after the last keystroke in them. */
const EDIT_SETTLE_MS = 400;

/** What `watchWorkspace` returns: `sync` after the workspace's folders changed. */
export interface WorkspaceWatch {
  sync(): void;
}

/**
 * Forwards edits, saves and file events to the index worker, one file at a time, under the file's index path
 * (folders.ts). Paths outside every folder and non-file documents are ignored; the worker itself drops secrets and
 * ignored files. Each folder has its own file watcher, started and stopped with the folder.
 */
export function watchWorkspace(
  context: vscode.ExtensionContext,
  folders: WorkspaceFolders,
  client: IndexClient,
  log: vscode.LogOutputChannel,
): WorkspaceWatch {
  const report = (what: string) => (error: Error) => log.warn(`${what}: ${error.message}`);
  const pending = new Map<string, NodeJS.Timeout>();
  const refresh = (uri: vscode.Uri, text?: string): void => {
    const key = folders.key(uri);
    if (key) void client.update(key, text).catch(report(`re-indexing ${key}`));
  };
  const remove = (uri: vscode.Uri): void => {
    const key = folders.key(uri);
    if (key) void client.remove(key).catch(report(`removing ${key}`));
  };
  /** Each watched folder's watcher and listeners, by the folder's path. */
  const watchers = new Map<string, vscode.Disposable>();
  const sync = (): void => {
    const wanted = new Set(folders.list.map((folder) => folder.path));
    for (const [folder, watch] of watchers) {
      if (wanted.has(folder)) continue;
      watch.dispose();
      watchers.delete(folder);
    }
    for (const folder of wanted) {
      if (watchers.has(folder)) continue;
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**/*'));
      watchers.set(
        folder,
        vscode.Disposable.from(
          watcher,
          watcher.onDidCreate((uri) => refresh(uri)),
          watcher.onDidChange((uri) => refresh(uri)),
          watcher.onDidDelete(remove),
        ),
      );
    }
  };
  sync();
  context.subscriptions.push(
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
    vscode.workspace.onDidRenameFiles(({ files }) => {
      for (const { oldUri, newUri } of files) {
        const from = folders.key(oldUri);
        const to = folders.key(newUri);
        if (from && to) void client.rename(from, to).catch(report(`renaming ${from}`));
      }
    }),
    {
      dispose: () => {
        pending.forEach((timer) => clearTimeout(timer));
        watchers.forEach((watch) => watch.dispose());
      },
    },
  );
  return { sync };
}
