/** tsconfig.json / jsconfig.json `baseUrl` and `paths`, following relative `extends`. */
import * as fs from 'fs';
import * as path from 'path';
import { isObject, readJsonc } from './jsonc';
import { patternOf, sortPatterns, type PathPattern } from './pathPattern';
import { joinRel } from './relPath';
import type { WorkspaceRoots } from './roots';

export interface TsConfigPaths {
  /** Directory of the tsconfig/jsconfig; it governs the files below it. */
  dir: string;
  /** Workspace-relative baseUrl, if set (here or in a config it extends). */
  baseUrl?: string;
  /** Exact patterns first, then by longest prefix, which is the order TypeScript tries them in. */
  paths: PathPattern[];
}

export interface RawTsOptions {
  baseUrl?: { value: string; configDir: string };
  paths?: { value: Record<string, unknown>; configDir: string };
}

export async function readTsConfig(
  roots: WorkspaceRoots,
  file: string,
  dir: string,
  cache: Map<string, Promise<RawTsOptions>>,
): Promise<TsConfigPaths> {
  const raw = await loadTsOptions(file, cache, new Set());
  const baseUrl = raw.baseUrl ? roots.relative(path.resolve(raw.baseUrl.configDir, raw.baseUrl.value)) : undefined;
  const patterns: PathPattern[] = [];
  if (raw.paths) {
    // Since TypeScript 4.1, paths without a baseUrl are relative to the config that declares them.
    const base = baseUrl ?? roots.relative(raw.paths.configDir);
    for (const [key, value] of Object.entries(raw.paths.value)) {
      const targets = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
      patterns.push(
        patternOf(
          key,
          targets.map((t) => path.posix.normalize(joinRel(base, t))),
        ),
      );
    }
  }
  return { dir, baseUrl, paths: sortPatterns(patterns) };
}

/** compilerOptions.baseUrl/paths after relative `extends` (a string or, since TS 5.0, an array). */
function loadTsOptions(
  file: string,
  cache: Map<string, Promise<RawTsOptions>>,
  seen: Set<string>,
): Promise<RawTsOptions> {
  let p = cache.get(file);
  if (!p) {
    p = (async () => {
      const json = await readJsonc(file);
      if (!isObject(json)) return {};
      const result: RawTsOptions = {};
      const ext = json.extends;
      for (const spec of typeof ext === 'string' ? [ext] : Array.isArray(ext) ? ext : []) {
        // Shared configs from packages (@tsconfig/...) never declare workspace paths.
        if (typeof spec !== 'string' || !spec.startsWith('.')) continue;
        let target = path.resolve(path.dirname(file), spec);
        if (!target.endsWith('.json') && !(await isFile(target))) target += '.json';
        if (seen.has(target)) continue;
        Object.assign(result, await loadTsOptions(target, cache, new Set([...seen, file])));
      }
      const opts = json.compilerOptions;
      const configDir = path.dirname(file);
      if (isObject(opts)) {
        if (typeof opts.baseUrl === 'string') result.baseUrl = { value: opts.baseUrl, configDir };
        if (isObject(opts.paths)) result.paths = { value: opts.paths, configDir };
      }
      return result;
    })();
    cache.set(file, p);
  }
  return p;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.promises.stat(file)).isFile();
  } catch {
    return false;
  }
}
