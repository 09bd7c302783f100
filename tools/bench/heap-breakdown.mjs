// The index's live heap broken down by structure (issue 41): builds or loads the index as `repogate index` does,
// then drops its structures one at a time, in the order below, collecting after each; what each drop frees is what
// that structure retains beyond the ones dropped before it (a string shared by two structures counts for the later).
// "MB" is heapUsed + arrayBuffers (typed arrays' backing stores live outside the V8 heap).
// Usage: node --expose-gc tools/bench/heap-breakdown.mjs <dir> [--cache DIR] [--fresh] [--json]
//   needs `npx tsc -p .` (reads out/src). Without --fresh a valid cache under --cache is loaded (a warm start).
// It reads RepoIndex's private fields: a step whose field is gone reports null; update the steps with the index.
import { createRequire } from 'module';
import { readFileSync, existsSync, statSync } from 'fs';
import { join } from 'path';
import { fileURLToPath } from 'url';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..');
const require = createRequire(import.meta.url);
const { openIndex } = require(join(root, 'out', 'src', 'cli', 'workspaceIndex.js'));
const { cacheDirFor } = require(join(root, 'out', 'src', 'index', 'persist.js'));
const { repositoryDir } = require(join(root, 'out', 'src', 'cli', 'inputs.js'));

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--cache');
if (!dir || typeof gc !== 'function') {
  process.stderr.write(
    'usage: node --expose-gc tools/bench/heap-breakdown.mjs <dir> [--cache DIR] [--fresh] [--json]\n',
  );
  process.exit(2);
}

const live = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
};

const base = live();
const { index, report } = await openIndex(dir, { cacheBase: option('--cache'), fresh: flag('--fresh'), quiet: true });
const peakRss = process.resourceUsage().maxRSS / 1024;
const total = live() - base;
const mu = process.memoryUsage();
const process_ = Object.fromEntries(Object.entries(mu).map(([k, v]) => [k, Math.round(v / 2 ** 20)]));
const files = index.files.size;

// Sizes that explain the figures: how many of each thing the index holds.
const counts = { files, chunks: 0, chunkTextChars: 0, symbols: 0, signatureChars: 0, imports: 0, types: 0 };
for (const { facts } of index.files.values()) {
  counts.chunks += facts.chunks.length;
  for (const c of facts.chunks) counts.chunkTextChars += c.text.length;
  counts.symbols += facts.symbols.length;
  for (const s of facts.symbols) counts.signatureChars += s.signature.length;
  counts.imports += facts.imports.length;
  counts.types += facts.types.length;
}
counts.vocabulary = index.vocabulary?.size;
counts.bm25Terms = index.lexical?.terms?.size;
counts.fileWindows = index.fileWindows?.size;
counts.chunkWindows = index.chunkWindows?.size;

// Typed-array fill: numbers stored vs allocated (growth by doubling leaves slack), per large structure.
const windowDetail = (w) => {
  const postingsUsed = w.postingLength.reduce((a, b) => a + b, 0);
  const postingsAllocated = w.postings.reduce((a, p) => a + p.length, 0);
  return {
    slots: w.slotOwner.length,
    poolUsed: w.poolLength,
    poolAllocated: w.pool.length,
    postingsUsed,
    postingsAllocated,
  };
};
const postingDetail = () => {
  const fields = index.lexical.fields;
  return {
    encodedPostings: fields.reduce((a, f) => a + f.encoded, 0),
    encodedBytes: fields.reduce((a, f) => a + f.bytes.length, 0),
    recentPostings: fields.reduce((a, f) => a + f.recentCount, 0),
  };
};
const attempt = (f) => {
  try {
    return f();
  } catch {
    return null;
  }
};
const detail = {
  fileWindows: attempt(() => windowDetail(index.fileWindows)),
  chunkWindows: attempt(() => windowDetail(index.chunkWindows)),
  bm25: attempt(postingDetail),
};

const eachFact = (f) => {
  for (const { facts } of index.files.values()) f(facts);
};
// In order: each step frees what it alone still holds.
const steps = [
  ['file windows (similar-code inverted index)', () => (index.fileWindows = undefined)],
  ['chunk windows (per-chunk token sets)', () => (index.chunkWindows = undefined)],
  ['window vocabulary (token strings + map)', () => (index.vocabulary = undefined)],
  [
    'BM25 postings (term map + encoded lists)',
    () => {
      index.lexical.terms.clear();
      for (const f of index.lexical.fields) f.set(new Uint32Array(1), new Uint8Array(0), 0);
    },
  ],
  ['BM25 chunk ids, numbers, lengths', () => (index.lexical = undefined)],
  ['symbol tables (all + top-level)', () => (index.symbolTable.clear(), index.topLevelTable.clear())],
  ['chunk table (id -> chunk)', () => index.chunkTable.clear()],
  [
    'other derived maps (frequency, dirs, imports resolved, layout)',
    () => {
      for (const k of ['fileFrequency', 'dirFiles', 'resolved', 'resolvedImports']) index[k].clear();
      index.exportLog = [];
      index.layout = undefined;
      index.ambient = undefined;
      index.sourceLines = undefined;
    },
  ],
  [
    'chunk texts in memory (read recently, or where the disk failed; the rest are on disk)',
    () => {
      index.texts.recent.clear();
      eachFact((f) => f.chunks.forEach((c) => 'offset' in c || (c.text = '')));
    },
  ],
  ['chunk objects (id, range, symbols)', () => eachFact((f) => (f.chunks = []))],
  ['symbol signatures', () => eachFact((f) => f.symbols.forEach((s) => (s.signature = '')))],
  ['symbol objects (name, kind, range, container)', () => eachFact((f) => (f.symbols = []))],
  ['imports', () => eachFact((f) => (f.imports = []))],
  ['type annotations', () => eachFact((f) => (f.types = []))],
  ['file records (path, hash, facts shell) + file map', () => index.files.clear()],
];
const rows = [];
let before = live();
for (const [name, drop] of steps) {
  try {
    drop();
  } catch {
    rows.push({ structure: name, mb: null, bytesPerFile: null });
    continue;
  }
  const after = live();
  rows.push({ structure: name, mb: before - after, bytesPerFile: ((before - after) * 2 ** 20) / files });
  before = after;
}
rows.push({ structure: 'rest (runtime, parser, modules kept by the build)', mb: before - base, bytesPerFile: 0 });

// The cache body read as one string (what a warm start read before it streamed), and the lexical index's side file.
let cacheInfo;
const cacheDir = option('--cache') && cacheDirFor(option('--cache'), await repositoryDir(dir));
const body = cacheDir && join(cacheDir, 'index.jsonl');
if (body && existsSync(body)) {
  const bytes = readFileSync(body).length;
  const h = live();
  const raw = readFileSync(body, 'utf8');
  const stringMb = live() - h;
  cacheInfo = {
    bodyMb: bytes / 2 ** 20,
    stringMb,
    lexicalBinMb: statSync(join(cacheDir, 'lexical.bin')).size / 2 ** 20,
    rawChars: raw.length,
  };
}

const result = {
  dir,
  cache: report.cache.ok ? 'loaded' : report.cache.reason,
  peakRssMb: peakRss,
  totalMb: total,
  memoryUsageMb: process_,
  counts,
  detail,
  rows,
  cacheInfo,
};
if (flag('--json')) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const f = (x) => x.toFixed(1);
  process.stdout.write(
    `${dir}: ${files} files, ${report.cache.ok ? 'warm' : 'cold'}, peak RSS ${f(peakRss)} MB, index ${f(total)} MB\n`,
  );
  process.stdout.write(
    `memoryUsage MB after gc: ${JSON.stringify(process_)}\n${JSON.stringify(counts)}\n${JSON.stringify(detail)}\n| structure | MB | bytes/file |\n| --- | --- | --- |\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `| ${r.structure} | ${r.mb === null ? 'n/a' : f(r.mb)} | ${r.mb === null ? 'n/a' : Math.round(r.bytesPerFile)} |\n`,
    );
  if (cacheInfo) process.stdout.write(`cache: ${JSON.stringify(cacheInfo)}\n`);
}
