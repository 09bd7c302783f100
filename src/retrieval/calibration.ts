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
 * Up to SAMPLES cross-file question lines of the repository's product files, found and sampled as `make-tasks`
 * finds and samples the benchmark's tasks (src/index/questionLines.ts): the calibration asks the kind of question the
 * benchmark measures, uniformly over the lines where people type. Files are read in a seeded order until
 * `maxLinesRead` lines are read: all of them in a repository within that budget; beyond it, a subset in which every
 * file, and so every line, is equally likely.
 */
export async function calibrationSamples(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: Pick<CalibrationOptions, 'exclude' | 'signal' | 'maxLinesRead'> = {},
): Promise<CalibrationSample[]> {
  const next = seededRandom(SEED);
  const files = [...index.files.keys()].filter(isProductSource).sort();
  const maxLinesRead = options.maxLinesRead ?? MAX_LINES_READ;
  const texts = new Map<string, string>();
  const lines: QuestionLine[] = [];
  const parser = new SourceParser();
  let linesRead = 0;
  try {
    for (const path of shuffled(files, next)) {
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
  } finally {
    parser.dispose();
  }
  return sampleLines(lines, SAMPLES, next).map((line) => sampleOf(line, texts.get(line.file)!));
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
export async function calibrate(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: CalibrationOptions,
): Promise<Calibration> {
  const started = performance.now();
  const samples = await calibrationSamples(index, read, options);
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
  const profile = options.signal?.aborted ? FUSED : chooseProfile(covered, n);
  return {
    profile,
    samples: n,
    recall: Object.fromEntries([...covered].map(([name, hits]) => [name, n ? hits / n : 0])),
    ms: performance.now() - started,
  };
}
