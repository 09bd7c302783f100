// `npm run bench`: the retrieval benchmark on the pinned public repositories in repos.json, one `repogate bench`
// run per repository (RepoGate, RepoCoder-Jaccard and BM25 on the same tasks), then one comparison table.
// Repositories are materialised by checkout.sh into .bench/repos (never committed); tasks are made once by
// `repogate make-tasks` into .bench/tasks. Usage: npm run bench [-- name ...] [-- --per-kind N]
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { dirname, join } from 'path';
import { fileURLToPath } from 'url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'dist', 'cli.js');
const args = process.argv.slice(2);
const perKindAt = args.indexOf('--per-kind');
const perKind = perKindAt >= 0 ? args.splice(perKindAt, 2)[1] : '150';
const repos = JSON.parse(readFileSync(join(root, 'tools', 'bench', 'repos.json'), 'utf8')).filter((r) => args.length === 0 || args.includes(r.name));

if (!existsSync(cli)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
const checkout = spawnSync('bash', [join(root, 'tools', 'bench', 'checkout.sh'), ...repos.map((r) => r.name)], { cwd: root, stdio: 'inherit' });
if (checkout.status !== 0) process.exit(checkout.status ?? 1);

mkdirSync(join(root, '.bench', 'tasks'), { recursive: true });
const rows = [];
for (const repo of repos) {
  const dir = join(root, '.bench', 'repos', repo.name);
  const tasks = join(root, '.bench', 'tasks', `${repo.name}-${repo.commit.slice(0, 8)}-${perKind}.jsonl`);
  if (!existsSync(tasks)) {
    execFileSync('node', [cli, 'make-tasks', dir, '--out', tasks, '--per-kind', perKind], { stdio: 'inherit' });
  }
  const out = execFileSync('node', [cli, 'bench', '--repo', dir, '--tasks', tasks, '--json'], { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  const report = JSON.parse(out.toString().trim().split('\n').pop());
  rows.push({ repo, report });
}

const f = (x, d = 2) => x.toFixed(d);
const lines = [
  '| repository @ commit | files | cross tasks | RepoGate recall | Jaccard recall | BM25 recall | RepoGate p50 / p95 ms | Jaccard p50 ms | BM25 p50 ms | cold index s | RSS MB | warm start s | update ms (lines) |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const { repo, report } of rows) {
  const r = report.retrieval;
  const i = report.index;
  lines.push(`| ${repo.repo} @ ${repo.commit.slice(0, 10)} | ${i.files} | ${report.tasks.cross} | **${f(r.repogate.recall)}** | ${f(r.jaccard.recall)} | ${f(r.bm25.recall)} | ${f(r.repogate.p50_ms, 1)} / ${f(r.repogate.p95_ms, 1)} | ${f(r.jaccard.p50_ms, 1)} | ${f(r.bm25.p50_ms, 1)} | ${f(i.build_ms / 1000, 1)} | ${i.rss_mb} | ${f(i.warm_ms / 1000, 2)} | ${f(i.update_ms.p50, 1)} (${i.update_ms.lines}) |`);
}
const mean = (key) => rows.reduce((s, { report }) => s + report.retrieval[key].recall, 0) / Math.max(1, rows.length);
lines.push('', `mean recall: RepoGate ${f(mean('repogate'))}, Jaccard ${f(mean('jaccard'))}, BM25 ${f(mean('bm25'))}; RepoGate − Jaccard = ${f((mean('repogate') - mean('jaccard')) * 100, 1)} points`);
console.log(lines.join('\n'));
writeFileSync(join(root, '.bench', 'results.json'), JSON.stringify(rows.map(({ repo, report }) => ({ ...repo, ...report })), null, 2));
