/** Java: imports found by the package's directory suffix. */
import type { HasFile, ProjectLayout } from '../projectLayout';

/** `com.x.Y`, `com.x.Y.Inner`, `static com.x.Y.member`, `static com.x.Y.*` and `com.x.*`, by directory suffix. */
export function resolveJava(
  layout: ProjectLayout,
  has: HasFile,
  filesInDir: (relDir: string) => string[],
  spec: string,
) {
  let segs = spec.replace(/^static\s+/, '').split('.');
  if (segs[segs.length - 1] === '*') {
    const dirs = layout.javaDirs.get(segs.slice(0, -1).join('/')) ?? [];
    if (dirs.length) return dirs.flatMap((d) => filesInDir(d).filter((f) => f.endsWith('.java'))).sort();
    // `import static a.B.*` imports the members of the class B.
    segs = segs.slice(0, -1);
  }
  for (let k = segs.length; k >= 2; k--) {
    const file = `${segs[k - 1]}.java`;
    const found = (layout.javaDirs.get(segs.slice(0, k - 1).join('/')) ?? []).map((d) => `${d}/${file}`).filter(has);
    if (found.length) return found.sort();
  }
  return [];
}
