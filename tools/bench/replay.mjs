// `npm run bench:replay`: commit replay (docs/benchmarks.md, "Commit replay"). For each repository below, the N newest
// non-merge commits up to the pinned one of repos.json are replayed in topological order through the index's
// incremental path, the index built cold at the oldest one's parent; their added lines are the tasks. Git history is read from
// $REPOGATE_MIRROR/<owner>+<name> (a bare clone, or its repo/ or .git subfolder), never written; trees are written
// under .bench/replay, each report in .bench/replay/<name>.json (--reuse prints the table from those without running).
// Usage: REPOGATE_MIRROR=DIR npm run bench:replay [-- name ...] [-- --commits N] [-- --reuse]
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';
import { cli, flag, option, root } from './args.mjs';

/**
 * Non-merge commits replayed per repository: enough for at least 300 cross tasks on each (nine of the fifteen
 * repositories, both halves; vue, astro, mikro-orm, eslint, echarts and faker are left out of the default run for its
 * length: vue gave 67 tasks in 300 commits, eslint 73).
 */
const COMMITS = {
  fiber: 220,
  sequelize: 300,
  kysely: 300,
  vueuse: 450,
  'refined-github': 800,
  flask: 1100,
  gin: 1400,
  knex: 550,
  scrapy: 300,
};

const names = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--commits');
const commitsOverride = option('--commits');
const repos = JSON.parse(readFileSync(join(root, 'tools', 'bench', 'repos.json'), 'utf8')).filter((r) =>
  names.length ? names.includes(r.name) || names.includes(r.half) : r.name in COMMITS,
);
const mirror = process.env.REPOGATE_MIRROR;
const reuse = flag('--reuse');
if (!mirror && !reuse) {
  console.error('Set REPOGATE_MIRROR to the folder holding <owner>+<name> git clones of repos.json (with history).');
  process.exit(2);
}

/** The git directory of `repo` under the mirror folder, as checkout.sh finds it. */
function gitDirOf(repo) {
  const base = join(mirror, repo.repo.replace('/', '+'));
  return ['', 'repo', join('repo', '.git'), '.git']
    .map((sub) => join(base, sub))
    .find((dir) => existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects')));
}

if (!existsSync(cli)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
mkdirSync(join(root, '.bench', 'replay'), { recursive: true });
const rows = [];
for (const repo of repos) {
  const saved = join(root, '.bench', 'replay', `${repo.name}.json`);
  if (reuse) {
    if (existsSync(saved)) rows.push({ repo, report: JSON.parse(readFileSync(saved, 'utf8')) });
    continue;
  }
  const gitDir = gitDirOf(repo);
  if (!gitDir) {
    console.error(`${repo.name}: no git directory at ${join(mirror, repo.repo.replace('/', '+'))}`);
    process.exit(2);
  }
  const commits = commitsOverride ?? String(COMMITS[repo.name] ?? 100);
  const work = join(root, '.bench', 'replay', repo.name);
  const run = spawnSync('node', [cli, 'replay', gitDir, repo.commit, commits, '--out', work, '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
  const report = JSON.parse(run.stdout.toString().trim().split('\n').pop());
  writeFileSync(saved, JSON.stringify(report));
  rows.push({ repo, report });
}

const f = (x, d = 2) => x.toFixed(d);
const row = (cells) => `| ${cells.join(' | ')} |`;
const header = [
  'repository (half)',
  'commits replayed (formatting only; from another branch; with tasks)',
  'cross tasks (with recent files)',
  'RepoGate',
  'without recent files',
  'Jaccard',
  'BM25',
  'profile',
  'fused',
  'alone: def / lex / sim / sib / recent',
  'on tasks with recent files: RepoGate / recent alone',
  'RepoGate p50 / p95 ms',
  'Jaccard / BM25 p50 ms',
  'update per commit p50 / p95 ms (commits)',
  'update per file p50 / p95 ms (files)',
];
const lines = [row(header), row(header.map(() => '---'))];
for (const { repo, report: r } of rows) {
  const c = r.commits;
  const t = r.retrieval;
  const alone = ['definition', 'lexical', 'similar', 'sibling', 'recent'].map((n) => f(r.perRetriever[n] ?? 0));
  lines.push(
    row([
      `${repo.repo} (${repo.half}) ${r.base.slice(0, 10)}..${r.end.slice(0, 10)}`,
      `${c.replayed} (${c.skipped.formatting}; ${c.caughtUp}; ${c.withTasks})`,
      `${r.tasks.cross} (${r.tasks.severalFiles})`,
      `**${f(t.repogate.recall)}**`,
      f(t.noRecent.recall),
      f(t.jaccard.recall),
      f(t.bm25.recall),
      r.calibration.profile,
      f(r.fused),
      alone.join(' / '),
      `${f(r.severalFiles.repogate)} / ${f(r.severalFiles.recent)}`,
      `${f(t.repogate.p50_ms, 1)} / ${f(t.repogate.p95_ms, 1)}`,
      `${f(t.jaccard.p50_ms, 1)} / ${f(t.bm25.p50_ms, 1)}`,
      `${f(r.update.perCommit.p50, 1)} / ${f(r.update.perCommit.p95, 1)} (${r.update.perCommit.count})`,
      `${f(r.update.perFile.p50, 1)} / ${f(r.update.perFile.p95, 1)} (${r.update.perFile.count})`,
    ]),
  );
}
console.log(lines.join('\n'));
