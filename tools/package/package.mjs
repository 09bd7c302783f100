#!/usr/bin/env node
// Builds the .vsix for one platform: the extension with node-llama-cpp's prebuilt llama.cpp binaries for that
// platform only, fetched from the npm registry with `npm pack` (the shared node_modules is never changed), then
// checks it with verify-vsix.mjs. The package is assembled in a staging folder: the build, the production
// dependencies without any @node-llama-cpp binary, the target's binary packages, and a .vscodeignore naming them.
// Usage: node tools/package/package.mjs --target linux-x64|linux-arm64|darwin-arm64|win32-x64 [--cuda]
import { execFileSync } from 'child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'fs';
import { homedir, tmpdir } from 'os';
import { dirname, join, relative, resolve } from 'path';
import { fileURLToPath } from 'url';
import { binaryPackages } from './platforms.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const at = args.indexOf('--target');
const target = at >= 0 ? args[at + 1] : 'linux-x64';
const cuda = args.includes('--cuda');
const packages = binaryPackages(target, cuda);
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const llamaVersion = manifest.dependencies['node-llama-cpp'];
const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'repogate', 'npm-pack');

execFileSync('node', [join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });
const stage = mkdtempSync(join(tmpdir(), `repogate-package-${target}-`));
try {
  for (const path of ['package.json', 'README.md', 'media', 'dist', '.vscodeignore'])
    cpSync(join(root, path), join(stage, path), { recursive: true });
  // Built above already: the staged manifest must not build again (the stage has no sources).
  const staged = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  delete staged.scripts['vscode:prepublish'];
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  // The production dependency tree as npm resolved it, without any prebuilt binary package.
  const production = npmList()
    .filter((dir) => !/[\\/]@node-llama-cpp[\\/]/.test(dir))
    .filter((dir) => runsOn(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')), target));
  // Platform packages of other production dependencies (as @reflink/reflink's), for the target instead of this machine.
  const fetched = [];
  for (const dir of production) {
    const { optionalDependencies = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const [name, version] of Object.entries(optionalDependencies)) {
      if (existsSync(join(root, 'node_modules', name)) && production.includes(join(root, 'node_modules', name)))
        continue;
      const meta = JSON.parse(
        execFileSync('npm', ['view', `${name}@${version}`, 'os', 'cpu', 'libc', '--json'], { encoding: 'utf8' }) ||
          '{}',
      );
      if ((meta.os || meta.cpu) && runsOn(meta, target)) fetched.push({ name, version });
    }
  }
  for (const dir of production) {
    const rel = relative(root, dir);
    cpSync(dir, join(stage, rel), {
      recursive: true,
      // Nested packages are copied on their own (when they are production dependencies); the source bundle is left out.
      filter: (from) =>
        from === dir ||
        !(relative(dir, from).split(/[\\/]/).includes('node_modules') || from.endsWith('gitRelease.bundle')),
    });
  }
  mkdirSync(cache, { recursive: true });
  for (const { name, version } of [
    ...packages.map((p) => ({ name: `@node-llama-cpp/${p}`, version: llamaVersion })),
    ...fetched,
  ]) {
    // npm pack names a scoped package's tarball <scope>-<name>-<version>.tgz.
    const tarball = join(cache, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
    if (!existsSync(tarball))
      execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', cache, '--silent']);
    const dest = join(stage, 'node_modules', name);
    mkdirSync(dest, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', dest, '--strip-components=1']);
  }
  // The checked-in .vscodeignore names linux-x64's binaries; the staged one names the target's.
  const ignore = readFileSync(join(stage, '.vscodeignore'), 'utf8');
  const line = /^!node_modules\/@node-llama-cpp\/@\([^)]*\)\/\*\*$/m;
  if (!line.test(ignore))
    throw new Error('.vscodeignore has no !node_modules/@node-llama-cpp/@(...)/** line to replace');
  writeFileSync(
    join(stage, '.vscodeignore'),
    ignore.replace(line, `!node_modules/@node-llama-cpp/@(${packages.join('|')})/**`),
  );

  const out = join(root, `repogate-${target}${cuda ? '-cuda' : ''}-${manifest.version}.vsix`);
  const vsce = join(root, 'node_modules', '.bin', 'vsce');
  execFileSync(
    vsce,
    [
      'package',
      '--target',
      target,
      '--out',
      out,
      '--no-rewrite-relative-links',
      '--allow-missing-repository',
      '--skip-license',
    ],
    { cwd: stage, stdio: 'inherit' },
  );
  execFileSync(
    'node',
    [join(root, 'tools', 'package', 'verify-vsix.mjs'), out, '--target', target, ...(cuda ? ['--cuda'] : [])],
    { stdio: 'inherit' },
  );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
/**
 * Production package folders: the manifest's dependencies and, recursively, theirs (optional ones when installed),
 * resolved as Node does (the nearest node_modules up from the dependent). Not `npm ls`, which lists extraneous
 * packages too when the installed tree differs from the lock file.
 */
function npmList() {
  const found = new Set();
  const visit = (dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const names = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies });
    for (const name of names) {
      let target;
      for (let from = dir; ; from = dirname(from)) {
        const candidate = join(from, 'node_modules', name);
        if (existsSync(join(candidate, 'package.json'))) {
          target = candidate;
          break;
        }
        if (from === root || dirname(from) === from) break;
      }
      if (target && !found.has(target)) {
        found.add(target);
        visit(target);
      }
    }
  };
  visit(root);
  return [...found];
}

/** Whether a package's os/cpu fields (package.json or npm view) allow the VS Code target. */
function runsOn({ os, cpu }, vscodeTarget) {
  const [platform, arch] = vscodeTarget.split('-');
  const allows = (list, value) =>
    !list || list.includes(value) || (list.some((v) => v.startsWith('!')) && !list.includes(`!${value}`));
  return allows(os, platform) && allows(cpu, arch);
}

console.log(
  readdirSync(root)
    .filter((n) => n.endsWith('.vsix'))
    .join('\n'),
);
