/**
 * Per-repository calibration of the fusion: lines of the repository's own product code, chosen and cut the way
 * benchmark tasks are, show which profile (the fusion, or one retriever alone) packs the identifiers those lines need. The
 * fusion's weights were chosen on a handful of repositories; a user's repository may be one where a single
 * retriever finds more, and this is where that shows (docs/decisions-retrieval.md, R10).
 */
import { languageForPath } from '../index/languages';
import { SourceParser } from '../index/parser';
import { isProductSource } from '../index/productPath';
import { questionLines, sampleLines, type QuestionLine } from '../index/questionLines';
import { comparePaths } from '../index/relPath';
import { projectsOf, type ProjectRoots } from '../index/projects';
import type { RepoIndex } from '../index/repoIndex';
import { seededRandom, shuffled } from '../index/seededRandom';
import { coversAll } from './coverage';
import { FUSED, PROFILES, type FusionProfile } from './profiles';
import { fuseAndPack, retrievalContext, runRetrievers } from './retrieve';
import type { Cursor } from './types';

/** Samples measured: a recall's standard error is at most 5 points, as with the benchmark's 100 tasks. */
const SAMPLES = 100;
/**
 * Lines of product code read at most while looking for sample lines: bounds the work on a large repository. A
 * repository up to this size is read whole, so that the sample is uniform over its lines; reading and parsing the
 * 240,000 lines of the largest benchmark repository (faker) took 3.6 s of CPU, in the index worker after the build.
 */
export const MAX_LINES_READ = 250_000;
/** Fewer samples than this decide nothing: the fusion stays. */
const MIN_SAMPLES = 30;
/**
 * Share of the samples a single retriever must cover beyond the fusion to replace it: the fusion also serves what
 * samples cannot show (recent files, a draft's second query), and a paired difference on 100 samples has a standard
 * error near 4 points (decisions R10, R12).
 */
export const MARGIN = 0.08;
/** The seed of the sample: the same repository gets the same calibration on every machine. */
const SEED = 7;

/** One line of the repository as a retrieval question: the file without it, the cursor where it starts. */
export interface CalibrationSample {
  path: string;
  text: string;
  cursor: Cursor;
  /** Identifiers the line uses that its file never mentions elsewhere and another file declares. */
  novel: string[];
}

export interface Calibration {
  profile: FusionProfile;
  samples: number;
  /** Share of the samples whose novel identifiers each profile packs, by profile name. */
  recall: Record<string, number>;
  ms: number;
}

/** One project's calibration (projects.ts): its own lines chose its profile. */
export interface ProjectCalibration extends Omit<Calibration, 'ms'> {
  project: string;
}

/** A workspace calibrated project by project; `roots` map a request's path to its project. */
export interface WorkspaceCalibration {
  projects: ProjectCalibration[];
  roots: ProjectRoots;
  ms: number;
}

export interface CalibrationOptions {
  /**
   * Lines never sampled, as `path:row` (zero-based): the benchmark's task lines, which in an editor would be the
   * line not yet written.
   */
  exclude?: ReadonlySet<string>;
  budget: number;
  signal?: AbortSignal;
  /** Lines of product code read at most (default MAX_LINES_READ). */
  maxLinesRead?: number;
}

/** A question line made a sample: its file cut at the line's first non-blank character, the rest of the line gone. */
function sampleOf(line: QuestionLine, text: string): CalibrationSample {
  const lines = text.split('\n');
  const cut = [...lines.slice(0, line.row), lines[line.row].slice(0, line.column), ...lines.slice(line.row + 1)];
  return {
    path: line.file,
    text: cut.join('\n'),
    cursor: { line: line.row, character: line.column },
    novel: line.novel,
  };
}

/**
 * Up to SAMPLES cross-file question lines of `files` (product files, sorted), found and sampled as `make-tasks` finds
 * and samples the benchmark's tasks (src/index/questionLines.ts): the calibration asks the kind of question the
 * benchmark measures, uniformly over the lines where people type. Files are read in a seeded order until
 * `maxLinesRead` lines are read: all of them within that budget; beyond it, a subset in which every file, and so
 * every line, is equally likely.
 */
async function readSamples(
  index: RepoIndex,
  files: readonly string[],
  read: (path: string) => Promise<string | undefined>,
  options: Pick<CalibrationOptions, 'exclude' | 'signal'>,
  maxLinesRead: number,
  parser: SourceParser,
): Promise<{ samples: CalibrationSample[]; linesRead: number }> {
  const next = seededRandom(SEED);
  const texts = new Map<string, string>();
  const lines: QuestionLine[] = [];
  let linesRead = 0;
  for (const path of shuffled([...files], next)) {
    if (options.signal?.aborted || linesRead >= maxLinesRead) break;
    const text = await read(path);
    const language = languageForPath(path);
    if (text === undefined || !language) continue;
    linesRead += text.split('\n').length;
    const tree = await parser.parse(path, language, text);
    const declaredElsewhere = (name: string): boolean => index.declaredElsewhere(name, path);
    const found = questionLines(path, text, tree, language.id, declaredElsewhere, true).cross.filter(
      (line) => !options.exclude?.has(`${path}:${line.row}`),
    );
    parser.forget(path);
    if (found.length === 0) continue;
    texts.set(path, text);
    lines.push(...found);
  }
  const samples = sampleLines(lines, SAMPLES, next).map((line) => sampleOf(line, texts.get(line.file)!));
  return { samples, linesRead };
}

const productFiles = (index: RepoIndex): string[] => [...index.files.keys()].filter(isProductSource).sort();

/** The samples of the whole repository as one project (`readSamples`), read within `maxLinesRead` lines. */
export async function calibrationSamples(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: Pick<CalibrationOptions, 'exclude' | 'signal' | 'maxLinesRead'> = {},
): Promise<CalibrationSample[]> {
  const maxLinesRead = options.maxLinesRead ?? MAX_LINES_READ;
  const parser = new SourceParser();
  try {
    return (await readSamples(index, productFiles(index), read, options, maxLinesRead, parser)).samples;
  } finally {
    parser.dispose();
  }
}

/**
 * The profile to use given how many of `n` samples each covered: the fusion, unless one retriever alone covers
 * MARGIN more of at least MIN_SAMPLES samples.
 */
export function chooseProfile(covered: ReadonlyMap<string, number>, n: number): FusionProfile {
  const hits = (p: FusionProfile): number => covered.get(p.name) ?? 0;
  const best = PROFILES.reduce((a, b) => (hits(b) > hits(a) ? b : a));
  return n >= MIN_SAMPLES && hits(best) - hits(FUSED) >= Math.max(1, MARGIN * n) ? best : FUSED;
}

/**
 * Measures every profile on the samples (the retrievers run once a sample, each profile only fuses and packs
 * differently) and picks the fusion unless one retriever alone covers MARGIN more of them. Yields between
 * samples, so that the index's other requests interleave with it.
 */
async function measure(
  index: RepoIndex,
  samples: readonly CalibrationSample[],
  options: CalibrationOptions,
): Promise<Omit<Calibration, 'ms'>> {
  const covered = new Map(PROFILES.map((p) => [p.name, 0]));
  for (const sample of samples) {
    if (options.signal?.aborted) break;
    await new Promise((resolve) => setImmediate(resolve));
    // The index holds the sample's file with its line; every retriever skips the current file's own code.
    const context = retrievalContext(index, { path: sample.path, text: sample.text, cursor: sample.cursor });
    const results = runRetrievers(context, FUSED.retrievers);
    for (const profile of PROFILES) {
      const mine = results.filter((r) => profile.retrievers.includes(r.name));
      if (coversAll(sample.novel, fuseAndPack(mine, context, options.budget).packed))
        covered.set(profile.name, covered.get(profile.name)! + 1);
    }
  }
  const n = samples.length;
  return {
    profile: options.signal?.aborted ? FUSED : chooseProfile(covered, n),
    samples: n,
    recall: Object.fromEntries([...covered].map(([name, hits]) => [name, n ? hits / n : 0])),
  };
}

/** The repository calibrated as one project, as the benchmark cross-fits it (src/bench/bench.ts). */
export async function calibrate(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: CalibrationOptions,
): Promise<Calibration> {
  const started = performance.now();
  const samples = await calibrationSamples(index, read, options);
  return { ...(await measure(index, samples, options)), ms: performance.now() - started };
}

/**
 * A project's share of the lines still to read: in proportion to its bytes among the projects still to read, so
 * that every project's lines are about equally likely to be read. Projects go smallest first: one read whole
 * leaves what it did not use to the larger ones after it, where the budget runs short. A project may read one file
 * past its share, which the ones after it then lack: the total stays within the workspace's budget but for the one
 * file that crosses it.
 */
export function projectLineBudget(bytes: number, bytesLeft: number, linesLeft: number): number {
  return bytesLeft > 0 ? Math.floor((linesLeft * bytes) / bytesLeft) : linesLeft;
}

/**
 * Calibrates each project of the workspace (projects.ts) on its own lines, within `maxLinesRead` lines in all
 * (`projectLineBudget`). A project of fewer than MIN_SAMPLES samples keeps the fusion. A workspace of one project
 * reads, samples and chooses as `calibrate` does.
 */
export async function calibrateProjects(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: CalibrationOptions,
): Promise<WorkspaceCalibration> {
  const started = performance.now();
  const roots = index.projectRoots;
  const projectOf = projectsOf(roots);
  const byProject = new Map<string, { files: string[]; bytes: number }>();
  for (const file of productFiles(index)) {
    const project = projectOf(file);
    const entry = byProject.get(project) ?? byProject.set(project, { files: [], bytes: 0 }).get(project)!;
    entry.files.push(file);
    entry.bytes += index.files.get(file)!.size;
  }
  const order = [...byProject].sort(([a, x], [b, y]) => x.bytes - y.bytes || comparePaths(a, b));
  let bytesLeft = order.reduce((sum, [, p]) => sum + p.bytes, 0);
  let linesLeft = options.maxLinesRead ?? MAX_LINES_READ;
  const projects: ProjectCalibration[] = [];
  // One parser for every project: a new one would load its grammars again.
  const parser = new SourceParser();
  try {
    for (const [project, { files, bytes }] of order) {
      const budget = projectLineBudget(bytes, bytesLeft, linesLeft);
      const { samples, linesRead } = await readSamples(index, files, read, options, budget, parser);
      bytesLeft -= bytes;
      linesLeft = Math.max(0, linesLeft - linesRead);
      projects.push({ project, ...(await measure(index, samples, options)) });
    }
  } finally {
    parser.dispose();
  }
  return { projects, roots, ms: performance.now() - started };
}

/** Each request's profile: its project's, the fusion for a project with none chosen. */
export function servingProfiles(calibrated: WorkspaceCalibration): (path: string) => FusionProfile {
  const projectOf = projectsOf(calibrated.roots);
  const profiles = new Map(calibrated.projects.map((p) => [p.project, p.profile]));
  return (path) => profiles.get(projectOf(path)) ?? FUSED;
}
