/** Python: relative imports, then the enclosing source roots, the others, the workspace root and the file's directory. */
import type { HasFile, ProjectLayout } from '../projectLayout';
import { dirOf, isWithin, joinRel } from '../relPath';

export function resolvePython(
  layout: ProjectLayout,
  has: HasFile,
  fromFile: string,
  spec: string,
  names: readonly string[],
) {
  const dots = /^\.*/.exec(spec)![0].length;
  const modulePath = spec.slice(dots).split('.').filter(Boolean).join('/');
  if (dots > 0) {
    let base: string | undefined = dirOf(fromFile);
    for (let i = 1; i < dots && base !== undefined; i++) base = base === '' ? undefined : dirOf(base);
    return base === undefined ? [] : pythonTargets(has, joinRel(base, modulePath), names);
  }
  if (!modulePath) return [];
  const fromDir = dirOf(fromFile);
  const enclosing = layout.pythonRoots.filter((r) => isWithin(fromDir, r)).reverse();
  const roots = [...new Set([...enclosing, ...layout.pythonRoots, '', fromDir])];
  for (const root of roots) {
    const found = pythonTargets(has, joinRel(root, modulePath), names);
    if (found.length) return found;
  }
  return [];
}

/** The module (`m.py` or `m/__init__.py`) and each imported name that is itself a submodule. */
function pythonTargets(has: HasFile, modulePath: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const own = probePython(has, modulePath);
  if (own) found.push(own);
  for (const name of names) {
    const sub = /^\w+$/.test(name) ? probePython(has, joinRel(modulePath, name)) : undefined;
    if (sub && !found.includes(sub)) found.push(sub);
  }
  return found;
}

function probePython(has: HasFile, modulePath: string): string | undefined {
  const candidates = modulePath
    ? [`${modulePath}.py`, `${modulePath}/__init__.py`, `${modulePath}.pyi`, `${modulePath}/__init__.pyi`]
    : ['__init__.py', '__init__.pyi'];
  return candidates.find(has);
}
