#!/usr/bin/env node
// Proves that a packaged .vsix works on its own: unpacks it into a temporary folder outside the source tree and,
// with plain node and no access to the repository's node_modules, runs the bundled CLI (tree-sitter grammars,
// web-tree-sitter, the index worker) and loads the bundled tiny model through the packaged node-llama-cpp.
// Usage: node tools/package/verify-vsix.mjs [file.vsix]   (default: the newest repogate-*.vsix in the repo root)
import { execFileSync } from 'child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { fileURLToPath } from 'url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAX_BYTES = 150 * 1024 * 1024;

function newestVsix() {
  const found = readdirSync(root)
    .filter((name) => /^repogate-.*\.vsix$/.test(name))
    .map((name) => join(root, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!found.length) throw new Error(`no repogate-*.vsix in ${root}: run npm run package`);
  return found[0];
}

const vsix = resolve(process.argv[2] ?? newestVsix());
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
};

const size = statSync(vsix).size;
check(size <= MAX_BYTES, `${vsix}: ${(size / 1024 / 1024).toFixed(1)} MB (limit 150 MB)`);

const entries = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n').filter(Boolean);
const has = (path) => entries.includes(`extension/${path}`);
for (const path of [
  'package.json',
  'dist/extension.js',
  'dist/cli.js',
  'dist/indexWorker.js',
  'dist/engineProcess.js',
  'dist/engineLauncher.js',
  'dist/models/repogate-tiny.gguf',
  ...['', '-typescript', '-tsx', '-javascript', '-python', '-go', '-rust', '-java'].map((g) => `dist/grammars/tree-sitter${g}.wasm`),
  'node_modules/web-tree-sitter/package.json',
  'node_modules/node-llama-cpp/package.json',
  'node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/llama-addon.node',
  'node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan/llama-addon.node',
]) {
  check(has(path), `contains ${path}`);
}
const unwanted = [
  [/^extension\/(src|test|tools|out|docs|bin|\.bench|\.e2e-cache)\//, 'sources, tests, tools, build or cache folders'],
  [/\.(map|vsix)$|\.d\.ts$/, 'source maps, type declarations, packages'],
  [/^extension\/node_modules\/@node-llama-cpp\/(?!linux-x64\/|linux-x64-vulkan\/)/, 'other native binaries (CUDA, arm, …)'],
  [/^extension\/node_modules\/(typescript|tree-sitter-wasms|lru-cache|minisearch|picomatch)\//, 'bundled or unused packages'],
  [/gitRelease\.bundle$/, "llama.cpp's source bundle"],
];
for (const [pattern, what] of unwanted) {
  const hits = entries.filter((e) => pattern.test(e));
  check(hits.length === 0, `leaves out ${what}${hits.length ? `: ${hits.slice(0, 3).join(', ')}${hits.length > 3 ? ', …' : ''}` : ''}`);
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
  const run = (args) => execFileSync(process.execPath, args, { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

  const retrieval = JSON.parse(run([join(ext, 'dist', 'cli.js'), 'retrieve', repo, 'src/services/userService.ts:9:38', '--json', '--cache', join(work, 'cache')]));
  const definition = retrieval.snippets.find((s) => s.retriever === 'definition' && s.path === 'src/db/userRepo.ts');
  check(Boolean(definition), `dist/cli.js retrieve finds the definition of this.repo (${retrieval.snippets.length} snippets)`);

  // Written into the unpacked extension so that `import('node-llama-cpp')` resolves as the installed extension's does.
  const probe = join(ext, 'verify-probe.mjs');
  writeFileSync(probe, `
    const resolved = import.meta.resolve('node-llama-cpp');
    const { getLlama, LlamaCompletion } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu: false, build: 'never' });
    const model = await llama.loadModel({ modelPath: new URL('./dist/models/repogate-tiny.gguf', import.meta.url).pathname, gpuLayers: 0 });
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const text = await completion.generateCompletion('export function add(a: number, b: number) {', { maxTokens: 8 });
    console.log(JSON.stringify({ resolved, buildType: llama.buildType, gpu: llama.gpu, tokens: model.tokenize('<cc>', true).length, text }));
    await llama.dispose();
  `);
  const probed = JSON.parse(run([probe]).trim().split('\n').pop());
  check(probed.resolved.startsWith(`file://${ext}/node_modules/node-llama-cpp/`), `node-llama-cpp resolves inside the package (${probed.resolved.replace(`file://${work}/`, '')})`);
  check(probed.buildType === 'prebuilt' && probed.gpu === false, `prebuilt linux-x64 CPU binary loads (buildType ${probed.buildType}, gpu ${probed.gpu})`);
  check(probed.tokens === 1, `tiny model loads from dist/models and knows <cc>; generated ${JSON.stringify(probed.text)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(failures ? `vsix check failed: ${failures} problem(s)` : 'vsix check passed');
process.exit(failures ? 1 : 0);
