// `npm run bench`: the retrieval benchmark on the pinned public repositories in repos.json, one `repogate bench`
// run per repository (RepoGate, each of its retrievers alone, RepoCoder-Jaccard and BM25 on the same tasks), then
// one table per half (tuning: constants may be chosen on it; checking: never looked at while tuning) and a summary.
// Repositories are materialised by checkout.sh into .bench/repos (never committed); tasks are made once by
// `repogate make-tasks` into .bench/tasks. Each repository's report is kept in .bench/results/<commit>/ as soon as it
// is done; `--resume` reuses those of the same commit (a run on a busy machine may be stopped and taken up again).
// Usage: npm run bench [-- name ... | tuning | checking] [-- --per-kind N] [-- --resume]; names run in the order given.
// After the tables, recall.svg (plots.mjs: recall per repository against the baselines) in .bench/results/<commit>/
// (in .bench/ when src/ or tools/ differ from HEAD, or for a report) and in --svg-dir DIR. `--report [--results
// COMMIT|DIR,...]`: the tables and recall.svg from the reports kept there (by default HEAD's; the first folder
// holding a repository's report wins), nothing run, built or kept. docs/img/recall.svg:
// npm run bench -- --report --results 34f86bf,8d1d315 --svg-dir docs/img
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { basename, dirname, join } from 'path';
import { fileURLToPath } from 'url';
import { recallPlot } from './plots.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'dist', 'cli.js');
const args = process.argv.slice(2);
const perKindAt = args.indexOf('--per-kind');
const perKind = perKindAt >= 0 ? args.splice(perKindAt, 2)[1] : '100';
const resume = args.includes('--resume');
if (resume) args.splice(args.indexOf('--resume'), 1);
const reportOnly = args.includes('--report');
if (reportOnly) args.splice(args.indexOf('--report'), 1);
const resultsAt = args.indexOf('--results');
const keptDirs = resultsAt >= 0 ? args.splice(resultsAt, 2)[1].split(',') : [];
const svgDirAt = args.indexOf('--svg-dir');
const svgDir = svgDirAt >= 0 ? args.splice(svgDirAt, 2)[1] : undefined;
const position = (r) => [r.name, r.half].map((a) => args.indexOf(a)).find((i) => i >= 0) ?? -1;
const repos = JSON.parse(readFileSync(join(root, 'tools', 'bench', 'repos.json'), 'utf8'))
  .filter((r) => args.length === 0 || position(r) >= 0)
  .sort((a, b) => position(a) - position(b));
// Reports are kept under the commit they were measured at, and only when the code is that commit's.
const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' });
const clean = git('diff', '--quiet', 'HEAD', '--', 'src', 'tools').status === 0;
const resultsDir = join(root, '.bench', 'results', git('rev-parse', '--short', 'HEAD').stdout.trim());
const readDirs = keptDirs.length
  ? keptDirs.map((d) => (d.includes('/') ? d : join(root, '.bench', 'results', d)))
  : [resultsDir];
if (!clean && !reportOnly) console.error('src/ or tools/ differ from HEAD: reports are not kept, --resume is ignored');

if (!existsSync(cli) && !reportOnly) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
const checkout = reportOnly
  ? { status: 0 }
  : spawnSync('bash', [join(root, 'tools', 'bench', 'checkout.sh'), ...repos.map((r) => r.name)], {
      cwd: root,
      stdio: 'inherit',
    });
if (checkout.status !== 0) process.exit(checkout.status ?? 1);

if (!reportOnly) mkdirSync(join(root, '.bench', 'tasks'), { recursive: true });
if (!reportOnly) mkdirSync(resultsDir, { recursive: true });
const rows = [];
for (const repo of repos) {
  const kept = join(resultsDir, `${repo.name}-${repo.commit.slice(0, 8)}-uniform-${perKind}.json`);
  if (reportOnly) {
    const file = readDirs.map((d) => join(d, basename(kept))).find((f) => existsSync(f));
    if (file) rows.push({ repo, report: JSON.parse(readFileSync(file, 'utf8')) });
    else console.error(`${repo.name}: no kept report ${basename(kept)} in ${readDirs.join(', ')}`);
    continue;
  }
  if (resume && clean && existsSync(kept)) {
    rows.push({ repo, report: JSON.parse(readFileSync(kept, 'utf8')) });
    console.error(`${repo.name}: report kept from an earlier run at this commit`);
    continue;
  }
  const dir = join(root, '.bench', 'repos', repo.name);
  // `uniform`: lines sampled uniformly over the repository's lines (make-tasks' default, no per-file cap); the name
  // keeps task files made by the old capped sampler from being reused.
  const tasks = join(root, '.bench', 'tasks', `${repo.name}-${repo.commit.slice(0, 8)}-uniform-${perKind}.jsonl`);
  const started = Date.now();
  if (!existsSync(tasks)) {
    execFileSync('node', [cli, 'make-tasks', dir, '--out', tasks, '--per-kind', perKind], { stdio: 'inherit' });
    console.error(`${repo.name}: tasks made in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  const benchStarted = Date.now();
  const out = execFileSync('node', [cli, 'bench', '--repo', dir, '--tasks', tasks, '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  console.error(`${repo.name}: benchmarked in ${((Date.now() - benchStarted) / 1000).toFixed(0)} s`);
  const report = JSON.parse(out.toString().trim().split('\n').pop());
  if (clean) writeFileSync(kept, JSON.stringify(report));
  rows.push({ repo, report });
}

const f = (x, d = 2) => x.toFixed(d);
const row = (cells) => `| ${cells.join(' | ')} |`;
const RETRIEVERS = ['definition', 'lexical', 'similar', 'sibling', 'recent'];
const lines = [];
for (const half of ['tuning', 'checking']) {
  const inHalf = rows.filter(({ repo }) => repo.half === half);
  if (inHalf.length === 0) continue;
  lines.push(
    `### ${half} half`,
    '',
    row([
      'repository @ commit',
      'files',
      'cross tasks',
      'RepoGate',
      'Jaccard',
      'BM25',
      'profile per fold (calibration: its recall / fused, lines)',
      'fused',
      'alone: def / lex / sim / sib',
      'RepoGate p50 / p95 ms',
      'Jaccard p50 ms',
      'BM25 p50 ms',
      'cold index s',
      'RSS MB',
      'warm start s',
      'update ms (lines)',
    ]),
    row(Array(16).fill('---')),
  );
  for (const { repo, report } of inHalf) {
    const r = report.retrieval;
    const i = report.index;
    const alone = RETRIEVERS.filter((n) => n !== 'recent')
      .map((n) => f(report.perRetriever[n] ?? 0))
      .join(' / ');
    const calibrated = report.calibration
      .map((c) => `${c.profile} (${f(c.recall[c.profile])} / ${f(c.recall.fused)}, ${c.samples})`)
      .join('; ');
    const best = Math.max(r.jaccard.recall, r.bm25.recall);
    const bestAlone = Math.max(...RETRIEVERS.map((n) => report.perRetriever[n] ?? 0));
    const mark =
      (r.repogate.recall < best ? ` (below ${r.jaccard.recall > r.bm25.recall ? 'Jaccard' : 'BM25'})` : '') +
      (r.repogate.recall < bestAlone - 0.01 ? ' (below a retriever alone)' : '') +
      // Go's blank identifier declares nothing (R26): a packed "definition of _" is a bug, said where it happens.
      (report.blankDefinitions ? ` (${report.blankDefinitions} definitions of _)` : '');
    lines.push(
      row([
        `${repo.repo} @ ${repo.commit.slice(0, 10)}`,
        i.files,
        report.tasks.cross,
        `**${f(r.repogate.recall)}**${mark}`,
        f(r.jaccard.recall),
        f(r.bm25.recall),
        calibrated,
        f(report.fused),
        alone,
        `${f(r.repogate.p50_ms, 1)} / ${f(r.repogate.p95_ms, 1)}`,
        f(r.jaccard.p50_ms, 1),
        f(r.bm25.p50_ms, 1),
        f(i.build_ms / 1000, 1),
        i.rss_mb,
        f(i.warm_ms / 1000, 2),
        `${f(i.update_ms.p50, 1)} (${i.update_ms.lines})`,
      ]),
    );
  }
  lines.push('');
}
const summary = (half) => {
  const inHalf = rows.filter(({ repo }) => half === 'all' || repo.half === half);
  const mean = (key) =>
    inHalf.reduce((s, { report }) => s + report.retrieval[key].recall, 0) / Math.max(1, inHalf.length);
  const below = inHalf
    .filter(({ report: { retrieval: r } }) => r.repogate.recall < Math.max(r.jaccard.recall, r.bm25.recall))
    .map(({ repo }) => repo.name);
  const gain = (mean('repogate') - mean('jaccard')) * 100;
  return row([
    half,
    inHalf.length,
    f(mean('repogate'), 3),
    f(mean('jaccard'), 3),
    f(mean('bm25'), 3),
    f(gain, 1),
    below.join(', ') || 'none',
  ]);
};
lines.push(
  row([
    'half',
    'repositories',
    'mean RepoGate',
    'mean Jaccard',
    'mean BM25',
    'RepoGate − Jaccard, points',
    'below a baseline',
  ]),
  row(Array(7).fill('---')),
);
for (const half of ['tuning', 'checking', 'all']) lines.push(summary(half));
// Each language's mean on each half, TypeScript's first (repos.json names each repository's language; JavaScript
// repositories count as TypeScript's, as one resolver and one set of rules serve both).
const LANGUAGES = ['typescript', 'python', 'go', 'rust', 'java'];
const languageOf = (repo) => repo.language ?? 'typescript';
const means = (inHalf) => {
  if (inHalf.length === 0) return '–';
  const mean = (key) => inHalf.reduce((s, { report }) => s + report.retrieval[key].recall, 0) / inHalf.length;
  const best = (report) => Math.max(...RETRIEVERS.map((n) => report.perRetriever[n] ?? 0));
  const bestMean = inHalf.reduce((s, { report }) => s + best(report), 0) / inHalf.length;
  return `${f(mean('repogate'), 3)} / ${f(mean('jaccard'), 3)} / ${f(mean('bm25'), 3)} / ${f(bestMean, 3)} (${inHalf.length})`;
};
lines.push(
  '',
  row(['language', 'tuning: RepoGate / Jaccard / BM25 / best single (repositories)', 'checking: the same']),
  row(Array(3).fill('---')),
);
for (const language of LANGUAGES) {
  const ofLanguage = rows.filter(({ repo }) => languageOf(repo) === language);
  if (ofLanguage.length === 0) continue;
  lines.push(
    row([
      language,
      ...['tuning', 'checking'].map((half) => means(ofLanguage.filter(({ repo }) => repo.half === half))),
    ]),
  );
}
lines.push('', 'stage p50 / p95 ms (query, each retriever, pack):');
for (const { repo, report } of rows) {
  const stages = Object.entries(report.stages).map(([stage, t]) => `${stage} ${f(t.p50, 1)} / ${f(t.p95, 1)}`);
  lines.push(`- ${repo.name}: ${stages.join(', ')}`);
}
console.log(lines.join('\n'));
if (!reportOnly)
  writeFileSync(
    join(root, '.bench', 'results.json'),
    JSON.stringify(
      rows.map(({ repo, report }) => ({ ...repo, ...report })),
      null,
      2,
    ),
  );
// recall.svg beside the commit's reports (beside results.json for changed code or a report), and in --svg-dir.
for (const dir of [clean && !reportOnly ? resultsDir : join(root, '.bench'), svgDir].filter(Boolean)) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'recall.svg'), recallPlot(rows));
  console.error(`recall plot: ${join(dir, 'recall.svg')}`);
}
