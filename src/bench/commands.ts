/** The benchmark commands of `repogate`: make-tasks, bench (retrieval and generation), replay, speed, make-shape. */
import { promises as fs } from 'fs';
import type { PromptLayout } from '../model/promptBudget';
import { GATE_POLICIES, isGatePolicy, type GatePolicyName } from '../gate/gate';
import { defaultThreads } from '../model/codeModel';
import { UsageError } from '../cli/cliError';
import {
  budgetOf,
  CLI_OPTIONS,
  log,
  modelPath,
  noMoreThan,
  threadsOf,
  type Command,
  type FlagsOf,
} from '../cli/commandLine';
import { serverFromFlags } from '../cli/generator';
import { repositoryDir, wholeNumber, writableFile } from '../cli/inputs';
import { openIndex } from '../cli/workspaceIndex';
import { runBench } from './bench';
import { runGenerationBench } from './generationBench';
import { replayCommand } from './replay';
import { MAKE_TASKS_DEFAULTS, makeTasks } from './makeTasks';
import { ensureShapeModel, shapeBytes, SHAPES } from './shapeModel';
import { runSpeedBench } from './speedBench';
import { checkTasksFit, readTasks } from './taskFile';

/** The benchmark commands' own options, beside CLI_OPTIONS. */
export const BENCH_OPTIONS = {
  ...CLI_OPTIONS,
  'per-kind': { type: 'string' },
  'per-file': { type: 'string' },
  seed: { type: 'string' },
  tasks: { type: 'string' },
  features: { type: 'string' },
  'skip-typing': { type: 'boolean', default: false },
  'no-baselines': { type: 'boolean', default: false },
  list: { type: 'boolean', default: false },
  lines: { type: 'string', default: '6' },
  keystrokes: { type: 'string', default: '12' },
  context: { type: 'string' },
  layout: { type: 'string' },
} as const;

type BenchFlags = FlagsOf<typeof BENCH_OPTIONS>;

async function makeTasksCommand(args: string[], flags: BenchFlags): Promise<number> {
  if (!args[0] || !flags.out) throw new UsageError('make-tasks needs <dir> and --out FILE');
  noMoreThan('make-tasks', args, 1);
  const perKind = wholeNumber('per-kind', flags['per-kind'], 1, MAKE_TASKS_DEFAULTS.perKind);
  const seed = wholeNumber('seed', flags.seed, 0, MAKE_TASKS_DEFAULTS.seed);
  const perFile = wholeNumber('per-file', flags['per-file'], 1, 3);
  await writableFile('--out', flags.out);
  const { index } = await openIndex(args[0], { cacheBase: flags.cache });
  const tasks = await makeTasks(index, index.roots.folders[0].path, { perKind, seed, perFile });
  await fs.writeFile(flags.out, tasks.map((t) => JSON.stringify(t)).join('\n') + (tasks.length ? '\n' : ''));
  const cross = tasks.filter((t) => t.metadata.kind === 'cross').length;
  log(`wrote ${tasks.length} tasks (${cross} cross, ${tasks.length - cross} infile) to ${flags.out}`);
  return 0;
}

async function benchCommand(args: string[], flags: BenchFlags): Promise<number> {
  const budget = budgetOf(flags);
  const threads = threadsOf(flags);
  if (!flags.repo || !flags.tasks) throw new UsageError('bench needs --repo DIR and --tasks FILE');
  noMoreThan('bench', args, 0);
  const repo = await repositoryDir(flags.repo);
  const tasks = await readTasks(flags.tasks);
  await checkTasksFit(repo, tasks, flags.tasks);
  if (flags.model || flags.gate) {
    const gates = gatePolicies(flags.gate ?? 'never,always,token,heuristic');
    if (flags.features) await writableFile('--features', flags.features);
    const report = await runGenerationBench(repo, tasks, {
      modelPath: modelPath(flags.model),
      policyModelPath: flags['policy-model'],
      gates,
      threads,
      server: serverFromFlags(flags.engine, flags.server, flags['server-model'], flags['text-prompts']),
      featuresOut: flags.features,
      typing: !flags['skip-typing'],
      log,
    });
    process.stdout.write(`${JSON.stringify(report, null, flags.json ? undefined : 2)}\n`);
    return 0;
  }
  const report = await runBench(repo, tasks, budget, log, { baselines: !flags['no-baselines'] });
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return 0;
  }
  process.stdout.write(`${report.repo}: ${report.tasks.cross} cross tasks, budget ${budget} chars\n`);
  for (const [name, s] of Object.entries(report.retrieval)) {
    process.stdout.write(`  ${name.padEnd(9)} recall ${s.recall.toFixed(3)}  p50 ${s.p50_ms} ms  p95 ${s.p95_ms} ms\n`);
  }
  process.stdout.write(`  index: ${JSON.stringify(report.index)}\n`);
  return 0;
}

/** The policies of a comma-separated --gate list. */
function gatePolicies(list: string): GatePolicyName[] {
  const gates = list.split(',');
  const unknown = gates.filter((g) => !isGatePolicy(g));
  if (unknown.length)
    throw new UsageError(`--gate ${unknown.join(',')}: not a gate policy (${GATE_POLICIES.join(', ')})`);
  return gates as GatePolicyName[];
}

/** --layout: the engine's choice from the measured speed (auto, the default), or one layout forced. */
function layoutOf(value: string | undefined): PromptLayout | 'auto' {
  if (value === undefined || value === 'auto' || value === 'line' || value === 'cursor') return value ?? 'auto';
  throw new UsageError(`--layout ${value}: not a layout (auto, line, cursor)`);
}

async function speedCommand(args: string[], flags: BenchFlags): Promise<number> {
  const threads = threadsOf(flags);
  noMoreThan('speed', args, 0);
  const report = await runSpeedBench({
    modelPath: modelPath(flags.model),
    repo: flags.repo ?? 'src',
    threads: threads ?? defaultThreads(),
    contextSize: wholeNumber('context', flags.context, 1, 4096),
    lines: wholeNumber('lines', flags.lines, 1, 6)!,
    keystrokes: wholeNumber('keystrokes', flags.keystrokes, 1, 12)!,
    gates: flags.gate ? gatePolicies(flags.gate) : undefined,
    layout: layoutOf(flags.layout),
    log,
  });
  process.stdout.write(`${JSON.stringify(report, null, flags.json ? undefined : 2)}\n`);
  return 0;
}

async function makeShapeCommand(args: string[], flags: BenchFlags): Promise<number> {
  if (flags.list) {
    for (const s of SHAPES) {
      process.stdout.write(`${s.name.padEnd(22)} ${(shapeBytes(s) / 2 ** 30).toFixed(2)} GiB  ${s.of}\n`);
    }
    return 0;
  }
  if (!args[0]) throw new UsageError('make-shape needs a shape name', 'make-shape --list shows them.');
  noMoreThan('make-shape', args, 1);
  const shape = SHAPES.find((known) => known.name === args[0]);
  if (!shape) throw new UsageError(`${args[0]}: not a known shape`, `Known: ${SHAPES.map((k) => k.name).join(', ')}.`);
  const started = performance.now();
  const file = await ensureShapeModel(shape, modelPath(undefined), flags.out);
  log(`${shape.name}: ${file} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  process.stdout.write(`${file}\n`);
  return 0;
}

export const BENCH_COMMANDS: readonly Command<BenchFlags>[] = [
  {
    name: 'make-tasks',
    usage: `  make-tasks <dir> --out tasks.jsonl [--per-kind N] [--seed N] [--per-file N]
                                                 CrossCodeEval-style benchmark tasks from a repository,
                                                 sampled uniformly over its lines (--per-file: at most N
                                                 of one kind from one file)
`,
    run: makeTasksCommand,
  },
  {
    name: 'bench',
    usage: `  bench --repo <dir> --tasks <file.jsonl[.gz]> [--budget N] [--no-baselines] [--json]
                                                 RepoGate's retrieval against RepoCoder's Jaccard and BM25 baselines
  bench --repo <dir> --tasks <file> --model PATH --gate P1,P2,... [--features OUT.jsonl] [--skip-typing] [--json]
                                                 generation mode: gate rates and AUC, exact match, edit similarity
                                                 and latency per policy on the same tasks, and a typing replay
`,
    run: benchCommand,
  },
  {
    name: 'replay',
    usage: `  replay <git dir> <commit> <N> [--out DIR] [--budget N] [--json]
                                                 retrieval replayed over the N commits up to <commit>
`,
    run: (args, flags) => replayCommand(args, { budget: budgetOf(flags), json: flags.json, out: flags.out }, log),
  },
  {
    name: 'speed',
    usage: `  speed [--model PATH] [--repo DIR] [--threads N] [--context N] [--lines N] [--keystrokes N] [--gate never,...]
        [--layout auto|line|cursor] [--json]
                                                 the engine's speed with one model: load, forward floor, typing
                                                 replay with and without cross-file context, gate cost
`,
    run: speedCommand,
  },
  {
    name: 'make-shape',
    usage: `  make-shape <name> [--out FILE] | make-shape --list
                                                 a timing-only random-weight GGUF of a real model's exact shape
`,
    run: makeShapeCommand,
  },
];
