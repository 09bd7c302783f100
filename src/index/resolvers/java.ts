/** Java: imports found by the package's directory suffix. */
import type { HasFile, ProjectLayout } from '../projectLayout';

/** `com.x.Y`, `com.x.Y.Inner`, `static com.x.Y.member` and `com.x.*`, found by directory suffix. */
export function resolveJava(
  layout: ProjectLayout,
  has: HasFile,
  filesInDir: (relDir: string) => string[],
  spec: string,
) {
  const segs = spec.replace(/^static\s+/, '').split('.');
  if (segs[segs.length - 1] === '*') {
    const dirs = layout.javaDirs.get(segs.slice(0, -1).join('/')) ?? [];
    return dirs.flatMap((d) => filesInDir(d).filter((f) => f.endsWith('.java'))).sort();
  }
  for (let k = segs.length; k >= 2; k--) {
    const file = `${segs[k - 1]}.java`;
    const found = (layout.javaDirs.get(segs.slice(0, k - 1).join('/')) ?? []).map((d) => `${d}/${file}`).filter(has);
    if (found.length) return found.sort();
  }
  return [];
}
