// `npm run bench:generation`: the generation benchmark — never / always / token / heuristic side by side (a
// Repoformer Table 2 for our setting) with the bundled tiny model on the tiny model's held-out packages
// (test/fixtures/models/repogate-tiny.md),
// one `repogate bench --model --gate` run per package on its `make-tasks` tasks, pooled into one table.
// The packages come from the tiny model's corpus (tools/tiny-model/reproduce.sh step 1 builds it).
// Usage: npm run bench:generation [-- --per-kind N] [-- --model PATH] [-- --engine llama-server|openai-compatible
// [--server URL]]: with an engine and no --server, a llama-server (tools/llama-server/build.sh) is started on
// 127.0.0.1 with the same model, one thread and one slot, for the run.
// Writes .bench/generation-results[-ENGINE].json (the per-package reports) and beside it generation-latency[-ENGINE].svg
// (plots.mjs: p50 and p95 per policy), also into --svg-dir DIR. `--report`: the table and SVG from that JSON, nothing
// run. docs/img/generation-latency.svg: npm run bench:generation -- --report --svg-dir docs/img
import { execFileSync } from 'child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { createRequire } from 'module';
import { join } from 'path';
import { startLlamaServer } from '../llama-server/start.mjs';
import { cli, flag, option, root } from './args.mjs';
import { latencyPlot, percentile } from './plots.mjs';

const perKind = option('--per-kind', '40');
const model = option('--model', join(root, 'test', 'fixtures', 'models', 'repogate-tiny.gguf'));
const corpus = option('--corpus', join(root, 'tools', 'tiny-model', 'work', 'corpus'));
const engine = option('--engine', 'local');
let server = option('--server', undefined);
const HELD_OUT = ['ajv', 'luxon', 'mobx', 'postcss', 'semver', 'yaml'];
const GATES = ['never', 'always', 'token', 'heuristic'];
const reportOnly = flag('--report');
const suffix = engine === 'local' ? '' : `-${engine}`;
const resultsFile = join(root, '.bench', `generation-results${suffix}.json`);
if (reportOnly && !existsSync(resultsFile)) {
  console.error(`no ${resultsFile} to report: run npm run bench:generation first`);
  process.exit(1);
}

if (!reportOnly && !existsSync(join(corpus, 'ajv'))) {
  console.error(`no corpus at ${corpus}: run the corpus step of tools/tiny-model/reproduce.sh first`);
  process.exit(1);
}
if (!reportOnly) execFileSync('node', [join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });
// The pooled ROC uses the project's own metric (out/, compiled by tsc; a report compiles only when it is missing).
const metrics = join(root, 'out', 'src', 'bench', 'metrics.js');
if (!reportOnly || !existsSync(metrics)) execFileSync('npx', ['tsc', '-p', '.'], { cwd: root, stdio: 'inherit' });
const { rocAuc } = createRequire(import.meta.url)(metrics);

/** One `repogate bench --gate` run per held-out package. */
async function measure() {
  const reports = [];
  const out = join(root, '.bench', 'generation');
  mkdirSync(out, { recursive: true });

  let started;
  if (engine !== 'local' && !server) {
    started = await startLlamaServer(model, ['-t', '1', '-np', '1']);
    server = started.url;
  }
  const engineArgs = engine === 'local' ? [] : ['--engine', engine, '--server', server];

  for (const name of HELD_OUT) {
    const tasks = join(out, `${name}-${perKind}.jsonl`);
    if (!existsSync(tasks))
      execFileSync(
        'node',
        [cli, 'make-tasks', join(corpus, name), '--out', tasks, '--per-kind', perKind, '--cache', join(out, 'cache')],
        { stdio: 'inherit' },
      );
    const json = execFileSync(
      'node',
      [
        cli,
        'bench',
        '--repo',
        join(corpus, name),
        '--tasks',
        tasks,
        '--model',
        model,
        '--gate',
        GATES.join(','),
        ...engineArgs,
        '--json',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 },
    );
    reports.push({ name, ...JSON.parse(json.toString().trim().split('\n').pop()) });
  }
  started?.stop();
  return reports;
}

const reports = reportOnly ? JSON.parse(readFileSync(resultsFile, 'utf8')) : await measure();

const cross = reports.reduce((s, r) => s + r.tasks.cross, 0);
const infile = reports.reduce((s, r) => s + r.tasks.infile, 0);
const weighted = (gate, pick, weight) =>
  reports.reduce((s, r) => s + pick(r) * weight(r), 0) /
  Math.max(
    1,
    reports.reduce((s, r) => s + weight(r), 0),
  );
const all = (r) => r.tasks.cross + r.tasks.infile;
const lines = [
  `held-out packages: ${HELD_OUT.join(', ')}; ${cross} cross + ${infile} infile tasks; model ${reports[0].model.family} on ${engine === 'local' ? `${reports[0].model.backend}, ${reports[0].model.threads} thread(s)` : `${engine} at ${server}`}`,
  '',
  '| policy | retrieval rate cross | retrieval rate infile | gate AUC (all tasks pooled) | EM | ES | p50 ms | p95 ms |',
  '|---|---|---|---|---|---|---|---|',
];
for (const gate of GATES) {
  const latencies = reports.flatMap((r) => r.latency_ms[gate]);
  lines.push(
    `| ${gate} | ${weighted(
      gate,
      (r) => r.gate[gate].rate_cross,
      (r) => r.tasks.cross,
    ).toFixed(2)} | ${weighted(
      gate,
      (r) => r.gate[gate].rate_infile,
      (r) => r.tasks.infile,
    ).toFixed(
      2,
    )} | ${rocAuc(reports.flatMap((r) => r.gate_scores[gate])).toFixed(3)} | ${weighted(gate, (r) => r.generation[gate].em, all).toFixed(3)} | ${weighted(gate, (r) => r.generation[gate].es, all).toFixed(3)} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 95).toFixed(1)} |`,
  );
}
const ratios = reports.map((r) => r.token_closed_latency_ratio).filter((x) => x !== undefined);
lines.push(
  '',
  `token gate latency over plain FIM when it does not fire (median of per-package medians): ${percentile(ratios, 50).toFixed(3)}`,
);
lines.push(
  '',
  'typing replay per package (keystrokes along the ground truth of the task with the longest left context, no retrieval):',
);
for (const { name, typing: t } of reports) {
  if (t)
    lines.push(
      `  ${name}: ${t.keystrokes} keystrokes, ${t.prompt_tokens}-token prompt: ${(t.evaluated_share_p50 * 100).toFixed(1)}% evaluated per keystroke (median ${t.evaluated_tokens_p50} tokens), first token p50 ${t.first_token_p50_ms} ms (empty cache ${t.cold_first_token_p50_ms} ms)`,
    );
}
console.log(lines.join('\n'));
if (!reportOnly) writeFileSync(resultsFile, JSON.stringify(reports, null, 2));
const svgDir = option('--svg-dir');
for (const dir of [join(root, '.bench'), svgDir].filter(Boolean)) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `generation-latency${suffix}.svg`), latencyPlot(reports, GATES));
  console.error(`latency plot: ${join(dir, `generation-latency${suffix}.svg`)}`);
}
