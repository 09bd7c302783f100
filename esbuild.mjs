// Bundles the extension and the CLI into dist/ and copies the files they load at run time: the wasm files and the
// tiny demo model (the extension looks for it at <extensionPath>/dist/models/repogate-tiny.gguf).
import { build } from 'esbuild';
import { cpSync, mkdirSync } from 'fs';
import { createRequire } from 'module';
import { dirname, join } from 'path';

const require = createRequire(import.meta.url);
const grammars = join('dist', 'grammars');
mkdirSync(grammars, { recursive: true });
cpSync(join(dirname(require.resolve('web-tree-sitter')), 'tree-sitter.wasm'), join(grammars, 'tree-sitter.wasm'));
const wasmDir = join(dirname(require.resolve('tree-sitter-wasms/package.json')), 'out');
for (const name of ['typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java']) {
  cpSync(join(wasmDir, `tree-sitter-${name}.wasm`), join(grammars, `tree-sitter-${name}.wasm`));
}
mkdirSync(join('dist', 'models'), { recursive: true });
cpSync(join('test', 'fixtures', 'models', 'repogate-tiny.gguf'), join('dist', 'models', 'repogate-tiny.gguf'));

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  // node-llama-cpp is ESM with native binaries, loaded at run time with import(); web-tree-sitter's CommonJS
  // build locates its runtime through import.meta, which a CommonJS bundle cannot provide; tree-sitter-wasms is
  // only looked up when dist/grammars is missing (running from sources).
  external: ['vscode', 'node-llama-cpp', 'web-tree-sitter', 'tree-sitter-wasms'],
};
await build({
  ...common,
  entryPoints: {
    extension: 'src/extension.ts',
    cli: 'src/cli.ts',
    indexProcess: 'src/retrieval/indexProcess.ts',
    engineProcess: 'src/engine/engineProcess.ts',
    processLauncher: 'src/index/processLauncher.ts',
    parseWorker: 'src/index/parseWorker.ts',
  },
  outdir: 'dist',
});
