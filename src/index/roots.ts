/**
 * The folders one index covers (decision D28, docs/decisions.md). A single folder's files are keyed by
 * their path within it, as they always were; with several, by `<folder name>/<path>`, the way VS Code names them in
 * a multi-root workspace, so that two folders' src/index.ts stay two files and every path shown names its folder.
 */
import * as path from 'path';
import { readSourceBytes } from './readSource';
import { decodeSource, type ReadResult } from './decode';
import { joinRel, leavesRoot, relativeTo } from './relPath';

export interface RootFolder {
  name: string;
  path: string;
}

/** What an index is built over: one folder's path, or a multi-root workspace's folders. */
export type IndexRoot = string | readonly RootFolder[];

/** Where an index key lies: its folder and the path within that folder. */
export interface Located {
  folder: RootFolder;
  rel: string;
}

export class WorkspaceRoots {
  /** Absolute paths, and names unique among them: what keys start with when there are several. */
  readonly folders: readonly RootFolder[];
  private readonly byName: ReadonlyMap<string, RootFolder>;

  constructor(root: IndexRoot) {
    const given = typeof root === 'string' ? [{ name: path.basename(root), path: root }] : root;
    const taken = new Set<string>();
    this.folders = given.map((folder) => {
      // A display name may hold a slash ("name" in a .code-workspace file); a key's first segment may not.
      const base = folder.name.replace(/[\\/]/g, '-') || 'folder';
      let name = base;
      for (let n = 2; taken.has(name); n++) name = `${base} (${n})`;
      taken.add(name);
      return { name, path: path.resolve(folder.path) };
    });
    this.byName = new Map(this.folders.map((folder) => [folder.name, folder]));
  }

  get multiple(): boolean {
    return this.folders.length > 1;
  }

  /**
   * Names what the keys mean: equal ids, equal keys for equal files. A single folder's is its path, as the cache's
   * `root` always was.
   */
  get id(): string {
    return this.multiple ? JSON.stringify(this.folders.map((f) => [f.name, f.path])) : (this.folders[0]?.path ?? '');
  }

  /**
   * Names how keys are formed wherever the folders lie: a single folder's are paths within it, whatever its name or
   * place; several folders' start with their names. Equal layouts, equal keys for the same checkout in other folders.
   */
  get layout(): string {
    return this.multiple ? JSON.stringify(this.folders.map((f) => f.name)) : '';
  }

  /** Whether every key both know means the same file in `other` as here: an index can move to it file by file. */
  keepsKeysOf(other: WorkspaceRoots): boolean {
    if (!this.multiple || !other.multiple) return this.id === other.id;
    return this.folders.every((folder) => (other.byName.get(folder.name)?.path ?? folder.path) === folder.path);
  }

  key(folder: RootFolder, rel: string): string {
    return this.multiple ? joinRel(folder.name, rel) : rel;
  }

  locate(key: string): Located | undefined {
    if (!this.multiple) return this.folders[0] && { folder: this.folders[0], rel: key };
    const slash = key.indexOf('/');
    const folder = this.byName.get(slash < 0 ? key : key.slice(0, slash));
    return folder && { folder, rel: slash < 0 ? '' : key.slice(slash + 1) };
  }

  absolute(key: string): string | undefined {
    const at = this.locate(key);
    return at && path.join(at.folder.path, at.rel);
  }

  /** The key of an absolute path, in the innermost folder holding it; undefined when none does. */
  keyOf(abs: string): string | undefined {
    let inner: Located | undefined;
    for (const folder of this.folders) {
      const rel = relativeTo(folder.path, abs);
      if (leavesRoot(rel) || path.isAbsolute(rel)) continue;
      if (!inner || folder.path.length > inner.folder.path.length) inner = { folder, rel };
    }
    return inner && this.key(inner.folder, inner.rel);
  }

  /** `keyOf`, or for a path outside every folder a '..'-led one that no key matches (a tsconfig baseUrl above). */
  relative(abs: string): string {
    return this.keyOf(abs) ?? relativeTo(this.folders[0]?.path ?? path.parse(abs).root, abs);
  }

  /** Reads the file a key names, as `readSourceFile` reads a folder's file. */
  read(key: string, maxFileBytes?: number): Promise<ReadResult> {
    const read = this.readBytes(key, maxFileBytes);
    return Promise.resolve('skip' in read ? read : decodeSource(read.bytes));
  }

  /** The bytes of the file a key names, as `readSourceBytes` reads a folder's file. */
  readBytes(key: string, maxFileBytes?: number): ReturnType<typeof readSourceBytes> {
    const at = this.locate(key);
    if (!at) return { skip: 'excluded', detail: 'in no folder of the workspace' };
    return readSourceBytes(at.folder.path, at.rel, maxFileBytes);
  }
}
