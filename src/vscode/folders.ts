import * as vscode from 'vscode';
import { WorkspaceRoots, type RootFolder } from '../index/roots';

/**
 * The workspace's folders as the index keys their files (src/index/roots.ts), kept current as folders are added or
 * removed: the provider, the watcher and the index name a file the same way.
 */
export class WorkspaceFolders {
  private folders = WorkspaceFolders.read();
  private current = new WorkspaceRoots(this.folders);

  /** Folders on disk only: the index reads files with Node, which cannot reach a virtual or remote folder's. */
  private static read(): RootFolder[] {
    return (vscode.workspace.workspaceFolders ?? [])
      .filter((folder) => folder.uri.scheme === 'file')
      .map((folder) => ({ name: folder.name, path: folder.uri.fsPath }));
  }

  get list(): readonly RootFolder[] {
    return this.folders;
  }

  /** Called on `onDidChangeWorkspaceFolders`. */
  refresh(): void {
    this.folders = WorkspaceFolders.read();
    this.current = new WorkspaceRoots(this.folders);
  }

  /** A file's path in the index; undefined outside every folder. */
  key(uri: vscode.Uri): string | undefined {
    return uri.scheme === 'file' ? this.current.keyOf(uri.fsPath) : undefined;
  }
}
