/** TypeScript and JavaScript: relative paths, package `imports`, tsconfig `paths` and `baseUrl`, workspace packages. */
import * as path from 'path';
import type { PathPattern } from '../pathPattern';
import { sourceCandidates } from '../packageManifest';
import type { HasFile, ProjectLayout } from '../projectLayout';
import { dirOf, joinRel, normalizeInside } from '../relPath';

export const TS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
export const JS_EXTENSIONS = ['.js', '.jsx', '.mjs', '.cjs', '.ts', '.tsx', '.mts', '.cts', '.d.ts'];
/** TypeScript's ESM style writes the emitted name (`./a.js`) for a source file `./a.ts`. */
const EMITTED_TO_SOURCE: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

export function resolveScript(
  layout: ProjectLayout,
  has: HasFile,
  fromFile: string,
  specifier: string,
  exts: string[],
) {
  // Bundler queries (`./icon.svg?raw`) are not part of the path.
  const spec = specifier.replace(/\?.*$/, '');
  if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
    const target = normalizeInside(joinRel(dirOf(fromFile), spec));
    return target === undefined ? undefined : probeModule(has, target, exts);
  }
  if (spec.startsWith('#')) {
    const pkg = nearest(layout.packagesByDir, dirOf(fromFile));
    return pkg && matchPatterns(has, pkg.importPatterns, spec, exts);
  }
  const ts = nearest(layout.tsconfigs, dirOf(fromFile));
  if (ts) {
    const viaPaths = matchPatterns(has, ts.paths, spec, exts);
    if (viaPaths) return viaPaths;
    if (ts.baseUrl !== undefined) {
      const viaBase = probeModule(has, joinRel(ts.baseUrl, spec), exts);
      if (viaBase) return viaBase;
    }
  }
  return resolvePackage(layout, has, spec, exts);
}

function resolvePackage(layout: ProjectLayout, has: HasFile, spec: string, exts: string[]): string | undefined {
  const segs = spec.split('/');
  const nameLength = spec.startsWith('@') ? 2 : 1;
  const pkg = layout.packages.get(segs.slice(0, nameLength).join('/'));
  if (!pkg) return undefined;
  const sub = segs.slice(nameLength).join('/');
  if (!sub) return firstModule(has, pkg.entries, exts);
  return (
    matchPatterns(has, pkg.exportPatterns, `/${sub}`, exts) ??
    firstModule(has, [...sourceCandidates(pkg.dir, sub), joinRel(pkg.dir, `src/${sub}`)], exts)
  );
}

function matchPatterns(has: HasFile, patterns: readonly PathPattern[], spec: string, exts: string[]) {
  for (const p of patterns) {
    if (p.wildcard) {
      if (spec.length < p.prefix.length + p.suffix.length || !spec.startsWith(p.prefix) || !spec.endsWith(p.suffix)) {
        continue;
      }
      const star = spec.slice(p.prefix.length, spec.length - p.suffix.length);
      const found = firstModule(
        has,
        p.targets.map((t) => t.replace('*', star)),
        exts,
      );
      if (found) return found;
    } else if (spec === p.prefix) {
      const found = firstModule(has, p.targets, exts);
      if (found) return found;
    }
  }
  return undefined;
}

function firstModule(has: HasFile, candidates: readonly string[], exts: string[]): string | undefined {
  for (const c of candidates) {
    const found = probeModule(has, c, exts);
    if (found) return found;
  }
  return undefined;
}

/** A module path as Node/TypeScript would: the file itself, emitted-name mapping, extensions, directory index. */
function probeModule(has: HasFile, p: string, exts: string[]): string | undefined {
  if (has(p)) return p;
  const ext = path.posix.extname(p);
  const sources = EMITTED_TO_SOURCE[ext];
  if (sources) {
    const stem = p.slice(0, -ext.length);
    for (const s of sources) if (has(stem + s)) return stem + s;
  }
  for (const e of exts) if (has(p + e)) return p + e;
  const index = p ? `${p}/index` : 'index';
  for (const e of exts) if (has(index + e)) return index + e;
  return undefined;
}

/** The entry for the directory itself or its nearest ancestor. */
function nearest<T>(byDir: ReadonlyMap<string, T>, dir: string): T | undefined {
  for (let d = dir; ; d = dirOf(d)) {
    const hit = byDir.get(d);
    if (hit !== undefined || d === '') return hit;
  }
}
