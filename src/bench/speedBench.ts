/**
 * Speed at real size through RepoGate's own path: the completion service (cursor cache, abort on the next
 * keystroke) over the engine (prompt budgets, layout, gate, retrieval, FIM session, post-processing) with one
 * model. Measures load time and memory, the single-token forward time (the floor), prompt and generation speed,
 * and a typing replay along real lines of a repository: for every keystroke the prompt tokens evaluated and the
 * time from the keystroke to the first token and to what would be shown, without retrieval, with the token gate,
 * with the heuristic gate and with 512 tokens of cross-file context. Lines are written in stretches, one after
 * another as new code is written, so a line start follows a finished line.
 */
import { promises as fs } from 'fs';
import type { PromptLayout } from '../model/promptBudget';
import * as os from 'os';
import * as path from 'path';
import {
  CompletionEngine,
  type CompletionBackend,
  type CompletionRequest,
  type CompletionResult,
} from '../engine/completionEngine';
import { CompletionService } from '../engine/completionService';
import type { GatePolicyName } from '../gate/gate';
import { RepoIndex } from '../index/repoIndex';
import { buildIndex } from '../index/workspace';
import { CodeModel } from '../model/codeModel';
import { readGguf } from '../model/gguf';
import { retrieve } from '../retrieval/retrieve';
import { percentile } from './bench';
import { peakRssMb } from '../cli/workspaceIndex';

export interface KeystrokeScore {
  keystrokes: number;
  evaluated_p50: number;
  first_token_p50_ms: number;
  first_token_p95_ms: number;
  /** Keystroke to the text the editor would show: the first line, or the whole completion when it ends first. */
  first_line_p50_ms: number;
  /** The first keystroke of each line after the first of a stretch (a new line): evaluated tokens and first token. */
  line_start_evaluated_p50: number;
  line_start_first_token_p50_ms: number;
  /** The pause at the end of a line until the engine's background work (the next line's start) was done. */
  line_end_pause_p50_ms: number;
  /** Prompt tokens of cross-file context (0 without retrieval). */
  context_tokens_p50: number;
}

export interface SpeedReport {
  model: string;
  device: string;
  threads: number;
  context: number;
  load_ms: number;
  rss_mb: number;
  kv_mb: number;
  forward_ms: number;
  prompt_tok_s: number;
  gen_tok_s: number;
  /** First token of the first request in a file (empty KV cache), per file. */
  cold_first_token_ms: number[];
  keystroke: KeystrokeScore;
  /** The replays other than `never` are absent when not asked for (SpeedOptions.gates). */
  keystroke_token_gate?: KeystrokeScore;
  /** The heuristic gate (what `token` falls back to for a model without `<cc>`). */
  keystroke_heuristic?: KeystrokeScore;
  keystroke_cc?: KeystrokeScore;
  /** Token gate over plain FIM: p50 first token with the gate / without, minus 1 (absent without the token replay). */
  gate_overhead_ratio?: number;
}

export interface SpeedOptions {
  modelPath: string;
  threads: number;
  repo: string;
  contextSize?: number;
  /** Lines typed along, and characters typed per line. */
  lines: number;
  keystrokes: number;
  /** The replays besides `never` (the baseline, always run): default token, heuristic and always. */
  gates?: readonly GatePolicyName[];
  /** The prompt layout: the engine's own choice from the measured speed ('auto'), or one forced to compare both. */
  layout: PromptLayout | 'auto';
  log(line: string): void;
}

/** Prompt length for the prompt-speed and forward measurements: a full left context of the default budget. */
const PROMPT_TOKENS = 1024;
/** Forward samples before and after the replays: the machine is shared, so the floor is their median. */
const FORWARD_SAMPLES = 6;
const GENERATED_TOKENS = 32;
/** Tokens generated per keystroke request: enough for a short line, few enough that the replay stays short. */
const REPLAY_GENERATION_TOKENS = 16;
/** Characters of packed context asked from retrieval: more than 512 tokens, so the token cap decides. */
const CC_CHARS = 4000;
/** A file must be long enough to fill the left budget, and a line long enough to type along. */
const MIN_FILE_LINES = 200;
const CODE_FILE = /\.(ts|js|py|go|rs|java)$/;

export interface TypedLine {
  path: string;
  text: string;
  line: number;
  /** The cursor's column at the first keystroke (after the indentation and two characters). */
  from: number;
  /** The last line of the stretch: the stretch's lines after this one are not written yet. */
  stretchEnd: number;
}

export async function runSpeedBench(options: SpeedOptions): Promise<SpeedReport> {
  const root = path.resolve(options.repo);
  const model = await CodeModel.load({
    modelPath: options.modelPath,
    threads: options.threads,
    contextSize: options.contextSize,
  });
  const rssAfterLoad = process.memoryUsage().rss / 2 ** 20;
  const index = new RepoIndex(root);
  const cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'repogate-speed-'));
  try {
    await buildIndex(index, { root, cacheDir, fresh: true });
    const lines = await pickLines(root, options.lines, options.keystrokes);
    if (lines.length === 0) throw new Error(`no source file of ${MIN_FILE_LINES}+ lines with lines to type in ${root}`);
    options.log(
      `${path.basename(options.modelPath)}: loaded in ${Math.round(model.info.loadMs)} ms; typing ${lines.length} lines`,
    );
    const floor = await measureFloor(model, lines[0].text);
    options.log(
      `forward ${round(percentile(floor.forwards, 50))} ms, prompt ${floor.prompt_tok_s} tok/s, generation ${floor.gen_tok_s} tok/s`,
    );
    const retrieveFn = async (request: Parameters<typeof retrieve>[1]) => retrieve(index, request);
    const replay = async (gate: GatePolicyName): Promise<{ score: KeystrokeScore; cold: number[] }> => {
      const engine = new CompletionEngine({
        generator: model,
        gate,
        retrieve: retrieveFn,
        budget: { generationTokens: REPLAY_GENERATION_TOKENS },
        contextBudget: CC_CHARS,
        layout: options.layout,
      });
      const result = await typeAlong(model, engine, lines, options.keystrokes);
      options.log(`${gate}: ${JSON.stringify(result.score)}`);
      return result;
    };
    const never = await replay('never');
    const asked = (gate: GatePolicyName): Promise<{ score: KeystrokeScore } | undefined> =>
      options.gates && !options.gates.includes(gate) ? Promise.resolve(undefined) : replay(gate);
    const token = await asked('token');
    const heuristic = await asked('heuristic');
    const cc = await asked('always');
    const after = await measureFloor(model, lines[0].text);
    const forwards = [...floor.forwards, ...after.forwards];
    return {
      model: path.basename(options.modelPath),
      device: model.info.backend,
      threads: model.info.threads,
      context: model.info.contextSize,
      load_ms: Math.round(model.info.loadMs),
      rss_mb: Math.round(Math.max(rssAfterLoad, peakRssMb())),
      kv_mb: await kvMegabytes(options.modelPath, model.info.contextSize),
      forward_ms: round(percentile(forwards, 50)),
      prompt_tok_s: round(Math.max(floor.prompt_tok_s, after.prompt_tok_s)),
      gen_tok_s: round(Math.max(floor.gen_tok_s, after.gen_tok_s)),
      cold_first_token_ms: never.cold,
      keystroke: never.score,
      keystroke_token_gate: token?.score,
      keystroke_heuristic: heuristic?.score,
      keystroke_cc: cc?.score,
      gate_overhead_ratio: token && round(token.score.first_token_p50_ms / never.score.first_token_p50_ms - 1, 3),
    };
  } finally {
    index.dispose();
    await model.dispose();
    await fs.rm(cacheDir, { recursive: true, force: true });
  }
}

const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

/** Forward time of one token after a cached prompt, prompt evaluation speed from empty, greedy generation speed. */
async function measureFloor(
  model: CodeModel,
  text: string,
): Promise<{ forwards: number[]; prompt_tok_s: number; gen_tok_s: number }> {
  const prompt = model
    .tokenize([{ text: text.slice(0, PROMPT_TOKENS * 8) }])
    .slice(0, Math.min(PROMPT_TOKENS, model.session.contextSize / 2));
  await model.session.reset();
  let started = performance.now();
  await model.session.probe(prompt);
  const prompt_tok_s = round(prompt.length / ((performance.now() - started) / 1000));
  const forwards: number[] = [];
  for (let i = 0; i < FORWARD_SAMPLES; i++) {
    started = performance.now();
    const probe = await model.session.probe([...prompt, prompt[i]]);
    if (probe.evaluated !== 1) throw new Error(`the forward measurement evaluated ${probe.evaluated} tokens, not 1`);
    forwards.push(performance.now() - started);
  }
  started = performance.now();
  const generated = await model.session.generate(prompt, { maxTokens: GENERATED_TOKENS, stopIds: [] });
  const end = performance.now();
  const gen_tok_s =
    generated.firstTokenAt && generated.tokens.length > 1
      ? round((generated.tokens.length - 1) / ((end - generated.firstTokenAt) / 1000))
      : 0;
  return { forwards, prompt_tok_s, gen_tok_s };
}

/**
 * Types each line from its first characters on, one character per keystroke, through a completion service as the
 * editor would: the request for a keystroke is cancelled by the next one. Then the line is finished (typed or
 * accepted: the whole line, cursor at its end, one request) and the user pauses until the engine's background
 * work is done. The replay starts from an empty KV cache; the first request in each file is reported apart (cold).
 */
async function typeAlong(
  model: CodeModel,
  engine: CompletionEngine,
  lines: readonly TypedLine[],
  keystrokes: number,
): Promise<{ score: KeystrokeScore; cold: number[] }> {
  // The engine calls of the current keystroke, with when each started (the service may answer from its cache).
  const calls: { at: number; done: Promise<CompletionResult> }[] = [];
  const backend: CompletionBackend = {
    complete: (request, options) => {
      const at = performance.now();
      const done = engine.complete(request, options);
      calls.push({ at, done });
      return done;
    },
    warm: (request) => engine.warm(request),
  };
  const service = new CompletionService(() => backend);
  await model.session.reset();
  const samples: KeystrokeSample[] = [];
  const cold: number[] = [];
  const pauses: number[] = [];
  let lastPath: string | undefined;
  for (const typed of lines) {
    const lineText = typed.text.split('\n')[typed.line];
    for (let k = 0; k <= keystrokes && typed.from + k < lineText.length; k++) {
      const request = requestAt(typed, lineText, typed.from + k);
      const started = performance.now();
      calls.length = 0;
      const served = await service.provide(request);
      const shown = performance.now() - started;
      const call = calls.at(-1);
      // The service answers at the first line; the engine's account of the request comes when it returns.
      const result = await call?.done;
      if (served?.source === 'cache' || !call || !result || result.timings.firstTokenMs === undefined) continue;
      const firstToken = call.at - started + result.timings.firstTokenMs;
      if (typed.path !== lastPath) {
        cold.push(Math.round(firstToken));
        lastPath = typed.path;
        await engine.settled();
        continue;
      }
      samples.push({
        evaluated: result.prompt.evaluated,
        firstToken,
        shown,
        lineStart: k === 0,
        context: result.prompt.contextTokens,
      });
      // The user reads the first suggestion on a line before typing on: the cached prompt grows meanwhile.
      if (k === 0) await engine.settled();
    }
    calls.length = 0;
    await service.provide(requestAt(typed, lineText, lineText.length));
    await calls.at(-1)?.done;
    const paused = performance.now();
    await engine.settled();
    pauses.push(performance.now() - paused);
  }
  engine.stopBackground();
  await engine.settled();
  return { cold, score: keystrokeScore(samples, pauses) };
}

/** One measured keystroke of the replay. */
interface KeystrokeSample {
  evaluated: number;
  firstToken: number;
  shown: number;
  lineStart: boolean;
  context: number;
}

/** The replay's percentiles: every keystroke, line starts apart, and the pauses at line ends. */
function keystrokeScore(samples: readonly KeystrokeSample[], pauses: readonly number[]): KeystrokeScore {
  const starts = samples.filter((s) => s.lineStart);
  const p = (list: readonly KeystrokeSample[], pick: (s: KeystrokeSample) => number, q: number): number =>
    percentile(list.map(pick), q);
  return {
    keystrokes: samples.length,
    evaluated_p50: p(samples, (s) => s.evaluated, 50),
    first_token_p50_ms: round(p(samples, (s) => s.firstToken, 50)),
    first_token_p95_ms: round(p(samples, (s) => s.firstToken, 95)),
    first_line_p50_ms: round(p(samples, (s) => s.shown, 50)),
    line_start_evaluated_p50: p(starts, (s) => s.evaluated, 50),
    line_start_first_token_p50_ms: round(p(starts, (s) => s.firstToken, 50)),
    line_end_pause_p50_ms: round(percentile([...pauses], 50)),
    context_tokens_p50: p(samples, (s) => s.context, 50),
  };
}

/**
 * The document as it is while the line is being typed: the stretch's lines before it are written, the line ends
 * at the cursor, and the stretch's lines after it are not there yet.
 */
export function requestAt(typed: TypedLine, lineText: string, column: number): CompletionRequest {
  const all = typed.text.split('\n');
  const text = [...all.slice(0, typed.line), lineText.slice(0, column), ...all.slice(typed.stretchEnd + 1)].join('\n');
  return { path: typed.path, text, cursor: { line: typed.line, character: column }, mode: 'line' };
}

/**
 * Lines to type along: in the largest source files of the repository (sorted by path, so every run picks the
 * same ones), one stretch of consecutive lines per file, past the left budget's reach, each with enough code to
 * type, from the middle of the file's code lines on.
 */
export async function pickLines(root: string, count: number, keystrokes: number): Promise<TypedLine[]> {
  const files: { path: string; text: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (CODE_FILE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        const text = await fs.readFile(full, 'utf8');
        if (text.split('\n').length >= MIN_FILE_LINES)
          files.push({ path: path.relative(root, full).split(path.sep).join('/'), text });
      }
    }
  };
  await walk(root);
  files.sort((a, b) => b.text.length - a.text.length || a.path.localeCompare(b.path));
  const picked: TypedLine[] = [];
  // Two files, so the replay includes moving to another file; the rest of the lines in order through each file.
  for (const file of files.slice(0, 2)) {
    const all = file.text.split('\n');
    const candidates = all
      .map((text, line) => ({ line, indent: text.length - text.trimStart().length, code: text.trim() }))
      .filter(
        (l) => l.line >= MIN_FILE_LINES / 2 && l.code.length >= keystrokes + 2 && !/^(\/\/|\*|\/\*|#)/.test(l.code),
      );
    const wanted = Math.ceil(count / 2);
    const first = candidates.findIndex(
      (c, i) => i >= candidates.length / 2 && candidates[i + wanted - 1]?.line === c.line + wanted - 1,
    );
    if (first < 0) continue;
    // One end for the whole stretch: the text below it stays put while its lines are written one after another.
    const stretchEnd = candidates[first].line + wanted - 1;
    for (const c of candidates.slice(first, first + wanted))
      picked.push({ path: file.path, text: file.text, line: c.line, from: c.indent + 2, stretchEnd });
  }
  return picked.slice(0, count);
}

/** Megabytes of f16 KV cache for `contextSize` tokens, from the model's dimensions. */
async function kvMegabytes(modelPath: string, contextSize: number): Promise<number> {
  const meta = (await readGguf(modelPath)).metadata;
  const arch = String(meta.get('general.architecture'));
  const num = (key: string): number => Number(meta.get(`${arch}.${key}`) ?? 0);
  const heads = num('attention.head_count');
  const kvHeads = num('attention.head_count_kv') || heads;
  const headDim = num('embedding_length') / Math.max(1, heads);
  return Math.round((num('block_count') * 2 * kvHeads * headDim * contextSize * 2) / 2 ** 20);
}
