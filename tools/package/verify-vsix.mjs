#!/usr/bin/env node
// Proves that a packaged .vsix works on its own: unpacks it into a temporary folder outside the source tree and,
// with plain node and no access to the repository's node_modules, runs the bundled CLI (tree-sitter grammars,
// web-tree-sitter, the index worker) and loads the bundled tiny model through the packaged node-llama-cpp.
// For every platform target it lists the package's contents and checks that the node-llama-cpp binaries are the
// target's (each native file's format and CPU read from its header), with none missing and none foreign; the
// run-time checks need a target this machine can run (linux-x64) and are reported as not run for the others.
// Usage: node tools/package/verify-vsix.mjs [file.vsix] [--target T] [--cuda]
//        (default: the newest repogate-*.vsix in the repo root, target linux-x64)
import { execFileSync } from 'child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { fileURLToPath } from 'url';
import { binaryKind, binaryPackages, expectedBinary } from './platforms.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAX_BYTES = 150 * 1024 * 1024;
/** The CUDA binaries alone are ~180 MB unpacked: a CUDA package is for direct download, not the marketplace. */
const MAX_CUDA_BYTES = 250 * 1024 * 1024;
const NATIVE = /\.(node|so|dylib|dll)$/;

function newestVsix() {
  const found = readdirSync(root)
    .filter((name) => /^repogate-.*\.vsix$/.test(name))
    .map((name) => join(root, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!found.length) throw new Error(`no repogate-*.vsix in ${root}: run npm run package`);
  return found[0];
}

const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const target = option('--target') ?? 'linux-x64';
const cuda = argv.includes('--cuda');
const positional = argv.find((a, i) => !a.startsWith('--') && !(i > 0 && argv[i - 1] === '--target'));
const vsix = resolve(positional ?? newestVsix());
const binaries = binaryPackages(target, cuda);
const runnable = target === `${process.platform}-${process.arch}`;
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
};

const size = statSync(vsix).size;
const limit = cuda ? MAX_CUDA_BYTES : MAX_BYTES;
check(
  size <= limit,
  `${vsix} (${target}${cuda ? ', CUDA' : ''}): ${(size / 1024 / 1024).toFixed(1)} MB (limit ${limit / 1024 / 1024} MB)`,
);

const entries = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  .split('\n')
  .filter(Boolean);
const has = (path) => entries.includes(`extension/${path}`);
for (const path of [
  'package.json',
  'dist/extension.js',
  'dist/cli.js',
  'dist/indexProcess.js',
  'dist/engineProcess.js',
  'dist/processLauncher.js',
  'dist/models/repogate-tiny.gguf',
  ...['', '-typescript', '-tsx', '-javascript', '-python', '-go', '-rust', '-java'].map(
    (g) => `dist/grammars/tree-sitter${g}.wasm`,
  ),
  'node_modules/web-tree-sitter/package.json',
  'node_modules/node-llama-cpp/package.json',
  ...binaries.map((name) => `node_modules/@node-llama-cpp/${name}/bins/${name}/llama-addon.node`),
]) {
  check(has(path), `contains ${path}`);
}

// The listing: what each binary package brings, and every native file's format and CPU against the target's.
const sizes = new Map(
  execFileSync('unzip', ['-Zl', vsix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length >= 10 && f[f.length - 1].startsWith('extension/'))
    .map((f) => [f[f.length - 1], Number(f[3])]),
);
const shipped = [
  ...new Set(entries.map((e) => /^extension\/node_modules\/@node-llama-cpp\/([^/]+)\//.exec(e)?.[1]).filter(Boolean)),
];
for (const name of shipped) {
  const files = entries.filter((e) => e.startsWith(`extension/node_modules/@node-llama-cpp/${name}/`));
  const bytes = files.reduce((sum, e) => sum + (sizes.get(e) ?? 0), 0);
  console.log(`     @node-llama-cpp/${name}: ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB unpacked`);
}
check(
  shipped.every((name) => binaries.includes(name)) && binaries.every((name) => shipped.includes(name)),
  `binary packages are exactly ${binaries.join(', ')} (found ${shipped.join(', ') || 'none'})`,
);
const want = expectedBinary(target);
const natives = entries.filter((e) => e.startsWith('extension/node_modules/') && NATIVE.test(e));
const foreign = natives.filter((e) => {
  const head = execFileSync('unzip', ['-p', vsix, e], { maxBuffer: 1024 * 1024 * 1024 }).subarray(0, 4096);
  const kind = binaryKind(head);
  return !kind || kind.format !== want.format || kind.cpu !== want.cpu;
});
check(
  natives.length > 0 && foreign.length === 0,
  `${natives.length} native files, all ${want.format} ${want.cpu}${foreign.length ? `; foreign: ${foreign.slice(0, 3).join(', ')}` : ''}`,
);
const unwanted = [
  [/^extension\/(src|test|tools|out|docs|bin|\.bench|\.e2e-cache)\//, 'sources, tests, tools, build or cache folders'],
  [/\.(map|vsix)$|\.d\.ts$/, 'source maps, type declarations, packages'],
  [
    /^extension\/node_modules\/(typescript|tree-sitter-wasms|lru-cache|minisearch|picomatch)\//,
    'bundled or unused packages',
  ],
  [/gitRelease\.bundle$/, "llama.cpp's source bundle"],
];
for (const [pattern, what] of unwanted) {
  const hits = entries.filter((e) => pattern.test(e));
  check(
    hits.length === 0,
    `leaves out ${what}${hits.length ? `: ${hits.slice(0, 3).join(', ')}${hits.length > 3 ? ', …' : ''}` : ''}`,
  );
}

if (!runnable) {
  console.log(
    `not run: the run-time checks (CLI, model load) need a ${target} machine; this one is ${process.platform}-${process.arch}`,
  );
  console.log(
    failures
      ? `vsix check failed: ${failures} problem(s)`
      : `vsix check passed (${target}: contents only, untested at run time)`,
  );
  process.exit(failures ? 1 : 0);
}

// Outside the repository, so that module resolution cannot fall back on its node_modules.
const work = mkdtempSync(join(tmpdir(), 'repogate-vsix-'));
try {
  for (let dir = work; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) throw new Error(`${dir}/node_modules would leak into the check`);
    if (dir === dirname(dir)) break;
  }
  execFileSync('unzip', ['-q', vsix, 'extension/*', '-d', work]);
  const ext = join(work, 'extension');
  const repo = join(work, 'shop');
  cpSync(join(root, 'test', 'fixtures', 'repos', 'shop'), repo, { recursive: true });
  const env = { ...process.env, NODE_PATH: '' };
  const run = (args) =>
    execFileSync(process.execPath, args, {
      cwd: work,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });

  const retrieval = JSON.parse(
    run([
      join(ext, 'dist', 'cli.js'),
      'retrieve',
      repo,
      'src/services/userService.ts:9:38',
      '--json',
      '--cache',
      join(work, 'cache'),
    ]),
  );
  const definition = retrieval.snippets.find((s) => s.retriever === 'definition' && s.path === 'src/db/userRepo.ts');
  check(
    Boolean(definition),
    `dist/cli.js retrieve finds the definition of this.repo (${retrieval.snippets.length} snippets)`,
  );

  // Written into the unpacked extension so that `import('node-llama-cpp')` resolves as the installed extension's does.
  const probe = join(ext, 'verify-probe.mjs');
  writeFileSync(
    probe,
    `
    const resolved = import.meta.resolve('node-llama-cpp');
    const { getLlama, LlamaCompletion } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu: false, build: 'never' });
    const model = await llama.loadModel({ modelPath: new URL('./dist/models/repogate-tiny.gguf', import.meta.url).pathname, gpuLayers: 0 });
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const text = await completion.generateCompletion('export function add(a: number, b: number) {', { maxTokens: 8 });
    console.log(JSON.stringify({ resolved, buildType: llama.buildType, gpu: llama.gpu, tokens: model.tokenize('<cc>', true).length, text }));
    await llama.dispose();
  `,
  );
  const probed = JSON.parse(run([probe]).trim().split('\n').pop());
  check(
    probed.resolved.startsWith(`file://${ext}/node_modules/node-llama-cpp/`),
    `node-llama-cpp resolves inside the package (${probed.resolved.replace(`file://${work}/`, '')})`,
  );
  check(
    probed.buildType === 'prebuilt' && probed.gpu === false,
    `prebuilt linux-x64 CPU binary loads (buildType ${probed.buildType}, gpu ${probed.gpu})`,
  );
  check(
    probed.tokens === 1,
    `tiny model loads from dist/models and knows <cc>; generated ${JSON.stringify(probed.text)}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(failures ? `vsix check failed: ${failures} problem(s)` : 'vsix check passed');
process.exit(failures ? 1 : 0);
