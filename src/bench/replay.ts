/**
 * `repogate replay`: the retrieval benchmark's second view (docs/benchmarks.md, "Commit replay"). The index is built
 * at an older commit and calibrated there, as the worker does after a build; the next commits are replayed through
 * the index's incremental path, and each commit's added lines are asked, with the commit's other changed files as
 * the recent files. Scored as `repogate bench` scores snapshot tasks, with the update time of each commit.
 */
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { WindowBaselines } from './baselines';
import { calibrate } from '../retrieval/calibration';
import { FUSED } from '../retrieval/profiles';
import { RETRIEVERS, retrieve } from '../retrieval/retrieve';
import type { RetrievalRequest, RetrieverName } from '../retrieval/types';
import { isHit, percentile, score, taskDocument, type RetrievalScore } from './bench';
import { UsageError } from '../cli/cliError';
import { CommitReplayer, type ReplayedCommit, type ReplayTask, type SkipCause } from './commitReplayer';
import { replayCommits } from './gitHistory';

export interface Spread {
  count: number;
  p50: number;
  p95: number;
}

export interface ReplayReport {
  gitDir: string;
  base: string;
  end: string;
  /** `caughtUp`: commits whose parent was not the commit replayed before them (the tree first moved there). */
  commits: {
    replayed: number;
    skipped: Record<SkipCause, number>;
    withTasks: number;
    severalFiles: number;
    caughtUp: number;
  };
  index: { files: number; symbols: number; chunks: number; build_ms: number };
  /** Milliseconds of the incremental updates: all of one commit's indexed files, and each file. */
  update: { perCommit: Spread; perFile: Spread };
  /** `severalFiles`: cross tasks whose commit changed other indexed files too (they have recent files). */
  tasks: { cross: number; infile: number; severalFiles: number };
  calibration: { profile: string; samples: number; recall: Record<string, number>; ms: number };
  retrieval: { repogate: RetrievalScore; noRecent: RetrievalScore; jaccard: RetrievalScore; bm25: RetrievalScore };
  fused: number;
  perRetriever: Partial<Record<RetrieverName, number>>;
  /** Recall of RepoGate and of the recent retriever alone on the `severalFiles` tasks. */
  severalFiles: { repogate: number; recent: number };
  stages: Record<string, { p50: number; p95: number }>;
}

export interface ReplayOptions {
  gitDir: string;
  end: string;
  commits: number;
  /** An empty folder the replayed tree is written to. */
  workDir: string;
  budget: number;
  log: (line: string) => void;
}

const ms2 = (x: number): number => Number(x.toFixed(2));
const spread = (values: number[]): Spread => ({
  count: values.length,
  p50: ms2(percentile(values, 50)),
  p95: ms2(percentile(values, 95)),
});
const share = (hits: number, total: number): number => Number((total ? hits / total : 0).toFixed(3));

type Calibration = Awaited<ReturnType<typeof calibrate>>;
type TimedPath = 'repogate' | 'noRecent' | 'jaccard' | 'bm25';

/** What the replay counts while it applies commits and asks their tasks: hits and times per path, update times. */
class ReplayTally {
  readonly skipped: Record<SkipCause, number> = { formatting: 0 };
  readonly perCommit: number[] = [];
  readonly perFile: number[] = [];
  readonly hits = { repogate: 0, noRecent: 0, jaccard: 0, bm25: 0, fused: 0, severalRepogate: 0, severalRecent: 0 };
  readonly times: Record<TimedPath, number[]> = { repogate: [], noRecent: [], jaccard: [], bm25: [] };
  readonly alone = new Map<RetrieverName, number>(RETRIEVERS.map((r) => [r.name, 0]));
  readonly stageTimes = new Map<string, number[]>();
  cross = 0;
  infile = 0;
  several = 0;
  withTasks = 0;
  severalFiles = 0;
  caughtUp = 0;

  constructor(
    private readonly replayer: CommitReplayer,
    private readonly baselines: WindowBaselines,
    private readonly calibration: Calibration,
    private readonly budget: number,
  ) {}

  /** Counts one replayed commit and asks each of its cross tasks. */
  async commit(replayed: ReplayedCommit): Promise<void> {
    const { texts } = this.replayer;
    for (const file of [...replayed.caughtUp, ...replayed.touched]) this.baselines.replaceFile(file, texts.get(file));
    if (replayed.caughtUp.length) this.caughtUp++;
    if (replayed.updateMs.length) {
      this.perCommit.push(replayed.updateMs.reduce((a, b) => a + b, 0));
      this.perFile.push(...replayed.updateMs);
    }
    if (replayed.touched.length > 1) this.severalFiles++;
    if (replayed.skipped) this.skipped[replayed.skipped]++;
    const crossTasks = replayed.tasks.filter((t) => t.task.metadata.kind === 'cross');
    this.infile += replayed.tasks.length - crossTasks.length;
    if (crossTasks.length) this.withTasks++;
    for (const task of crossTasks) {
      await this.ask(task);
      this.cross++;
    }
  }

  /** One task: RepoGate with and without the recent files, the fusion, each retriever alone, both baselines. */
  private async ask({ task, recent }: ReplayTask): Promise<void> {
    const { index, texts } = this.replayer;
    const { budget, calibration, hits } = this;
    const file = task.metadata.file;
    const doc = taskDocument(task);
    await index.update(file, doc.text);
    const request: RetrievalRequest = { path: file, text: doc.text, cursor: doc, budget, recent };
    const result = this.timed('repogate', () => retrieve(index, request, calibration.profile));
    const hit = isHit(task, result.snippets);
    if (hit) hits.repogate++;
    for (const [stage, t] of Object.entries(result.timings.stages)) {
      const list = this.stageTimes.get(stage);
      if (list) list.push(t);
      else this.stageTimes.set(stage, [t]);
    }
    const noRecent = this.timed('noRecent', () =>
      retrieve(index, { ...request, recent: undefined }, calibration.profile),
    );
    if (isHit(task, noRecent.snippets)) hits.noRecent++;
    const fused = calibration.profile === FUSED ? result : retrieve(index, request);
    if (isHit(task, fused.snippets)) hits.fused++;
    for (const name of this.alone.keys()) {
      const one = isHit(task, retrieve(index, { ...request, retrievers: [name] }).snippets);
      if (one) this.alone.set(name, this.alone.get(name)! + 1);
      if (one && name === 'recent' && recent.length) hits.severalRecent++;
    }
    if (recent.length) {
      this.several++;
      if (hit) hits.severalRepogate++;
    }
    await index.update(file, texts.get(file)!);
    const jac = this.baselines.jaccard(file, task.prompt, budget);
    this.times.jaccard.push(jac.ms);
    if (isHit(task, jac.snippets)) hits.jaccard++;
    const bm = this.baselines.bm25Search(file, task.prompt, budget);
    this.times.bm25.push(bm.ms);
    if (isHit(task, bm.snippets)) hits.bm25++;
  }

  private timed<T>(path: TimedPath, run: () => T): T {
    const started = performance.now();
    const result = run();
    this.times[path].push(performance.now() - started);
    return result;
  }

  /** The report's counted part: update times, tasks and recall per path. */
  scores(): Pick<
    ReplayReport,
    'update' | 'tasks' | 'retrieval' | 'fused' | 'perRetriever' | 'severalFiles' | 'stages'
  > {
    const { hits, times, cross, several } = this;
    return {
      update: { perCommit: spread(this.perCommit), perFile: spread(this.perFile) },
      tasks: { cross, infile: this.infile, severalFiles: several },
      retrieval: {
        repogate: score(hits.repogate, cross, times.repogate),
        noRecent: score(hits.noRecent, cross, times.noRecent),
        jaccard: score(hits.jaccard, cross, times.jaccard),
        bm25: score(hits.bm25, cross, times.bm25),
      },
      fused: share(hits.fused, cross),
      perRetriever: Object.fromEntries([...this.alone].map(([name, n]) => [name, share(n, cross)])),
      severalFiles: { repogate: share(hits.severalRepogate, several), recent: share(hits.severalRecent, several) },
      stages: Object.fromEntries(
        [...this.stageTimes].map(([stage, t]) => [stage, { p50: ms2(percentile(t, 50)), p95: ms2(percentile(t, 95)) }]),
      ),
    };
  }
}

export async function runReplay(options: ReplayOptions): Promise<ReplayReport> {
  const { gitDir, budget, log } = options;
  const { base, commits } = replayCommits(gitDir, options.end, options.commits);
  log(`indexing ${base.slice(0, 10)} in ${options.workDir}`);
  const replayer = await CommitReplayer.start(gitDir, base, options.workDir);
  try {
    const { index, texts } = replayer;
    const calibration = await calibrate(index, async (p) => texts.get(p), { budget });
    log(`indexed ${index.files.size} files; calibration chose ${calibration.profile.name}`);
    const tally = new ReplayTally(replayer, new WindowBaselines(index, texts), calibration, budget);
    for (const [i, commit] of commits.entries()) {
      await tally.commit(await replayer.apply(commit));
      if ((i + 1) % 20 === 0) log(`${i + 1}/${commits.length} commits, ${tally.cross} cross tasks`);
    }
    return {
      gitDir,
      base,
      end: commits[commits.length - 1],
      commits: {
        replayed: commits.length,
        skipped: tally.skipped,
        withTasks: tally.withTasks,
        severalFiles: tally.severalFiles,
        caughtUp: tally.caughtUp,
      },
      index: {
        files: replayer.build.files,
        symbols: replayer.build.symbols,
        chunks: replayer.build.chunks,
        build_ms: Math.round(replayer.build.buildMs),
      },
      calibration: {
        profile: calibration.profile.name,
        samples: calibration.samples,
        recall: Object.fromEntries(Object.entries(calibration.recall).map(([n, r]) => [n, Number(r.toFixed(3))])),
        ms: Math.round(calibration.ms),
      },
      ...tally.scores(),
    };
  } finally {
    replayer.dispose();
  }
}

/** Marks a folder as the replay's own, so that a second run may empty it and nothing else is ever emptied. */
const WORK_MARK = '.repogate-replay';

/** `repogate replay <git dir> <commit> <commits> [--out DIR] [--budget N] [--json]`. */
export async function replayCommand(
  args: string[],
  options: { budget: number; json: boolean; out?: string },
  log: (line: string) => void,
): Promise<number> {
  const [gitDir, end, count] = args;
  if (!gitDir || !end || !count) throw new UsageError('replay needs <git dir>, <commit> and <number of commits>');
  if (args.length > 3) throw new UsageError(`${args[3]}: one argument too many for replay`);
  const commits = /^\d+$/.test(count) ? Number(count) : 0;
  if (commits < 1) throw new UsageError(`${count}: not a number of commits`, 'Pass e.g. 100.');
  const workDir = options.out
    ? path.resolve(options.out)
    : await fs.mkdtemp(path.join(os.tmpdir(), 'repogate-replay-'));
  await prepareWorkDir(workDir);
  try {
    const report = await runReplay({ gitDir, end, commits, workDir, budget: options.budget, log });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      const c = report.commits;
      process.stdout.write(
        `${report.gitDir} ${report.base.slice(0, 10)}..${report.end.slice(0, 10)}: ${c.replayed} commits ` +
          `(${c.skipped.formatting} formatting only), ${report.tasks.cross} cross tasks\n`,
      );
      for (const [name, s] of Object.entries(report.retrieval)) {
        process.stdout.write(
          `  ${name.padEnd(9)} recall ${s.recall.toFixed(3)}  p50 ${s.p50_ms} ms  p95 ${s.p95_ms} ms\n`,
        );
      }
      process.stdout.write(
        `  alone: ${JSON.stringify(report.perRetriever)}\n  update ms: ${JSON.stringify(report.update)}\n`,
      );
    }
    return 0;
  } finally {
    if (!options.out) await fs.rm(workDir, { recursive: true, force: true });
  }
}

async function prepareWorkDir(dir: string): Promise<void> {
  const entries = await fs.readdir(dir).catch(() => [] as string[]);
  if (entries.length && !entries.includes(WORK_MARK)) {
    throw new UsageError(`--out ${dir}: not empty and not a replay folder`, 'Pass an empty or new folder.');
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, WORK_MARK), '');
}
