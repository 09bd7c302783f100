import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RepoIndex } from '../index/repoIndex';
import { readSourceFile } from '../index/readSource';
import { buildIndex } from '../index/workspace';
import { WindowBaselines } from './baselines';
import { calibrate, type Calibration } from '../retrieval/calibration';
import { coversAll } from '../retrieval/coverage';
import { FUSED } from '../retrieval/profiles';
import { RETRIEVERS, retrieve } from '../retrieval/retrieve';
import type { RetrieverName, Snippet } from '../retrieval/types';
import type { Task } from './makeTasks';
import { peakRssMb } from '../cli/workspaceIndex';

export interface RetrievalScore {
  recall: number;
  p50_ms: number;
  p95_ms: number;
}

export interface BenchReport {
  repo: string;
  tasks: { cross: number; infile: number };
  index: {
    files: number;
    symbols: number;
    chunks: number;
    build_ms: number;
    rss_mb: number;
    warm_ms: number;
    update_ms: { lines: number; p50: number };
  };
  retrieval: { repogate: RetrievalScore; jaccard: RetrievalScore; bm25: RetrievalScore };
  /** Recall of each retriever alone (its own candidates packed into the same budget). */
  perRetriever: Partial<Record<RetrieverName, number>>;
  /** Recall of the fusion of all retrievers, whatever the calibration chose. */
  fused: number;
  /**
   * Calibration on the repository's own lines, once per fold of the cross tasks: each fold's tasks use the profile
   * chosen with that fold's lines left out (the other fold's lines, like every other line of the repository, are
   * there as in an editor).
   */
  calibration: { profile: string; samples: number; recall: Record<string, number>; ms: number }[];
  /** Median and 95th-percentile milliseconds of each stage of RepoGate's retrieval. */
  stages: Record<string, { p50: number; p95: number }>;
  /** Snippets packed as the definition of Go's blank identifier `_`, which declares nothing (R26): always 0. */
  blankDefinitions: number;
}

/** What a packed definition of `_` would say (definitions.ts names a definition `definition of <name>`). */
const BLANK_DEFINITION = 'definition of _';

/** The file as the user has it when the task's line is still to be written, and where the cursor is. */
export function taskDocument(task: Task): { text: string; line: number; character: number } {
  const lines = task.prompt.split('\n');
  return {
    text: `${task.prompt}\n${task.right_context}`,
    line: lines.length - 1,
    character: lines[lines.length - 1].length,
  };
}

/** CrossCodeEval's retrieval hit: every novel identifier occurs, as a word, in the packed context. */
export function isHit(task: Task, snippets: Snippet[]): boolean {
  return coversAll(task.metadata.novel_identifiers, snippets);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

export function score(hits: number, total: number, times: number[]): RetrievalScore {
  return {
    recall: round(total ? hits / total : 0, 3),
    p50_ms: round(percentile(times, 50)),
    p95_ms: round(percentile(times, 95)),
  };
}

/** The file size the update target is stated for. */
const UPDATE_TARGET_LINES = 2000;

/** Median time to re-index the parsed file nearest 2,000 lines after a one-character edit (incremental reparse). */
async function measureUpdate(index: RepoIndex, texts: Map<string, string>): Promise<{ lines: number; p50: number }> {
  let target = '';
  let lines = 0;
  for (const [filePath, text] of texts) {
    const count = text.split('\n').length;
    const nearer = Math.abs(count - UPDATE_TARGET_LINES) < Math.abs(lines - UPDATE_TARGET_LINES);
    if (nearer && index.facts(filePath)?.language !== 'text') [target, lines] = [filePath, count];
  }
  if (!target) return { lines: 0, p50: 0 };
  const original = texts.get(target)!;
  await index.update(target, original);
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const at = Math.floor(original.length / 2);
    const edited = `${original.slice(0, at)}${i % 2 ? 'x' : ''}${original.slice(at)}`;
    const started = performance.now();
    await index.update(target, edited);
    times.push(performance.now() - started);
  }
  await index.update(target, original);
  return { lines, p50: round(percentile(times, 50)) };
}

/** Folds of the cross tasks, each served by a calibration that has not seen its lines. */
const CALIBRATION_FOLDS = 2;
/** Tasks between two progress lines. */
const PROGRESS_EVERY = 50;

/** `baselines: false` skips Jaccard and BM25 (reported as zero): a faster run while tuning RepoGate alone. */
export async function runBench(
  repoDir: string,
  tasks: Task[],
  budget: number,
  log: (line: string) => void,
  options = { baselines: true },
): Promise<BenchReport> {
  const root = path.resolve(repoDir);
  const cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'repogate-bench-'));
  try {
    const { index, report, rss, warm } = await indexTwice(root, cacheDir, log);
    const texts = new Map<string, string>();
    for (const filePath of index.files.keys()) {
      const read = await readSourceFile(root, filePath);
      if ('text' in read) texts.set(filePath, read.text);
    }
    const update = await measureUpdate(index, texts);

    // Two passes over the same tasks, so that the baselines' allocations (and their garbage collection)
    // never land inside RepoGate's timings.
    const cross = tasks.filter((t) => t.metadata.kind === 'cross');
    const calibrations = await calibrateFolds(index, texts, cross, budget, log);
    const repogate = await scoreRepoGate(index, texts, cross, calibrations, budget, log);
    const baselines = options.baselines ? scoreBaselines(index, texts, cross, budget) : undefined;
    index.dispose();
    const share = (n: number): number => round(cross.length ? n / cross.length : 0, 3);
    return {
      repo: root,
      tasks: { cross: cross.length, infile: tasks.length - cross.length },
      index: {
        files: report.files,
        symbols: report.symbols,
        chunks: report.chunks,
        build_ms: Math.round(report.buildMs),
        rss_mb: Math.round(rss),
        warm_ms: Math.round(warm.buildMs),
        update_ms: update,
      },
      retrieval: {
        repogate: score(repogate.hits, cross.length, repogate.times),
        jaccard: score(baselines?.jaccard.hits ?? 0, cross.length, baselines?.jaccard.times ?? []),
        bm25: score(baselines?.bm25.hits ?? 0, cross.length, baselines?.bm25.times ?? []),
      },
      fused: share(repogate.fusedHits),
      blankDefinitions: repogate.blankDefinitions,
      calibration: calibrations.map((c) => ({
        profile: c.profile.name,
        samples: c.samples,
        recall: Object.fromEntries(Object.entries(c.recall).map(([name, r]) => [name, round(r, 3)])),
        ms: Math.round(c.ms),
      })),
      perRetriever: Object.fromEntries([...repogate.alone].map(([name, n]) => [name, share(n)])),
      stages: Object.fromEntries(
        [...repogate.stageTimes].map(([stage, ms]) => [
          stage,
          { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)) },
        ]),
      ),
    };
  } finally {
    await fs.rm(cacheDir, { recursive: true, force: true });
  }
}

/** A cold build of the index (timed, with its peak RSS), then a warm start from the cache it saved. */
async function indexTwice(root: string, cacheDir: string, log: (line: string) => void) {
  const index = new RepoIndex(root);
  log(`indexing ${root}`);
  const report = await buildIndex(index, { root, cacheDir, fresh: true });
  const rss = peakRssMb();
  log(
    `indexed ${report.files} files, ${report.symbols} symbols, ${report.chunks} chunks in ${Math.round(report.buildMs)} ms`,
  );
  const warmIndex = new RepoIndex(root);
  const warm = await buildIndex(warmIndex, { root, cacheDir });
  if (!warm.cache.ok) throw new Error(`warm start did not use the cache: ${warm.cache.reason}`);
  warmIndex.dispose();
  return { index, report, rss, warm };
}

/**
 * Two-fold cross-fitting: in an editor only the line being written is missing from the calibration's sample, so
 * each task is served by a calibration that left out its own fold's lines and no others. Leaving every task line
 * out at once would leave a small repository (fewer candidate lines than tasks asked for) nothing like them.
 */
async function calibrateFolds(
  index: RepoIndex,
  texts: ReadonlyMap<string, string>,
  cross: readonly Task[],
  budget: number,
  log: (line: string) => void,
): Promise<Calibration[]> {
  const folds = Array.from({ length: CALIBRATION_FOLDS }, (_, f) =>
    cross.filter((_, i) => i % CALIBRATION_FOLDS === f),
  );
  const calibrations: Calibration[] = [];
  for (const fold of folds) {
    const calibration = await calibrate(index, async (p) => texts.get(p), {
      exclude: new Set(fold.map((t) => `${t.metadata.file}:${t.metadata.groundtruth_start_lineno}`)),
      budget,
    });
    log(
      `calibration chose ${calibration.profile.name} on ${calibration.samples} lines in ${Math.round(calibration.ms)} ms`,
    );
    calibrations.push(calibration);
  }
  return calibrations;
}

/** RepoGate on each task with its fold's calibration, the fusion of all retrievers, and each retriever alone. */
async function scoreRepoGate(
  index: RepoIndex,
  texts: ReadonlyMap<string, string>,
  cross: readonly Task[],
  calibrations: readonly Calibration[],
  budget: number,
  log: (line: string) => void,
) {
  let hits = 0;
  let fusedHits = 0;
  let blankDefinitions = 0;
  const times: number[] = [];
  const stageTimes = new Map<string, number[]>();
  const alone = new Map<RetrieverName, number>(RETRIEVERS.map((r) => [r.name, 0]));
  for (const [i, task] of cross.entries()) {
    const file = task.metadata.file;
    const doc = taskDocument(task);
    await index.update(file, doc.text);
    const { profile } = calibrations[i % CALIBRATION_FOLDS];
    const started = performance.now();
    const result = retrieve(index, { path: file, text: doc.text, cursor: doc, budget }, profile);
    times.push(performance.now() - started);
    if (isHit(task, result.snippets)) hits++;
    blankDefinitions += result.snippets.filter((s) => s.why === BLANK_DEFINITION).length;
    const fused = profile === FUSED ? result : retrieve(index, { path: file, text: doc.text, cursor: doc, budget });
    if (isHit(task, fused.snippets)) fusedHits++;
    for (const [stage, ms] of Object.entries(result.timings.stages)) {
      const list = stageTimes.get(stage);
      if (list) list.push(ms);
      else stageTimes.set(stage, [ms]);
    }
    for (const name of alone.keys()) {
      const one = retrieve(index, { path: file, text: doc.text, cursor: doc, budget, retrievers: [name] });
      if (isHit(task, one.snippets)) alone.set(name, alone.get(name)! + 1);
    }
    const original = texts.get(file);
    if (original !== undefined) await index.update(file, original);
    if ((i + 1) % PROGRESS_EVERY === 0) log(`RepoGate ${i + 1}/${cross.length} tasks`);
  }
  return { hits, fusedHits, times, stageTimes, alone, blankDefinitions };
}

/** RepoCoder's Jaccard and BM25 over the same windows, on every task. */
function scoreBaselines(index: RepoIndex, texts: ReadonlyMap<string, string>, cross: readonly Task[], budget: number) {
  const baselines = new WindowBaselines(index, texts);
  const jaccard = { hits: 0, times: [] as number[] };
  const bm25 = { hits: 0, times: [] as number[] };
  for (const task of cross) {
    const file = task.metadata.file;
    const jac = baselines.jaccard(file, task.prompt, budget);
    jaccard.times.push(jac.ms);
    if (isHit(task, jac.snippets)) jaccard.hits++;
    const bm = baselines.bm25Search(file, task.prompt, budget);
    bm25.times.push(bm.ms);
    if (isHit(task, bm.snippets)) bm25.hits++;
  }
  return { jaccard, bm25 };
}
