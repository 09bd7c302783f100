// One warm process of `npm run bench:scale` (tools/bench/scale.mjs), in its own fresh process so that the figures are
// a warm start's: loads the index from the cache a cold `repogate index --fresh --cache DIR` saved, times from the
// process's start to the end of its first retrieval, then retrieval p50/p95 and recall on the given tasks (each task's
// file updated with the task's text first, as an editor does, then restored) and single-file update p50/p95 on a
// fixed sample of parsed files (a one-character edit, then the original restored, untimed). Prints one JSON line.
// Usage: node tools/bench/scale-probe.mjs <dir> --cache DIR --tasks a.jsonl[,b.jsonl] [--updates N]
// Needs `npx tsc -p .` (reads out/src).
import { createRequire } from 'module';
import { join, resolve } from 'path';
import { option, root } from './args.mjs';

const require = createRequire(import.meta.url);
const out = (...p) => require(join(root, 'out', 'src', ...p));
const { RepoIndex } = out('index', 'repoIndex.js');
const { buildIndex } = out('index', 'workspace.js');
const { cacheDirFor } = out('index', 'persist.js');
const { languageForPath } = out('index', 'languages.js');
const { readSourceFile } = out('index', 'readSource.js');
const { retrieve } = out('retrieval', 'retrieve.js');
const { isHit, percentile, taskDocument } = out('bench', 'bench.js');
const { readTasks } = out('bench', 'taskFile.js');
const { peakRssMb } = out('cli', 'workspaceIndex.js');

const dir = resolve(process.argv[2]);
const UPDATES = Number(option('--updates', '40'));
const round = (x) => Number(x.toFixed(1));
const p50p95 = (times) => ({ p50: round(percentile(times, 50)), p95: round(percentile(times, 95)), n: times.length });

const tasks = [];
for (const file of option('--tasks').split(',')) tasks.push(...(await readTasks(file)));
const cross = tasks.filter((t) => t.metadata.kind === 'cross');

// Warm start: the cache as the cold build left it, then one retrieval for the first task.
const index = new RepoIndex(dir);
const load = await buildIndex(index, { root: dir, cacheDir: cacheDirFor(resolve(option('--cache')), dir) });
if (!load.cache.ok) throw new Error(`warm start did not use the cache: ${load.cache.reason}`);
const first = taskDocument(cross[0]);
retrieve(index, { path: cross[0].metadata.file, text: first.text, cursor: first });
/** Milliseconds since this process started (node's own start and module loading included). */
const warmToFirstRetrievalMs = performance.now();
const warmRssMb = peakRssMb();

const original = async (file) => {
  const read = await readSourceFile(dir, file);
  return 'text' in read ? read.text : undefined;
};

const times = [];
const recall = {};
for (const task of cross) {
  const file = task.metadata.file;
  const doc = taskDocument(task);
  await index.update(file, doc.text);
  const started = performance.now();
  const result = retrieve(index, { path: file, text: doc.text, cursor: doc });
  times.push(performance.now() - started);
  const r = (recall[task.metadata.repository] ??= { hits: 0, tasks: 0 });
  r.tasks++;
  if (isHit(task, result.snippets)) r.hits++;
  const text = await original(file);
  if (text !== undefined) await index.update(file, text);
}
for (const r of Object.values(recall)) r.recall = Number((r.hits / r.tasks).toFixed(3));

// Every k-th parsed file in path order: the same sample for the same workspace.
const parsed = [...index.files.keys()].filter((p) => languageForPath(p)?.wasm).sort();
const step = Math.max(1, Math.floor(parsed.length / UPDATES));
const updates = [];
for (let i = 0; i < parsed.length && updates.length < UPDATES; i += step) {
  const text = await original(parsed[i]);
  if (text === undefined) continue;
  const at = Math.floor(text.length / 2);
  const started = performance.now();
  await index.update(parsed[i], `${text.slice(0, at)}x${text.slice(at)}`);
  updates.push(performance.now() - started);
  await index.update(parsed[i], text);
}

process.stdout.write(
  `${JSON.stringify({
    files: index.files.size,
    load_ms: Math.round(load.buildMs),
    warm_to_first_retrieval_ms: Math.round(warmToFirstRetrievalMs),
    warm_rss_mb: Math.round(warmRssMb),
    retrieval_ms: p50p95(times),
    update_ms: p50p95(updates),
    recall,
  })}\n`,
);
