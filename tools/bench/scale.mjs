// `npm run bench:scale` (issues 41 and 44): the index at 10k, 25k, 50k and 100k source files. The workspace is a
// monorepo of packages/<name> folders made from the pinned inputs of scale-inputs.json: the benchmark repositories
// (checkout.sh, from $REPOGATE_MIRROR) first, then npm packages at exact versions, each tarball fetched once with
// `npm pack` into .bench/scale/tarballs and checked against its sha512 integrity. Files count as the indexer counts
// them (its own scan, language and read checks); each size is the first N of one fixed order (inputs in the listed
// order, each input's files in path order, the last input cut), laid out as hard links under .bench/scale/ws/<N>
// (never committed). Per size, each step a fresh process: a cold build (`repogate index --fresh`: time, peak RSS,
// live heap), a warm start to the first retrieval, retrieval and single-file update p50/p95 and the recall of the
// `recall` repositories wholly inside the size on their own tasks (scale-probe.mjs; the same probe on each of them
// indexed alone; the table counts those within RECALL_TOLERANCE of alone and names the worst), and a fresh copy
// of the workspace started from a shared cache (`build-cache`, then `index --shared-cache`). Each size's figures are
// kept in .bench/scale/results/<commit>/size-<N>.json as soon as they are done; the table (stdout), scale.json and
// scale.svg (memory and build time against workspace size) are made from every size kept for the commit.
// Usage: REPOGATE_MIRROR=DIR npm run bench:scale [-- --sizes 10000,25000] [-- --updates 40] [-- --skip-fetch]
//        [-- --report [--results COMMIT|DIR]] (only the table, JSON and SVG from the sizes kept, by default for HEAD)
//        [-- --svg-dir DIR] (scale.svg written there too). docs/img/scale.svg, once every size is kept for a commit:
//        npm run bench:scale -- --report --results COMMIT --svg-dir docs/img
import { execFileSync, spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import { createRequire } from 'module';
import { basename, dirname, join } from 'path';
import { cli, flag, option, root } from './args.mjs';
import { linePanel, svgDocument } from './svg.mjs';

const SIZES = option('--sizes', '10000,25000,50000,100000').split(',').map(Number);
const UPDATES = option('--updates', '40');
const TARGETS = { rss_mb: { 25000: 250, 100000: 500 }, build_s: { 100000: 180 } };
/** Issue 41's bound on how far a repository's recall inside the workspace may fall below its recall alone. */
const RECALL_TOLERANCE = 0.02;
const inputs = JSON.parse(fs.readFileSync(join(root, 'tools', 'bench', 'scale-inputs.json'), 'utf8'));
const repos = JSON.parse(fs.readFileSync(join(root, 'tools', 'bench', 'repos.json'), 'utf8'));
const work = join(root, '.bench', 'scale');
const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' }).stdout.trim();
const dirty = spawnSync('git', ['diff', '--quiet', 'HEAD', '--', 'src', 'tools'], { cwd: root }).status !== 0;
const keptAt = flag('--report') ? option('--results') : undefined;
const results = keptAt?.includes('/') ? keptAt : join(work, 'results', keptAt || git('rev-parse', '--short', 'HEAD'));
const log = (line) => process.stderr.write(`${line}\n`);
const run = (cmd, args, options = {}) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });

/** The last JSON line a `repogate` or probe process prints, with its wall time. */
function timedJson(args) {
  const started = performance.now();
  const out = execFileSync('node', args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  return { ...JSON.parse(out.toString().trim().split('\n').pop()), wall_ms: Math.round(performance.now() - started) };
}

const repoOf = (name) => repos.find((r) => r.name === name) ?? fail(`${name} is not in repos.json`);
function fail(message) {
  log(message);
  process.exit(2);
}

/** The npm tarball, fetched once and always checked against the pinned sha512 integrity. */
function tarball({ name, version, integrity }) {
  const file = join(work, 'tarballs', `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  const matches = () => `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}` === integrity;
  if (fs.existsSync(file) && matches()) return file;
  if (flag('--skip-fetch')) fail(`${name}@${version}: no tarball at ${file} (--skip-fetch)`);
  fs.mkdirSync(dirname(file), { recursive: true }); // npm pack does not make its destination
  run('npm', ['pack', `${name}@${version}`, '--pack-destination', dirname(file), '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!fs.existsSync(file) || !matches()) fail(`${name}@${version}: the tarball does not match its pinned integrity`);
  return file;
}

/** Each input's folder: the repository's checkout, or the package unpacked from its tarball. */
function sources() {
  const status = spawnSync('bash', [join(root, 'tools', 'bench', 'checkout.sh'), ...inputs.repos], {
    cwd: root,
    stdio: 'inherit',
  });
  if (status.status !== 0) process.exit(status.status ?? 1);
  const list = inputs.repos.map((name) => ({
    name,
    pin: repoOf(name).commit,
    dir: join(root, '.bench', 'repos', name),
  }));
  for (const pkg of inputs.packages) {
    const dir = join(work, 'unpacked', `${pkg.name}@${pkg.version}`);
    const done = `${dir}.done`;
    if (!fs.existsSync(done)) {
      const tgz = tarball(pkg);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      run('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1', '--no-same-owner']);
      fs.writeFileSync(done, pkg.integrity);
    }
    list.push({ name: pkg.name, pin: pkg.integrity, dir });
  }
  const names = new Set(list.map((s) => s.name));
  if (names.size !== list.length) fail('two inputs of scale-inputs.json would share one packages/<name> folder');
  return list;
}

const require = createRequire(import.meta.url);
const out = (...p) => require(join(root, 'out', 'src', ...p));

/** The files the indexer indexes in `dir`, in its scan order: listed, of a language, and readable as source. */
async function indexedFiles(dir) {
  const { scanWorkspace } = out('index', 'scan.js');
  const { languageForPath } = out('index', 'languages.js');
  const { readSourceFile } = out('index', 'readSource.js');
  const listed = (await scanWorkspace({ root: dir })).files.map((f) => f.path).filter((p) => languageForPath(p));
  const ok = [];
  for (let i = 0; i < listed.length; i += 64) {
    const batch = listed.slice(i, i + 64);
    const reads = await Promise.all(batch.map((p) => readSourceFile(dir, p)));
    batch.forEach((p, j) => 'text' in reads[j] && ok.push(p));
  }
  return ok;
}

/** Every input's indexed files, kept in .bench/scale/order.json for the same inputs. */
async function fileOrder(list) {
  const file = join(work, 'order.json');
  const key = createHash('sha256')
    .update(JSON.stringify(list.map((s) => [s.name, s.pin])))
    .digest('hex');
  const kept = fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8'));
  // Folders are this checkout's: the kept order may come from another.
  if (kept?.key === key) return kept.inputs.map((input, i) => ({ ...input, dir: list[i].dir }));
  const order = [];
  for (const s of list) {
    order.push({ ...s, files: await indexedFiles(s.dir) });
    log(`${s.name}: ${order.at(-1).files.length} files`);
  }
  fs.writeFileSync(file, JSON.stringify({ key, inputs: order }));
  return order;
}

/** The first `size` files of the order: whole inputs, then the first files of the one that reaches the size. */
export function prefix(order, size) {
  const plan = [];
  let left = size;
  for (const input of order) {
    if (left === 0) break;
    const take = Math.min(left, input.files.length);
    plan.push({ ...input, take });
    left -= take;
  }
  if (left > 0) fail(`the inputs hold ${size - left} indexed files, fewer than ${size}`);
  return plan;
}

/** Hard links of `src` under `dest` (symbolic links copied as they are), leaving out files `keep` rejects. */
function linkTree(src, dest, keep, rel = '') {
  fs.mkdirSync(join(dest, rel), { recursive: true });
  for (const entry of fs.readdirSync(join(src, rel), { withFileTypes: true })) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) linkTree(src, dest, keep, path);
    else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(join(src, path)), join(dest, path));
    else if (entry.isFile() && keep(path)) fs.linkSync(join(src, path), join(dest, path));
  }
}

/** The workspace of one size, made again only when its plan changed. */
function workspace(plan, size) {
  const dir = join(work, 'ws', String(size));
  const planFile = `${dir}.plan`;
  const summary = JSON.stringify(plan.map((p) => [p.name, p.pin, p.take]));
  if (fs.existsSync(planFile) && fs.readFileSync(planFile, 'utf8') === summary) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  for (const input of plan) {
    const indexed = new Set(input.files);
    const taken = new Set(input.files.slice(0, input.take));
    linkTree(input.dir, join(dir, 'packages', input.name), (p) => !indexed.has(p) || taken.has(p));
  }
  fs.writeFileSync(planFile, summary);
  return dir;
}

/** The `recall` repositories' task files (made by make-tasks as `npm run bench` does), paths as in the workspace. */
function taskFiles() {
  return inputs.recall.map((name) => {
    const repo = repoOf(name);
    const own = join(root, '.bench', 'tasks', `${name}-${repo.commit.slice(0, 8)}-uniform-100.jsonl`);
    fs.mkdirSync(dirname(own), { recursive: true }); // make-tasks writes only into a folder that exists
    if (!fs.existsSync(own)) run('node', [cli, 'make-tasks', join(root, '.bench', 'repos', name), '--out', own]);
    const inWorkspace = join(work, 'tasks', `${name}.jsonl`);
    fs.mkdirSync(dirname(inWorkspace), { recursive: true });
    const moved = fs
      .readFileSync(own, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const task = JSON.parse(line);
        task.metadata.file = `packages/${name}/${task.metadata.file}`;
        return JSON.stringify(task);
      });
    fs.writeFileSync(inWorkspace, `${moved.join('\n')}\n`);
    return { name, own, inWorkspace };
  });
}

const probe = (dir, cache, tasks) =>
  timedJson([
    join(root, 'tools', 'bench', 'scale-probe.mjs'),
    dir,
    '--cache',
    cache,
    '--tasks',
    tasks,
    '--updates',
    UPDATES,
  ]);

/** The tasks of the repositories the plan takes whole: a cut repository's tasks may name files it left out. */
export function wholeInPlan(plan, tasks) {
  const whole = new Set(plan.filter((p) => p.take === p.files.length).map((p) => p.name));
  return tasks.filter((t) => whole.has(t.name));
}

/** A cold build, the warm probe, and a fresh copy started from a shared cache, each in a fresh process. */
function measure(dir, size, tasks) {
  const started = Date.now();
  const cache = join(work, 'cache', String(size));
  fs.rmSync(cache, { recursive: true, force: true });
  log(`${size}: cold build`);
  const cold = timedJson([cli, 'index', dir, '--fresh', '--json', '--cache', cache]);
  if (cold.files !== size) {
    log(
      `${size}: warning: the index holds ${cold.files} files, not ${size} (rules changed? delete .bench/scale/order.json)`,
    );
  }
  log(`${size}: warm start, retrieval and updates`);
  const warm = probe(dir, cache, tasks.map((t) => t.inWorkspace).join(','));
  log(`${size}: a fresh copy from a shared cache`);
  const shared = join(cache, 'shared.idx');
  execFileSync('node', [cli, 'build-cache', dir, '--out', shared, '--cache', cache], { stdio: 'ignore' });
  // A real copy, as a clone is: every file has a new mtime, so each is read and checked against the shared cache.
  const clone = join(work, 'clone');
  fs.rmSync(clone, { recursive: true, force: true });
  run('cp', ['-R', dir, clone]);
  const fromShared = timedJson([
    cli,
    'index',
    clone,
    '--json',
    '--cache',
    join(cache, 'clone'),
    '--shared-cache',
    shared,
  ]);
  fs.rmSync(clone, { recursive: true, force: true });
  if (fromShared.shared_cache !== 'loaded') log(`${size}: warning: shared cache ${fromShared.shared_cache}`);
  fromShared.file_mb = Math.round(fs.statSync(shared).size / 1e6);
  // Three copies of the index (its cache, the shared file, the copy's cache): over 1 GB each at 100k files.
  fs.rmSync(cache, { recursive: true, force: true });
  return { size, cold, warm, shared: fromShared, run_s: Math.round((Date.now() - started) / 1000) };
}

/** Each `recall` repository indexed alone, probed on the same tasks: kept per commit, measured once each. */
function alone(tasks) {
  const file = join(results, 'alone.json');
  const figures = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  for (const t of tasks.filter((t) => !figures[t.name])) {
    const dir = join(root, '.bench', 'repos', t.name);
    const cache = join(work, 'cache', `alone-${t.name}`);
    fs.rmSync(cache, { recursive: true, force: true });
    const cold = timedJson([cli, 'index', dir, '--fresh', '--json', '--cache', cache]);
    figures[t.name] = { cold, warm: probe(dir, cache, t.own) };
    fs.writeFileSync(file, JSON.stringify(figures, null, 2));
  }
  return figures;
}

const s = (ms) => (ms / 1000).toFixed(1);
const target = (kind, size) => TARGETS[kind][size];

/**
 * How many of the repositories probed at a size keep their recall alone within RECALL_TOLERANCE, and the one that
 * falls furthest: "13 of 14 (worst vue -0.03)".
 */
export function recallSummary(recall, alone) {
  const drops = Object.keys(recall)
    .filter((name) => alone[name])
    .map((name) => ({ name, drop: alone[name].warm.recall[name].recall - recall[name].recall }));
  if (drops.length === 0) return '-';
  const within = drops.filter((d) => d.drop <= RECALL_TOLERANCE + 1e-9).length;
  const worst = drops.reduce((a, b) => (b.drop > a.drop ? b : a));
  return `${within} of ${drops.length} (worst ${worst.name} ${(-worst.drop).toFixed(2)})`;
}

/** The markdown table of every size kept, targets beside the figures. */
export function table(rows, alone) {
  const head = [
    'files',
    'chunks',
    'cold build s (≤ 180 at 100k)',
    'peak RSS MB (≤ 250 at 25k, ≤ 500 at 100k)',
    'live heap MB',
    'warm start → first retrieval s (≤ 10 at 100k)',
    'fresh copy from shared cache s (≤ 15 at 100k)',
    'shared cache MB',
    'retrieval p50 / p95 ms (p95 ≤ 30 at 100k)',
    'single-file update p50 / p95 ms (p50 ≤ 50 at 100k)',
    `repositories inside within ${RECALL_TOLERANCE} of their recall alone`,
    'run min',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const cells = [
      r.cold.files,
      r.cold.chunks,
      s(r.cold.ms),
      r.cold.rss_mb,
      r.cold.heap_mb,
      s(r.warm.warm_to_first_retrieval_ms),
      s(r.shared.wall_ms),
      r.shared.file_mb ?? '-',
      `${r.warm.retrieval_ms.p50} / ${r.warm.retrieval_ms.p95}`,
      `${r.warm.update_ms.p50} / ${r.warm.update_ms.p95}`,
      recallSummary(r.warm.recall, alone),
      (r.run_s / 60).toFixed(1),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** A plain SVG (svg.mjs): peak RSS and cold build time against the workspace's files, targets as red crosses. */
export function svgPlot(rows) {
  const byFiles = [...rows].sort((a, b) => a.cold.files - b.cold.files);
  const panel = (x, title, kind, value) =>
    linePanel({
      x,
      title,
      xLabel: 'source files',
      xMax: Math.max(100000, ...byFiles.map((r) => r.cold.files)),
      xStep: 25000,
      xFormat: (v) => (v ? `${v / 1000}k` : '0'),
      series: [{ points: byFiles.map((r) => [r.cold.files, value(r)]) }],
      targets: Object.entries(TARGETS[kind]).map(([size, v]) => [Number(size), v]),
    });
  return svgDocument(840, 310, [
    panel(0, 'peak RSS of the index process, MB', 'rss_mb', (r) => r.cold.rss_mb),
    panel(410, 'cold build, s', 'build_s', (r) => Number(s(r.cold.ms))),
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!flag('--report')) {
    run('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
    run('npx', ['tsc', '-p', '.']);
    const order = await fileOrder(sources());
    const tasks = taskFiles();
    fs.mkdirSync(results, { recursive: true });
    alone(tasks);
    for (const size of SIZES) {
      const plan = prefix(order, size);
      const figures = measure(workspace(plan, size), size, wholeInPlan(plan, tasks));
      fs.writeFileSync(join(results, `size-${size}.json`), JSON.stringify({ ...figures, dirty }, null, 2));
      log(`${size}: done in ${figures.run_s} s`);
    }
  }
  const rows = fs
    .readdirSync(results)
    .filter((f) => /^size-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(join(results, f), 'utf8')))
    .sort((a, b) => a.size - b.size);
  // A report of kept results measures nothing: the repositories alone only when they were kept too.
  const aloneFile = join(results, 'alone.json');
  const aloneFigures = keptAt ? (fs.existsSync(aloneFile) ? JSON.parse(fs.readFileSync(aloneFile, 'utf8')) : {}) : null;
  const commit = git('rev-parse', keptAt ? basename(results) : 'HEAD');
  const report = { commit, targets: TARGETS, alone: aloneFigures ?? alone(taskFiles()), sizes: rows };
  fs.writeFileSync(join(results, 'scale.json'), JSON.stringify(report, null, 2));
  const svgDir = option('--svg-dir');
  if (svgDir) fs.mkdirSync(svgDir, { recursive: true });
  for (const dir of [results, svgDir].filter(Boolean)) fs.writeFileSync(join(dir, 'scale.svg'), svgPlot(rows));
  const note = rows.some((r) => r.dirty) ? ' (some sizes measured with src/ or tools/ changed from it)' : '';
  console.log(`Scale benchmark at ${report.commit.slice(0, 10)}${note}\n\n${table(rows, report.alone)}`);
  console.log(
    `\n${join(results, 'scale.json')}, ${join(results, 'scale.svg')}${svgDir ? `, ${join(svgDir, 'scale.svg')}` : ''}`,
  );
}
