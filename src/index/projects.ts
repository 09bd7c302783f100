/**
 * The project a file belongs to (decisions R28, docs/decisions-retrieval.md): the deepest directory above it holding
 * a package.json, go.mod, setup.py, pyproject.toml or Cargo.toml, else its top folder. Calibration chooses a
 * profile per project, and a request is served by its project's.
 */
import { dirOf } from './relPath';

/** What `projectsOf` needs: the manifest directories (ProjectLayout's `projectDirs`) and how keys are formed. */
export interface ProjectRoots {
  dirs: readonly string[];
  /** Keys start with a workspace folder's name (roots.ts, D28). */
  multiRoot: boolean;
}

/**
 * The project of an index key; pure, so that serving a request walks no disk. Without a manifest above it, a file
 * is in its top folder: the workspace folder of a multi-root key, else the key's first directory, or '' (the folder
 * itself) for a file at its top.
 */
export function projectsOf(roots: ProjectRoots): (key: string) => string {
  const dirs = new Set(roots.dirs);
  return (key) => {
    for (let dir = dirOf(key); ; dir = dirOf(dir)) {
      if (dirs.has(dir)) return dir;
      if (dir === '') break;
    }
    const slash = key.indexOf('/');
    return slash < 0 && !roots.multiRoot ? '' : key.slice(0, slash < 0 ? undefined : slash);
  };
}
