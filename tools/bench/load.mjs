// The remote engine under a team's load, on loopback: N simulated editors (default 1, 4, 16) type along held-out
// lines against one llama-server with parallel slots. Each keystroke aborts the editor's request in flight (as the
// completion service does) and asks for a completion (gate probe, then generation, through the real completion
// engine and remote model). Reports keystroke-to-first-token p50/p95 and how many requests completed, were aborted
// by the next keystroke, or failed. Bounded: KEYSTROKES per editor and a time cap per round.
// Usage: node tools/bench/load.mjs [--editors 1,4,16] [--keystrokes 30] [--typing-ms 150] [--slots 16]
//        [--threads 2] [--pin-slots] [--model PATH] [--corpus DIR] [--server URL]
// Needs `npx tsc -p .` (out/) and the corpus of tools/tiny-model/reproduce.sh step 1 (--corpus).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'fs';
import { createRequire } from 'module';
import { join } from 'path';
import { startLlamaServer } from '../llama-server/start.mjs';
import { flag, option, root } from './args.mjs';

const EDITORS = option('--editors', '1,4,16').split(',').map(Number);
const KEYSTROKES = Number(option('--keystrokes', '30'));
/** A steady typist: about 80 words a minute. */
const TYPING_MS = Number(option('--typing-ms', '150'));
const SLOTS = Number(option('--slots', '16'));
const THREADS = option('--threads', '2');
/** Pin editor i to slot i mod slots (llama-server id_slot) instead of letting the server pick by similarity. */
const PIN = flag('--pin-slots');
/** No round may take longer than this, whatever the server does. */
const ROUND_CAP_MS = 180_000;
const model = option('--model', join(root, 'test', 'fixtures', 'models', 'repogate-tiny.gguf'));
const corpus = option('--corpus', join(root, 'tools', 'tiny-model', 'work', 'corpus'));
const HELD_OUT = ['ajv', 'luxon', 'mobx', 'postcss', 'semver', 'yaml'];
/** Hand-written source files; bigger ones are bundles nobody types in. */
const MAX_FILE_BYTES = 64_000;

const require = createRequire(import.meta.url);
const { RemoteModel } = require(join(root, 'out', 'src', 'model', 'remote', 'remoteModel.js'));
const { CompletionEngine } = require(join(root, 'out', 'src', 'engine', 'completionEngine.js'));

/** Lines worth typing from the held-out packages' sources: code, not blank or comment lines. */
function heldOutLines() {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(name) && statSync(path).size <= MAX_FILE_BYTES) files.push(path);
    }
  };
  for (const name of HELD_OUT) if (existsSync(join(corpus, name))) walk(join(corpus, name));
  if (!files.length)
    throw new Error(`no held-out sources under ${corpus}: run the corpus step of tools/tiny-model/reproduce.sh`);
  const picks = [];
  for (const file of files.sort()) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    for (const [i, line] of lines.entries()) {
      const code = line.trim();
      if (code.length >= KEYSTROKES && !code.startsWith('//') && !code.startsWith('*'))
        picks.push({ file, text, line: i });
    }
  }
  return picks;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
};

async function startServer() {
  const given = option('--server', undefined);
  if (given) return { url: given, stop() {} };
  return startLlamaServer(model, ['-t', THREADS, '-np', String(SLOTS), '-c', String(SLOTS * 1024)]);
}

/** One editor typing `line` character by character; every keystroke aborts the last request and starts one. */
async function typeAlong(generator, pick, deadline, record) {
  const engine = new CompletionEngine({ generator, gate: 'token' });
  const lines = pick.text.split('\n');
  const target = lines[pick.line];
  const indent = target.length - target.trimStart().length;
  let inFlight;
  const pending = [];
  for (let k = 1; k <= KEYSTROKES && Date.now() < deadline; k++) {
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    const typed = target.slice(0, indent + k);
    const text = [...lines.slice(0, pick.line), typed, ...lines.slice(pick.line + 1)].join('\n');
    pending.push(
      engine
        .complete(
          { path: pick.file, text, cursor: { line: pick.line, character: typed.length }, mode: 'line' },
          { signal: controller.signal },
        )
        .then(
          (result) => record(result.aborted ? 'aborted' : 'completed', result.timings.firstTokenMs),
          (error) => record(controller.signal.aborted ? 'aborted' : 'failed', undefined, error),
        ),
    );
    await new Promise((resolve) => setTimeout(resolve, TYPING_MS));
  }
  await Promise.all(pending);
}

async function round(url, editors, picks) {
  const generators = [];
  for (let i = 0; i < editors; i++) {
    generators.push(
      await RemoteModel.load({ modelPath: model }, { engine: 'llama-server', url, slot: PIN ? i % SLOTS : undefined }),
    );
  }
  const counts = { completed: 0, aborted: 0, failed: 0 };
  const firstTokens = [];
  const errors = new Map();
  const record = (outcome, firstTokenMs, error) => {
    counts[outcome]++;
    // A request the next keystroke aborted after its first token still showed that token.
    if (firstTokenMs !== undefined) firstTokens.push(firstTokenMs);
    if (error && outcome === 'failed') errors.set(error.message, (errors.get(error.message) ?? 0) + 1);
  };
  const deadline = Date.now() + ROUND_CAP_MS;
  const started = performance.now();
  // Editors start a little apart, as people do, each on its own held-out line.
  await Promise.all(
    generators.map(async (generator, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * TYPING_MS) / editors));
      await typeAlong(generator, picks[(i * 7919) % picks.length], deadline, record);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const g of generators) await g.dispose();
  return {
    editors,
    requests: counts.completed + counts.aborted + counts.failed,
    ...counts,
    with_first_token: firstTokens.length,
    first_token_p50_ms: Number(percentile(firstTokens, 50).toFixed(1)),
    first_token_p95_ms: Number(percentile(firstTokens, 95).toFixed(1)),
    seconds: Number(seconds.toFixed(1)),
    errors: Object.fromEntries(errors),
  };
}

const picks = heldOutLines();
const server = await startServer();
const results = [];
try {
  for (const editors of EDITORS) {
    const r = await round(server.url, editors, picks);
    results.push(r);
    console.error(`${editors} editor(s): ${JSON.stringify(r)}`);
  }
} finally {
  server.stop();
}
const lines = [
  `llama-server, ${SLOTS} slots${PIN ? ' (one pinned per editor)' : ''}, ${THREADS} thread(s), ` +
    `model ${model.split('/').pop()}; ${KEYSTROKES} keystrokes per editor every ${TYPING_MS} ms; ` +
    'gate probe + generation per keystroke',
  '',
  '| editors | requests | completed | aborted | failed | with a first token ' +
    '| keystroke→first token p50 ms | p95 ms | round s |',
  '|---|---|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.editors} | ${r.requests} | ${r.completed} | ${r.aborted} | ${r.failed} | ${r.with_first_token} ` +
      `| ${r.first_token_p50_ms} | ${r.first_token_p95_ms} | ${r.seconds} |`,
  ),
];
console.log(lines.join('\n'));
mkdirSync(join(root, '.bench'), { recursive: true });
writeFileSync(join(root, '.bench', `load-results${PIN ? '-pinned' : ''}.json`), JSON.stringify(results, null, 2));
