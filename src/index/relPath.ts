/**
 * Workspace-relative paths: forward slashes, no leading './' or '/', '' for the workspace root. The one home of
 * the small helpers the walker, the import resolvers and the index use on them.
 */
import * as path from 'path';

/** The directory part: '' for a file at the root. */
export function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

export function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** `dir/p`, where either side may be '' (the root, or the directory itself). */
export function joinRel(dir: string, p: string): string {
  if (!dir) return p;
  if (!p) return dir;
  return `${dir}/${p}`;
}

/** Backslashes and a leading './' or '/' come from host events on some platforms; the matchers need neither. */
export function normalizeRel(p: string): string {
  return p.replace(/\\/g, '/').replace(/^(\.\/|\/)+/, '');
}

/** An absolute path as a workspace-relative one (forward slashes on every platform). */
export function relativeTo(absRoot: string, abs: string): string {
  return path.relative(absRoot, abs).split(path.sep).join('/');
}

export function leavesRoot(rel: string): boolean {
  return rel.split('/').includes('..');
}

/** Normalised, or undefined when the path leaves the workspace. */
export function normalizeInside(p: string): string | undefined {
  const n = path.posix.normalize(p);
  if (n === '..' || n.startsWith('../')) return undefined;
  return n === '.' ? '' : n.replace(/\/$/, '');
}

/** `p` is `dir` or below it; everything is below the root ''. */
export function isWithin(p: string, dir: string): boolean {
  return dir === '' || p === dir || p.startsWith(`${dir}/`);
}

/** Code-unit order (not the locale's), so that listings come out the same on every machine. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Directory levels below the root: 0 for ''. */
export function depth(dir: string): number {
  return dir ? dir.split('/').length : 0;
}
