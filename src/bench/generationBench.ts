/**
 * The benchmark's generation mode: every gate policy on the same tasks in one run, with one model. Each request
 * starts from an empty KV cache so that the policies pay for their prompts alike; the typing measurement then
 * replays keystrokes to show what the cache saves.
 */
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CompletionEngine, type CompletionResult } from '../engine/completionEngine';
import type { GatePolicyName } from '../gate/gate';
import type { HeuristicFeatures } from '../gate/heuristic';
import { RepoIndex } from '../index/repoIndex';
import { readSourceFile } from '../index/readSource';
import { buildIndex } from '../index/workspace';
import { CodeModel } from '../model/codeModel';
import type { ServerOptions } from '../model/remote/remoteModel';
import type { TokenModel } from '../model/tokenModel';
import { loadGenerator } from '../cli/generator';
import { retrieve } from '../retrieval/retrieve';
import { percentile, taskDocument } from './bench';
import type { Task } from './makeTasks';
import { editSimilarity, exactMatch, rocAuc } from './metrics';

export interface GateScore {
  rate_cross: number;
  rate_infile: number;
  auc: number;
}

export interface GenerationScore {
  em: number;
  es: number;
  p50_ms: number;
  p95_ms: number;
  first_token_p50_ms: number;
}

export interface TypingScore {
  prompt_tokens: number;
  keystrokes: number;
  /** Median share of the prompt evaluated per keystroke (the rest came from the KV cache). */
  evaluated_share_p50: number;
  evaluated_tokens_p50: number;
  first_token_p50_ms: number;
  /** The same prompts with an empty cache, for comparison. */
  cold_first_token_p50_ms: number;
}

export interface GenerationReport {
  model: { path: string; family: string; backend: string; threads: number; context: number };
  tasks: { cross: number; infile: number };
  gate: Record<string, GateScore>;
  generation: Record<string, GenerationScore>;
  /** Median over tasks where `token` did not fire of its latency over `never`'s on the same task. */
  token_closed_latency_ratio?: number;
  typing?: TypingScore;
  /** Every request's total latency per policy, so that several runs can be pooled into one percentile. */
  latency_ms: Record<string, number[]>;
  /** Every request's gate score per policy, with whether its task is `cross`, so that runs pool into one ROC. */
  gate_scores: Record<string, { score: number; positive: boolean }[]>;
}

export interface GenerationBenchOptions {
  modelPath: string;
  policyModelPath?: string;
  gates: GatePolicyName[];
  threads?: number;
  /** The generator runs on this server (the policy model stays local). */
  server?: ServerOptions;
  log(line: string): void;
  /** Writes one JSON line per task with the heuristic gate's features and the task's kind (for fitting). */
  featuresOut?: string;
  /** Replays typing to measure KV-cache reuse and first-token latency (default true). */
  typing?: boolean;
}

const round = (x: number, digits = 3): number => Number(x.toFixed(digits));
/** Tasks between two progress lines. */
const PROGRESS_EVERY = 25;

export async function runGenerationBench(
  repoDir: string,
  tasks: Task[],
  options: GenerationBenchOptions,
): Promise<GenerationReport> {
  const root = path.resolve(repoDir);
  const cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'repogate-gen-'));
  const generator = await loadGenerator(options.modelPath, options.threads ?? 1, options.server);
  const policyModel = options.policyModelPath
    ? await CodeModel.load({ modelPath: options.policyModelPath, threads: options.threads ?? 1 })
    : undefined;
  const index = new RepoIndex(root);
  try {
    await buildIndex(index, { root, cacheDir, fresh: true });
    // Every task starts from an empty cache, unlike typing: the time budget for cold prompts stays off here.
    const engine = new CompletionEngine({
      generator,
      policyModel,
      gate: 'never',
      retrieve: async (request) => retrieve(index, request),
      firstPromptMs: 0,
    });
    const results = new Map<GatePolicyName, { task: Task; result: CompletionResult }[]>(
      options.gates.map((g) => [g, []]),
    );
    const features: { kind: string; features: HeuristicFeatures }[] = [];
    for (const [i, task] of tasks.entries()) {
      const file = task.metadata.file;
      const doc = taskDocument(task);
      const original = await readSourceFile(root, file);
      await index.update(file, doc.text);
      for (const gate of options.gates) {
        await generator.session.reset();
        await policyModel?.session.reset();
        const result = await engine.complete({ path: file, text: doc.text, cursor: doc, mode: 'line', gate });
        results.get(gate)!.push({ task, result });
        if (result.gate.features) features.push({ kind: task.metadata.kind, features: result.gate.features });
      }
      if ('text' in original) await index.update(file, original.text);
      if ((i + 1) % PROGRESS_EVERY === 0) options.log(`${i + 1}/${tasks.length} tasks`);
    }
    if (options.featuresOut)
      await fs.writeFile(options.featuresOut, features.map((f) => JSON.stringify(f)).join('\n') + '\n');

    const report: GenerationReport = {
      model: {
        path: options.modelPath,
        family: generator.info.family.family.id,
        backend: generator.info.backend,
        threads: generator.info.threads,
        context: generator.info.contextSize,
      },
      tasks: {
        cross: tasks.filter((t) => t.metadata.kind === 'cross').length,
        infile: tasks.filter((t) => t.metadata.kind === 'infile').length,
      },
      gate: {},
      generation: {},
      latency_ms: {},
      gate_scores: {},
    };
    for (const [gate, runs] of results) {
      const scored = scorePolicy(runs);
      report.gate_scores[gate] = scored.gateScores;
      report.gate[gate] = scored.gate;
      report.latency_ms[gate] = scored.latency;
      report.generation[gate] = scored.generation;
    }
    if (options.typing !== false) report.typing = await measureTyping(generator, tasks);
    const token = results.get('token');
    const never = results.get('never');
    if (token && never) {
      const ratios = token.flatMap((r, i) =>
        r.result.gate.fire ? [] : [r.result.timings.totalMs / never[i].result.timings.totalMs],
      );
      if (ratios.length) report.token_closed_latency_ratio = round(percentile(ratios, 50));
    }
    return report;
  } finally {
    index.dispose();
    await policyModel?.dispose();
    await generator.dispose();
    await fs.rm(cacheDir, { recursive: true, force: true });
  }
}

/** One policy's gate rates and AUC, exact match, edit similarity and latency over its runs. */
function scorePolicy(runs: readonly { task: Task; result: CompletionResult }[]) {
  const rate = (kind: string): number => {
    const ofKind = runs.filter((r) => r.task.metadata.kind === kind);
    return ofKind.length ? round(ofKind.filter((r) => r.result.gate.fire).length / ofKind.length) : 0;
  };
  const gateScores = runs.map((r) => ({ score: r.result.gate.score, positive: r.task.metadata.kind === 'cross' }));
  const gate: GateScore = { rate_cross: rate('cross'), rate_infile: rate('infile'), auc: round(rocAuc(gateScores)) };
  const totals = runs.map((r) => r.result.timings.totalMs);
  const firsts = runs.map((r) => r.result.timings.firstTokenMs).filter((x): x is number => x !== undefined);
  const generation: GenerationScore = {
    em: round(runs.filter((r) => exactMatch(r.result.text, r.task.groundtruth)).length / Math.max(1, runs.length)),
    es: round(
      runs.reduce((s, r) => s + editSimilarity(r.result.text, r.task.groundtruth), 0) / Math.max(1, runs.length),
    ),
    p50_ms: round(percentile(totals, 50), 1),
    p95_ms: round(percentile(totals, 95), 1),
    first_token_p50_ms: round(percentile(firsts, 50), 1),
  };
  return { gateScores, gate, latency: totals.map((ms) => round(ms, 1)), generation };
}

/** Keystrokes replayed per typing measurement, and the prompt size the issue states the target for. */
const TYPED_CHARACTERS = 24;
const TYPING_PROMPT_TOKENS = 1000;

/**
 * Types the ground truth of the task with the longest left context one character at a time, asking for a plain
 * FIM completion (no retrieval) of about 1,000 prompt tokens after each; then the same prompts from an empty cache.
 */
async function measureTyping(generator: TokenModel, tasks: Task[]): Promise<TypingScore | undefined> {
  const task = [...tasks].sort((a, b) => b.prompt.length - a.prompt.length)[0];
  if (!task) return undefined;
  const engine = new CompletionEngine({
    generator,
    gate: 'never',
    budget: { leftTokens: TYPING_PROMPT_TOKENS, contextTokens: 0, generationTokens: 16 },
    firstPromptMs: 0,
  });
  const doc = taskDocument(task);
  const typed = task.groundtruth.slice(0, TYPED_CHARACTERS);
  const requests = [...typed].map((_, k) => {
    const prompt = task.prompt + typed.slice(0, k + 1);
    return {
      path: task.metadata.file,
      text: `${prompt}\n${task.right_context}`,
      cursor: { line: doc.line, character: doc.character + k + 1 },
    };
  });
  const warm: CompletionResult[] = [];
  await generator.session.reset();
  await engine.complete({ ...requests[0], text: `${task.prompt}\n${task.right_context}`, cursor: doc, mode: 'line' });
  for (const request of requests) warm.push(await engine.complete({ ...request, mode: 'line' }));
  const cold: number[] = [];
  for (const request of requests) {
    await generator.session.reset();
    cold.push((await engine.complete({ ...request, mode: 'line' })).timings.firstTokenMs ?? 0);
  }
  return {
    prompt_tokens: Math.round(
      percentile(
        warm.map((r) => r.prompt.tokens),
        50,
      ),
    ),
    keystrokes: warm.length,
    evaluated_share_p50: round(
      percentile(
        warm.map((r) => r.prompt.evaluated / r.prompt.tokens),
        50,
      ),
    ),
    evaluated_tokens_p50: percentile(
      warm.map((r) => r.prompt.evaluated),
      50,
    ),
    first_token_p50_ms: round(
      percentile(
        warm.map((r) => r.timings.firstTokenMs ?? 0),
        50,
      ),
      1,
    ),
    cold_first_token_p50_ms: round(percentile(cold, 50), 1),
  };
}
