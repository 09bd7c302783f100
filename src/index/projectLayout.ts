/**
 * The project layout import resolution needs (workspace packages, tsconfig paths, Go modules, Python and Rust
 * roots, Java package directories), read from configuration files; `FileRefresher` (workspace.ts) reads it again
 * when one of them changes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readPackage, type WorkspacePackage } from './packageManifest';
import { comparePaths, depth, dirOf } from './relPath';
import { WorkspaceRoots } from './roots';
import { readTsConfig, type RawTsOptions, type TsConfigPaths } from './tsconfigPaths';

export interface GoModule {
  path: string;
  dir: string;
}

export interface ProjectLayout {
  packages: ReadonlyMap<string, WorkspacePackage>;
  packagesByDir: ReadonlyMap<string, WorkspacePackage>;
  tsconfigs: ReadonlyMap<string, TsConfigPaths>;
  /** Longest module path first, so nested modules win. */
  goModules: readonly GoModule[];
  /** Directories named src that hold Python files, and directories with setup.py / pyproject.toml. */
  pythonRoots: readonly string[];
  /** Directories holding a Cargo.toml, deepest first. */
  rustCrates: readonly string[];
  /** A workspace crate's name as `use` paths write it (`clap-builder` → `clap_builder`) → its directory. */
  rustCrateNames: ReadonlyMap<string, string>;
  /** Package directory suffix ('com/x') → directories holding .java files that end with it. */
  javaDirs: ReadonlyMap<string, readonly string[]>;
  /** Directories holding a package.json, go.mod, setup.py, pyproject.toml or Cargo.toml: where projects start. */
  projectDirs: readonly string[];
}

/** Resolution probes the index's current file set through this, never the disk. */
export type HasFile = (rel: string) => boolean;

const READ_CONCURRENCY = 16;

/** The files that make their directory a project's root (projects.ts). */
const PROJECT_MANIFESTS = ['package.json', 'go.mod', 'setup.py', 'pyproject.toml', 'Cargo.toml'];

/**
 * Reads configuration in every directory that holds (or is an ancestor of) an indexed file: the index may list
 * only source files, so configuration files are found on disk rather than in `files`.
 */
export async function loadProjectLayout(
  root: string | WorkspaceRoots,
  files: Iterable<string>,
): Promise<ProjectLayout> {
  const roots = typeof root === 'string' ? new WorkspaceRoots(root) : root;
  const dirs = new Set<string>(['']);
  const pythonRoots = new Set<string>();
  const javaFileDirs = new Set<string>();
  for (const file of files) {
    const dir = dirOf(file);
    for (let d = dir; !dirs.has(d); d = dirOf(d)) dirs.add(d);
    if (file.endsWith('.py')) {
      const segs = dir.split('/');
      for (let i = 0; i < segs.length; i++) if (segs[i] === 'src') pythonRoots.add(segs.slice(0, i + 1).join('/'));
    } else if (file.endsWith('.java')) {
      javaFileDirs.add(dir);
    }
  }

  // The top of a multi-root workspace ('') is no folder on disk.
  const configDirs = [...dirs].filter((d) => !d.split('/').includes('node_modules') && roots.absolute(d) !== undefined);
  // Shallow directories first, so that of two packages with one name the outer one wins.
  configDirs.sort((a, b) => depth(a) - depth(b) || comparePaths(a, b));
  const listings = await mapLimit(configDirs, READ_CONCURRENCY, async (dir) => {
    try {
      return await fs.promises.readdir(roots.absolute(dir)!);
    } catch {
      return [];
    }
  });

  const packageJobs: Promise<WorkspacePackage | undefined>[] = [];
  const tsJobs: Promise<TsConfigPaths>[] = [];
  const goJobs: Promise<GoModule | undefined>[] = [];
  const rustCrates: string[] = [];
  const cargoJobs: Promise<[string, string] | undefined>[] = [];
  const projectDirs: string[] = [];
  const tsCache = new Map<string, Promise<RawTsOptions>>();
  configDirs.forEach((dir, i) => {
    const names = new Set(listings[i]);
    const abs = roots.absolute(dir)!;
    if (names.has('package.json')) packageJobs.push(readPackage(path.join(abs, 'package.json'), dir));
    const tsconfig = pickTsConfig(listings[i]);
    if (tsconfig) tsJobs.push(readTsConfig(roots, path.join(abs, tsconfig), dir, tsCache));
    if (names.has('go.mod')) goJobs.push(readGoMod(path.join(abs, 'go.mod'), dir));
    if (names.has('setup.py') || names.has('pyproject.toml')) pythonRoots.add(dir);
    if (names.has('Cargo.toml')) {
      rustCrates.push(dir);
      cargoJobs.push(readCargoName(path.join(abs, 'Cargo.toml'), dir));
    }
    if (PROJECT_MANIFESTS.some((name) => names.has(name))) projectDirs.push(dir);
  });

  const packages = new Map<string, WorkspacePackage>();
  const packagesByDir = new Map<string, WorkspacePackage>();
  for (const pkg of await Promise.all(packageJobs)) {
    if (!pkg) continue;
    packagesByDir.set(pkg.dir, pkg);
    if (pkg.name && !packages.has(pkg.name)) packages.set(pkg.name, pkg);
  }
  const tsconfigs = new Map<string, TsConfigPaths>();
  for (const ts of await Promise.all(tsJobs)) tsconfigs.set(ts.dir, ts);
  const goModules = (await Promise.all(goJobs)).filter((m): m is GoModule => m !== undefined);
  goModules.sort((a, b) => b.path.length - a.path.length);
  pythonRoots.delete('');
  const rustCrateNames = new Map<string, string>();
  for (const named of await Promise.all(cargoJobs))
    if (named && !rustCrateNames.has(named[0])) rustCrateNames.set(...named);

  return {
    packages,
    packagesByDir,
    tsconfigs,
    goModules,
    pythonRoots: [...pythonRoots].sort(),
    rustCrates: rustCrates.sort((a, b) => depth(b) - depth(a)),
    rustCrateNames,
    javaDirs: indexJavaDirs(javaFileDirs),
    projectDirs,
  };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function pickTsConfig(names: readonly string[]): string | undefined {
  if (names.includes('tsconfig.json')) return 'tsconfig.json';
  if (names.includes('jsconfig.json')) return 'jsconfig.json';
  return names.filter((n) => /^tsconfig\..+\.json$/.test(n)).sort()[0];
}

async function readGoMod(file: string, dir: string): Promise<GoModule | undefined> {
  try {
    const m = /^\s*module\s+"?([^"\s]+)"?/m.exec(await fs.promises.readFile(file, 'utf8'));
    return m ? { path: m[1], dir } : undefined;
  } catch {
    return undefined;
  }
}

/** A crate's name from its Cargo.toml's `[package]` table, with `-` written `_` as code names it. */
async function readCargoName(file: string, dir: string): Promise<[string, string] | undefined> {
  try {
    const text = await fs.promises.readFile(file, 'utf8');
    const table = /^\s*\[package\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(text)?.[1] ?? '';
    const name = /^\s*name\s*=\s*["']([^"']+)["']/m.exec(table)?.[1];
    return name ? [name.replace(/-/g, '_'), dir] : undefined;
  } catch {
    return undefined;
  }
}

function indexJavaDirs(dirs: Set<string>): Map<string, string[]> {
  const bySuffix = new Map<string, string[]>();
  for (const dir of dirs) {
    const segs = dir.split('/');
    for (let i = 0; i < segs.length; i++) {
      const key = segs.slice(i).join('/');
      const list = bySuffix.get(key);
      if (list) list.push(dir);
      else bySuffix.set(key, [dir]);
    }
  }
  return bySuffix;
}
