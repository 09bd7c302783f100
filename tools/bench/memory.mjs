// `npm run bench:memory`: the index's own memory per benchmark repository, one fresh `repogate index --json` process
// each (so that nothing else shares its heap): peak RSS and the live heap after a full collection, as a table.
// Usage: node tools/bench/memory.mjs [name ... | tuning | checking | path/to/dir ...]
import { execFileSync } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { basename, join } from 'path';
import { fileURLToPath } from 'url';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..');
const cli = join(root, 'dist', 'cli.js');
const args = process.argv.slice(2);
const repos = JSON.parse(readFileSync(join(root, 'tools', 'bench', 'repos.json'), 'utf8'));
const named = repos.filter((r) => args.length === 0 || args.includes(r.name) || args.includes(r.half));
// Arguments that name no repository of repos.json are directories measured as they are.
const dirs = args.filter((a) => !repos.some((r) => r.name === a || r.half === a));
const targets = [
  ...named.map((r) => ({ label: `${r.repo} @ ${r.commit.slice(0, 10)}`, dir: join(root, '.bench', 'repos', r.name) })),
  ...dirs.map((d) => ({ label: basename(d), dir: d })),
];

if (!existsSync(cli)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
// A cache folder of its own: the measured build never reads or replaces the user's cache.
const cache = mkdtempSync(join(tmpdir(), 'repogate-memory-'));
const row = (cells) => `| ${cells.join(' | ')} |`;
const lines = [
  row(['repository', 'files', 'chunks', 'peak RSS MB', 'live heap MB', 'build s']),
  row(Array(6).fill('---')),
];
try {
  for (const { label, dir } of targets) {
    const out = execFileSync('node', [cli, 'index', dir, '--fresh', '--json', '--cache', cache], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const r = JSON.parse(out.toString().trim().split('\n').pop());
    const line = row([label, r.files, r.chunks, r.rss_mb, r.heap_mb, (r.ms / 1000).toFixed(1)]);
    process.stderr.write(`${line}\n`);
    lines.push(line);
  }
} finally {
  rmSync(cache, { recursive: true, force: true });
}
process.stdout.write(`${lines.join('\n')}\n`);
