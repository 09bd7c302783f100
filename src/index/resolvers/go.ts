/** Go: an import path below a module of the workspace names every non-test file of its directory. */
import type { ProjectLayout } from '../projectLayout';
import { joinRel } from '../relPath';

export function resolveGo(layout: ProjectLayout, filesInDir: (relDir: string) => string[], spec: string): string[] {
  for (const mod of layout.goModules) {
    if (spec !== mod.path && !spec.startsWith(`${mod.path}/`)) continue;
    const dir = joinRel(mod.dir, spec.slice(mod.path.length + 1));
    return filesInDir(dir)
      .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))
      .sort();
  }
  return [];
}
