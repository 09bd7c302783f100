/** Rust: `use` paths of a crate's own modules and of the workspace's other crates; `mod` declarations. */
import type { HasFile, ProjectLayout } from '../projectLayout';
import { isWithin, joinRel } from '../relPath';

/**
 * Best effort: `crate::`, `self::`, `super::`, child-module and workspace-crate paths, to `x.rs` or `x/mod.rs`
 * (a `mod x;` declaration is imported as `self::x`).
 */
export function resolveRust(layout: ProjectLayout, has: HasFile, fromFile: string, spec: string): string | undefined {
  const crateDir = layout.rustCrates.find((c) => isWithin(fromFile, c));
  const srcDir = crateDir !== undefined ? joinRel(crateDir, 'src') : enclosingSrcDir(fromFile);
  if (srcDir === undefined || !isWithin(fromFile, srcDir)) return undefined;
  const segs = spec
    .replace(/\s+as\s+\w+$/, '')
    .replace(/::(\{.*|\*)$/, '')
    .split('::')
    .filter(Boolean);
  const current = rustModulePath(fromFile.slice(srcDir.length + (srcDir ? 1 : 0)));
  if (segs[0] === 'crate') return rustModule(has, srcDir, segs.slice(1), 0);
  // Another crate of the workspace, by the name its Cargo.toml gives it: a path from that crate's root.
  const other = layout.rustCrateNames.get(segs[0]);
  if (other !== undefined && other !== crateDir) return rustModule(has, joinRel(other, 'src'), segs.slice(1), 0);
  if (segs[0] === 'self') return rustModule(has, srcDir, [...current, ...segs.slice(1)], current.length);
  if (segs[0] === 'super') {
    let up = 0;
    while (segs[up] === 'super') up++;
    const base = current.slice(0, Math.max(0, current.length - up));
    return rustModule(has, srcDir, [...base, ...segs.slice(up)], base.length);
  }
  // Without a prefix the path names a child module or, in 2015-edition style, one at the crate root; anything
  // else is an external crate. Requiring one more segment than the base keeps `std::x` from matching.
  return rustModule(has, srcDir, [...current, ...segs], current.length + 1) ?? rustModule(has, srcDir, segs, 1);
}

function enclosingSrcDir(file: string): string | undefined {
  const segs = file.split('/');
  const i = segs.lastIndexOf('src', segs.length - 2);
  return i < 0 ? undefined : segs.slice(0, i + 1).join('/');
}

function rustModulePath(relToSrc: string): string[] {
  const segs = relToSrc.replace(/\.rs$/, '').split('/');
  if (segs[segs.length - 1] === 'mod') segs.pop();
  if (segs.length === 1 && (segs[0] === 'lib' || segs[0] === 'main')) return [];
  return segs;
}

/** The deepest existing module file along `segs` (trailing segments may be items), no shallower than `min`. */
function rustModule(has: HasFile, srcDir: string, segs: string[], min: number): string | undefined {
  for (let k = segs.length; k >= min; k--) {
    const m = segs.slice(0, k).join('/');
    const candidates = k === 0 ? ['lib.rs', 'main.rs'] : [`${m}.rs`, `${m}/mod.rs`];
    for (const c of candidates) if (has(joinRel(srcDir, c))) return joinRel(srcDir, c);
  }
  return undefined;
}
