// `npm run bench:speed`: RepoGate's speed at real size, one shape at a time (a child process each, so that load
// time and memory are the shape's own): `repogate make-shape` writes (or reuses) the timing-only model in
// ~/.cache/repogate/shapes, then `repogate speed` measures it through the completion service and engine.
// Shapes that do not fit in free memory are skipped (and named). Writes .bench/speed-results.json; the last
// stdout line is one JSON object: {"device","threads","shapes":{"<name>":{load_ms, rss_mb, forward_ms, ...}}}.
// Threads default to the extension's own default (half the cores, at least one).
// Usage: npm run bench:speed [-- --shapes a,b] [-- --threads N] [-- --repo DIR] [-- --lines N] [-- --keystrokes N]
//   [-- --gate never,always] (the replays to run; `never`, the baseline, always runs) [-- --layout auto|line|cursor]
//   (auto, the default: the engine chooses from the measured speed; line or cursor force one, to compare both)
import { execFileSync } from 'child_process';
import { mkdirSync, writeFileSync } from 'fs';
import { freemem } from 'os';
import { join } from 'path';
import { cli, option, root } from './args.mjs';

/** The two shapes a 2-core run measures fully in ~10 minutes; larger ones on request. */
const shapes = option('--shapes', 'qwen2.5-coder-0.5b,repoformer-1b').split(',');
const passed = ['--threads', '--repo', '--lines', '--keystrokes', '--context', '--gate', '--layout'].flatMap((name) =>
  option(name) ? [name, option(name)] : [],
);
/** A model needs its file mapped plus KV cache and buffers: this much more free memory than the file. */
const MEMORY_HEADROOM = 1.5;

execFileSync('node', [join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });
const sizes = new Map(
  execFileSync('node', [cli, 'make-shape', '--list'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.split(/\s+/))
    .map(([name, gib]) => [name, Number(gib) * 2 ** 30]),
);
const results = {};
const skipped = [];
for (const name of shapes) {
  if (!sizes.has(name)) throw new Error(`unknown shape ${name}; known: ${[...sizes.keys()].join(', ')}`);
  if (sizes.get(name) * MEMORY_HEADROOM > freemem()) {
    skipped.push(
      `${name} (needs ~${((sizes.get(name) * MEMORY_HEADROOM) / 2 ** 30).toFixed(1)} GiB free, ${(freemem() / 2 ** 30).toFixed(1)} GiB free)`,
    );
    continue;
  }
  const model = execFileSync('node', [cli, 'make-shape', name], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const out = execFileSync('node', [cli, 'speed', '--model', model, ...passed, '--json'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  results[name] = JSON.parse(out.trim().split('\n').pop());
}

const first = Object.values(results)[0];
const pick = (k) =>
  k && {
    evaluated_p50: k.evaluated_p50,
    first_token_p50_ms: k.first_token_p50_ms,
    first_token_p95_ms: k.first_token_p95_ms,
    first_line_p50_ms: k.first_line_p50_ms,
    line_start_evaluated_p50: k.line_start_evaluated_p50,
    line_start_first_token_p50_ms: k.line_start_first_token_p50_ms,
  };
const summary = {
  device: first?.device ?? 'cpu',
  threads: first?.threads ?? 0,
  shapes: Object.fromEntries(
    Object.entries(results).map(([name, r]) => [
      name,
      {
        load_ms: r.load_ms,
        rss_mb: r.rss_mb,
        forward_ms: r.forward_ms,
        prompt_tok_s: r.prompt_tok_s,
        gen_tok_s: r.gen_tok_s,
        keystroke: pick(r.keystroke),
        keystroke_token_gate: pick(r.keystroke_token_gate),
        keystroke_heuristic: pick(r.keystroke_heuristic),
        keystroke_cc: pick(r.keystroke_cc),
        gate_overhead_ratio: r.gate_overhead_ratio,
      },
    ]),
  ),
};
const lines = [
  `RepoGate speed, ${summary.device}, ${summary.threads} thread(s)${skipped.length ? `; skipped: ${skipped.join('; ')}` : ''}`,
  '',
  '| shape | load ms | RSS MB | KV MB | forward ms | prompt tok/s | gen tok/s | evaluated/keystroke p50 | first token p50 / p95 ms | shown p50 ms | with CC: evaluated p50, first token p50 ms | gate overhead |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const [name, r] of Object.entries(results)) {
  const k = r.keystroke;
  const c = r.keystroke_cc;
  lines.push(
    `| ${name} | ${r.load_ms} | ${r.rss_mb} | ${r.kv_mb} | ${r.forward_ms} | ${r.prompt_tok_s} | ${r.gen_tok_s} | ${k.evaluated_p50} | ${k.first_token_p50_ms} / ${k.first_token_p95_ms} | ${k.first_line_p50_ms} | ${c ? `${c.evaluated_p50} (${c.context_tokens_p50} CC), ${c.first_token_p50_ms}` : '-'} | ${r.gate_overhead_ratio === undefined ? '-' : `${(r.gate_overhead_ratio * 100).toFixed(1)}%`} |`,
  );
}
lines.push(
  '',
  'line starts (the first keystroke on a new line; p50 tokens evaluated, first token ms, pause at the line end before it ms):',
);
const replays = [
  ['never', 'keystroke'],
  ['token', 'keystroke_token_gate'],
  ['heuristic', 'keystroke_heuristic'],
  ['always (CC)', 'keystroke_cc'],
];
for (const [name, r] of Object.entries(results)) {
  const starts = replays
    .filter(([, key]) => r[key])
    .map(
      ([gate, key]) =>
        `${gate} ${r[key].line_start_evaluated_p50}, ${r[key].line_start_first_token_p50_ms} (${r[key].line_end_pause_p50_ms})`,
    );
  lines.push(`  ${name}: ${starts.join('; ')}; cold first token ${r.cold_first_token_ms.join(', ')} ms`);
}
console.log(lines.join('\n'));
mkdirSync(join(root, '.bench'), { recursive: true });
writeFileSync(join(root, '.bench', 'speed-results.json'), JSON.stringify({ summary, results, skipped }, null, 2));
console.log(JSON.stringify(summary));
