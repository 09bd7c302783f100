// `npm run bench:text-prompts`: what text prompts cost in prompt-cache reuse per keystroke (docs/remote.md, "Text
// prompts"). A server that takes text tokenizes the prompt again, with special-token parsing; where its tokens
// differ from the editor's, its cache (llama-server's slot, Ollama's, vLLM's prefix cache) matches a shorter
// prefix of the previous keystroke's prompt and evaluates more. For each vocabulary (the demo model's, and the
// real tokenizers in the vocabulary-only GGUFs of the llama.cpp source that node-llama-cpp ships, where they carry
// a FIM family), lines sampled uniformly from the source files of --repo are typed one character at a time in the
// family's FIM layout; per keystroke it counts the tokens a prefix cache evaluates (the prompt's length less its
// common prefix with the previous keystroke's) for token ids and for the server's tokenization of the text
// (node-llama-cpp's tokenizer, the same llama.cpp code and commit as llama-server's /tokenize; the unit test
// test/unit/remoteText.test.ts checks the server's own timings.prompt_n against token ids on the demo model).
// Usage: npm run bench:text-prompts [-- --repo DIR] [-- --lines N] [-- --seed S]
import { execFileSync } from 'child_process';
import { readdirSync, readFileSync, statSync } from 'fs';
import { createRequire } from 'module';
import { join, relative } from 'path';
import { option, root } from './args.mjs';

const repo = option('--repo', join(root, 'src'));
const lineCount = Number(option('--lines', '150'));
const seed = Number(option('--seed', '1'));
/** Characters of the file before the line (the editor's left window is of this order at Repoformer's budget). */
const LEFT_CHARS = 2000;
/** Characters after the line: the right context a FIM prompt carries. */
const RIGHT_CHARS = 600;
const SOURCE = /\.(ts|tsx|js|mjs|py|go|rs|java)$/;

execFileSync('npx', ['tsc', '-p', '.'], { cwd: root, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const out = (m) => require(join(root, 'out', 'src', ...m.split('/')));
const { promptText } = out('model/remote/promptText.js');
const { detectFamily, renderPrompt } = out('model/families.js');
const { readGguf, controlTokens } = out('model/gguf.js');
const { getSharedLlama } = out('model/codeModel.js');

const llamaCpp = execFileSync('bash', [join(root, 'tools', 'llama-server', 'build.sh')], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
  .toString()
  .trim()
  .split('\n')
  .pop()
  .replace(/\/build\/bin\/llama-server$/, '/src/models');
const vocabularies = [
  join(root, 'test', 'fixtures', 'models', 'repogate-tiny.gguf'),
  ...readdirSync(llamaCpp)
    .filter((f) => /^ggml-vocab-.*\.gguf$/.test(f))
    .map((f) => join(llamaCpp, f)),
];

/** Every source file under `dir`, and its lines. */
function sources(dir) {
  const files = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (SOURCE.test(name)) files.push({ path: relative(dir, full), text: readFileSync(full, 'utf8') });
    }
  };
  walk(dir);
  return files;
}

/** Lines sampled uniformly over all non-blank lines (a blank line is no typing), seeded. */
function sample(files) {
  const all = files.flatMap((f) => {
    const lines = f.text.split('\n');
    return lines.flatMap((l, i) => (l.trim() ? [{ file: f, lines, i }] : []));
  });
  let state = seed >>> 0 || 1;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all.slice(0, lineCount);
}

function commonPrefix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const mean = (values) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

const lines = sample(sources(repo));
const llama = await getSharedLlama();
const rows = [];
for (const file of vocabularies) {
  const header = await readGguf(file);
  const controls = controlTokens(header);
  let family;
  try {
    family = detectFamily({ controlTokens: controls, metadata: header.metadata });
  } catch {
    continue; // no FIM format in this vocabulary: no completion model uses it
  }
  const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
  const byId = new Map([...controls].map(([text, id]) => [id, text]));
  const vocab = { detokenize: (t, special, ctx) => model.detokenize(t, special, ctx), controls: byId };
  const tokenize = (pieces) =>
    pieces.flatMap((p) => ('text' in p ? (p.text ? [...model.tokenize(p.text, false)] : []) : [family.ids[p.special]]));
  const evaluated = { ids: [], text: [] };
  let same = 0;
  let prompts = 0;
  for (const { file: source, lines: all, i } of lines) {
    const before = all.slice(0, i).join('\n');
    const left = `${before ? `${before}\n` : ''}`.slice(-LEFT_CHARS);
    const right = `\n${all.slice(i + 1).join('\n')}`.slice(0, RIGHT_CHARS);
    const line = all[i];
    let previous;
    for (let k = 0; k <= line.length; k++) {
      const pieces = renderPrompt(family, { path: source.path, left: left + line.slice(0, k), right });
      const ids = tokenize(pieces).map(Number);
      const server = [...model.tokenize(promptText(ids, vocab), true)].map(Number);
      prompts++;
      if (server.join(',') === ids.join(',')) same++;
      if (previous) {
        evaluated.ids.push(ids.length - commonPrefix(ids, previous.ids));
        evaluated.text.push(server.length - commonPrefix(server, previous.server));
      }
      previous = { ids, server };
    }
  }
  await model.dispose();
  rows.push({
    vocabulary: file.split('/').pop(),
    family: family.family.label,
    prompts,
    identical: same / prompts,
    ids: { mean: mean(evaluated.ids), p50: percentile(evaluated.ids, 50), p95: percentile(evaluated.ids, 95) },
    text: { mean: mean(evaluated.text), p50: percentile(evaluated.text, 50), p95: percentile(evaluated.text, 95) },
  });
}

console.log(
  `${lines.length} lines sampled uniformly from ${relative(root, repo) || '.'} (seed ${seed}), typed one character a keystroke`,
);
console.log(
  '| vocabulary | family | prompts | server tokens = editor tokens | evaluated per keystroke, token ids (mean / p50 / p95) | text (mean / p50 / p95) |',
);
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.vocabulary} | ${r.family} | ${r.prompts} | ${(r.identical * 100).toFixed(1)} % | ${r.ids.mean.toFixed(2)} / ${r.ids.p50} / ${r.ids.p95} | ${r.text.mean.toFixed(2)} / ${r.text.p50} / ${r.text.p95} |`,
  );
console.log(JSON.stringify({ repo: relative(root, repo), lines: lines.length, seed, rows }));
