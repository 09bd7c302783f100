/**
 * Per-repository calibration of the fusion: lines of the repository's own product code, cut the way benchmark
 * tasks are, show which profile (the fusion, or one retriever alone) packs the identifiers those lines need. The
 * fusion's weights were chosen on a handful of repositories; a user's repository may be one where a single
 * retriever finds more, and this is where that shows (docs/decisions-retrieval.md, R10).
 */
import { languageBuiltins } from '../index/builtins';
import { languageForPath } from '../index/languages';
import { isProductSource } from '../index/productPath';
import type { RepoIndex } from '../index/repoIndex';
import { seededRandom, shuffled } from '../index/seededRandom';
import { wordCounts } from '../index/tokenize';
import { coversAll } from './coverage';
import { FUSED, PROFILES, type FusionProfile } from './profiles';
import { fuseAndPack, retrievalContext, runRetrievers } from './retrieve';
import type { Cursor } from './types';

/** Samples measured: a recall's standard error is at most 5 points, as with the benchmark's 100 tasks. */
const SAMPLES = 100;
/** Spreads the samples over files: one file's repetitive lines cannot decide. */
const MAX_SAMPLES_PER_FILE = 3;
/** Files read at most while looking for sample lines: bounds the work on repositories with few such lines. */
const MAX_FILES_READ = 600;
/** Fewer samples than this decide nothing: the fusion stays. */
const MIN_SAMPLES = 30;
/** Shorter lines (`});`, `break;`) ask nothing of retrieval. */
const MIN_LINE_CHARS = 6;
/**
 * Share of the samples a single retriever must cover beyond the fusion to replace it: the fusion also serves what
 * samples cannot show (recent files, a draft's second query), and a paired difference on 100 samples has a standard
 * error near 4 points. Chosen on the tuning half (of 0, 3, 5 and 8 points, 5 and 8 did best once the definitions
 * resolved Go packages: at 3, fiber's samples chose BM25 alone, 0.47 against the fusion's 0.54; the larger kept).
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
}

/** Comments, imports and package clauses: lines that are not code to complete. */
const NOT_CODE = /^(\/\/|\/\*|\*|#|import\b|from\s+\S+\s+import\b|package\b|export\s+(\*|\{[^}]*\})\s*from\b)/;
const STRING = /(['"`])(?:\\.|(?!\1)[^\\\n])*\1/g;
const DECLARED = /\b(?:const|let|var|function|class|interface|type|enum|def|func)\s+([A-Za-z_$][\w$]*)/g;
/** Keys of object literals and type members, typed parameters and fields (`name: …`, `static name?: …`). */
const KEY =
  /(?:^|[{,(]|\b(?:static|readonly|public|private|protected|declare|override|abstract)\s)\s*([A-Za-z_$][\w$]*)\s*\??:(?!:)/g;
/** A method's own line (`async name<T>(…): R {`): the name is declared, as make-tasks' parse says. */
const METHOD =
  /^(?:(?:static|async|get|set|public|private|protected|readonly|override|abstract)\s+)*\*?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\(.*\{$/;
/** Python and Go bind on their own (`a, b = …`, `x: T = …`, `a := …`, `func (r *T) Name(`). */
const BINDING = /^([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::[^=]*)?:?=(?!=)|\bfunc\s*\([^)]*\)\s*([A-Za-z_]\w*)/;

/** Names a line declares rather than uses, for its language: they need no context. */
function declaredOn(code: string, languageId: string): Set<string> {
  const names = new Set([...code.matchAll(DECLARED)].map((m) => m[1]));
  if (languageId !== 'go') for (const m of code.matchAll(KEY)) names.add(m[1]);
  const method = languageId === 'python' || languageId === 'go' ? undefined : METHOD.exec(code);
  if (method) names.add(method[1]);
  const binding = languageId === 'python' || languageId === 'go' ? BINDING.exec(code) : undefined;
  for (const name of binding?.[1]?.split(',') ?? []) names.add(name.trim());
  if (binding?.[2]) names.add(binding[2]);
  return names;
}

/**
 * The novel identifiers of one line, or undefined when it is not a cross-file question: every name it uses
 * is either mentioned elsewhere in its file, a builtin, or declared in another file — and at least one is the
 * last kind. Textual (strings blanked, what the line declares skipped), a cheaper cousin of make-tasks' parse.
 */
export function novelIdentifiers(
  line: string,
  fileCounts: ReadonlyMap<string, number>,
  builtins: ReadonlySet<string>,
  declaredElsewhere: (name: string) => boolean,
  languageId = 'typescript',
): string[] | undefined {
  const code = line.trim();
  if (code.replace(/\s/g, '').length < MIN_LINE_CHARS || NOT_CODE.test(code)) return undefined;
  const bare = code.replace(STRING, '""');
  const declared = declaredOn(bare, languageId);
  const novel: string[] = [];
  for (const [name, count] of wordCounts(bare)) {
    if (declared.has(name) || (fileCounts.get(name) ?? 0) > count || builtins.has(name)) continue;
    if (!declaredElsewhere(name)) return undefined;
    novel.push(name);
  }
  return novel.length > 0 ? novel : undefined;
}

/** Up to SAMPLES lines of the repository's product files, in a seeded order, each made a sample. */
export async function calibrationSamples(
  index: RepoIndex,
  read: (path: string) => Promise<string | undefined>,
  options: Pick<CalibrationOptions, 'exclude' | 'signal'> = {},
): Promise<CalibrationSample[]> {
  const next = seededRandom(SEED);
  const files = [...index.files.keys()].filter(isProductSource).sort();
  const samples: CalibrationSample[] = [];
  for (const path of shuffled(files, next).slice(0, MAX_FILES_READ)) {
    if (samples.length >= SAMPLES || options.signal?.aborted) break;
    const text = await read(path);
    if (text === undefined) continue;
    const languageId = languageForPath(path)?.id ?? '';
    const builtins = languageBuiltins(languageId);
    const counts = wordCounts(text.replace(STRING, '""'));
    const declaredElsewhere = (name: string): boolean => index.symbols(name).some((ref) => ref.path !== path);
    const lines = text.split('\n');
    const rows: { row: number; novel: string[] }[] = [];
    lines.forEach((line, row) => {
      const novel = novelIdentifiers(line, counts, builtins, declaredElsewhere, languageId);
      if (novel && !options.exclude?.has(`${path}:${row}`)) rows.push({ row, novel });
    });
    for (const { row, novel } of shuffled(rows, next).slice(0, MAX_SAMPLES_PER_FILE)) {
      const column = lines[row].search(/\S/);
      const text = [...lines.slice(0, row), lines[row].slice(0, column), ...lines.slice(row + 1)].join('\n');
      samples.push({ path, text, cursor: { line: row, character: column }, novel });
    }
  }
  return samples.slice(0, SAMPLES);
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
