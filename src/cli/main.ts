import { promises as fs } from 'fs';
import { parseArgs } from 'util';
import { DEFAULTS } from '../defaults';
import { retrieve } from '../retrieval/retrieve';
import { renderCommentBlocks } from '../retrieval/verbalize';
import { CompletionEngine } from '../engine/completionEngine';
import { GATE_POLICIES, isGatePolicy, type GatePolicyName } from '../gate/gate';
import { BUNDLED_MODEL_LABEL, bundledModelPath } from '../model/bundledModel';
import { CodeModel, defaultThreads } from '../model/codeModel';
import { convertCheckpoint } from '../model/convert';
import { runBench } from './bench';
import { replayCommand } from '../bench/replay';
import { runDemo } from './demo';
import { renderError, UsageError } from './cliError';
import { explainCompletion } from '../engine/explain';
import { runGenerationBench } from './generationBench';
import { ENGINE_USAGE, loadGenerator, serverFromFlags } from './generator';
import { MAKE_TASKS_DEFAULTS, makeTasks } from './makeTasks';
import { cursorFile, repositoryDir, wholeNumber, writableFile } from './inputs';
import { checkTasksFit, readTasks } from './taskFile';
import { ensureShapeModel, shapeBytes, SHAPES } from './shapeModel';
import { runSpeedBench } from './speedBench';
import { openIndex, peakRssMb } from './workspaceIndex';

const USAGE = `usage: repogate <command> [options]

  index <dir> [--fresh] [--cache DIR]            build or load the index; print files, symbols, chunks, time, peak RSS
  retrieve <dir> <file>:<line>:<col> [--json] [--budget N]
                                                 snippets for a cursor position, with reasons and timings
  complete <dir> <file>:<line>:<col> [--model PATH] [--gate POLICY] [--policy-model PATH] [--mode line|multiline]
           [--threads N] [--cut-line] [--json] [--engine E --server URL]
                                                 a completion with its gate decision, snippets and timings;
                                                 --cut-line drops the rest of the line, as if not yet typed
                                                 (default model: the bundled tiny demo model; gates: token,
                                                 heuristic, always, never)
  demo <dir> <file>:<line>:<col> [--model PATH] [--gate POLICY] [--policy-model PATH] [--threads N]
                                                 one completion step by step: the gate's reading, the snippets
                                                 retrieval packs and why (forced once if the gate stays closed),
                                                 the completion with and without them
  make-tasks <dir> --out tasks.jsonl [--per-kind N] [--seed N] [--per-file N]
                                                 CrossCodeEval-style benchmark tasks from a repository,
                                                 sampled uniformly over its lines (--per-file: at most N
                                                 of one kind from one file)
  bench --repo <dir> --tasks <file.jsonl[.gz]> [--budget N] [--no-baselines] [--json]
                                                 RepoGate's retrieval against RepoCoder's Jaccard and BM25 baselines
  bench --repo <dir> --tasks <file> --model PATH --gate P1,P2,... [--features OUT.jsonl] [--skip-typing] [--json]
                                                 generation mode: gate rates and AUC, exact match, edit similarity
                                                 and latency per policy on the same tasks, and a typing replay
  replay <git dir> <commit> <N> [--out DIR] [--json]  retrieval replayed over the N commits up to <commit>
  convert <checkpoint dir> --out model.gguf [--type q8_0|f16]
                                                 a GPTBigCode checkpoint (Repoformer, StarCoderBase: config.json,
                                                 .bin or .safetensors weights, tokenizer.json) to a starcoder GGUF
  speed [--model PATH] [--repo DIR] [--threads N] [--context N] [--lines N] [--keystrokes N] [--json]
                                                 the engine's speed with one model: load, forward floor, typing
                                                 replay with and without cross-file context, gate cost
  make-shape <name> [--out FILE] | make-shape --list
                                                 a timing-only random-weight GGUF of a real model's exact shape
  ${ENGINE_USAGE}
`;

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

const OPTIONS = {
  json: { type: 'boolean', default: false },
  fresh: { type: 'boolean', default: false },
  cache: { type: 'string' },
  budget: { type: 'string', default: String(DEFAULTS.contextBudget) },
  out: { type: 'string' },
  'per-kind': { type: 'string' },
  'per-file': { type: 'string' },
  seed: { type: 'string' },
  repo: { type: 'string' },
  tasks: { type: 'string' },
  model: { type: 'string' },
  'policy-model': { type: 'string' },
  gate: { type: 'string' },
  mode: { type: 'string' },
  threads: { type: 'string' },
  engine: { type: 'string' },
  server: { type: 'string' },
  'server-model': { type: 'string' },
  features: { type: 'string' },
  'skip-typing': { type: 'boolean', default: false },
  'cut-line': { type: 'boolean', default: false },
  'no-baselines': { type: 'boolean', default: false },
  list: { type: 'boolean', default: false },
  lines: { type: 'string', default: '6' },
  keystrokes: { type: 'string', default: '12' },
  context: { type: 'string' },
  type: { type: 'string', default: 'q8_0' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Node's own parse errors (unknown option, missing value) in the command line's words. */
function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1] ?? argv.join(' ');
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`${option}: not an option of repogate`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`${option}: needs a value`);
    throw error;
  }
}

/** Arguments past the last one a command takes. */
function noMoreThan(command: string, args: string[], count: number): void {
  if (args.length > count) throw new UsageError(`${args[count]}: one argument too many for ${command}`);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  const [command, ...args] = positionals;
  const budget = wholeNumber('budget', values.budget, 1, DEFAULTS.contextBudget)!;
  const threads = wholeNumber('threads', values.threads, 1, 2);
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'index': {
      noMoreThan(command, args, 1);
      const { report } = await openIndex(args[0] ?? '.', { cacheBase: values.cache, fresh: values.fresh });
      const summary = {
        files: report.files,
        symbols: report.symbols,
        chunks: report.chunks,
        ms: Math.round(report.buildMs),
        parsed: report.parsed,
        cache: report.cache.ok ? 'loaded' : report.cache.reason,
        skipped: report.skipped.length,
        rss_mb: Math.round(peakRssMb()),
      };
      process.stdout.write(
        values.json
          ? `${JSON.stringify(summary)}\n`
          : `${Object.entries(summary)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n')}\n`,
      );
      return 0;
    }
    case 'retrieve': {
      if (args.length < 2) throw new UsageError('retrieve needs <dir> and <file>:<line>:<col>');
      noMoreThan(command, args, 2);
      const { relPath, text, cursor } = await cursorFile(await repositoryDir(args[0]), args[1]);
      const { index } = await openIndex(args[0], { cacheBase: values.cache, quiet: values.json });
      const result = retrieve(index, { path: relPath, text, cursor, budget });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else {
        for (const [i, s] of result.snippets.entries()) {
          process.stdout.write(
            `#${i + 1} ${s.path}:${s.range.start + 1}-${s.range.end} [${s.retriever}] ${s.why} (score ${s.score.toFixed(3)})\n`,
          );
        }
        const t = result.timings;
        const stages = Object.entries(t.stages)
          .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
          .join(', ');
        process.stdout.write(`timings: total ${t.totalMs.toFixed(1)} ms (${stages})\n`);
        process.stdout.write(
          `\npacked context (${result.snippets.length} snippets):${renderCommentBlocks(result.snippets, relPath)}`,
        );
      }
      return 0;
    }
    case 'complete':
    case 'demo': {
      if (args.length < 2) throw new UsageError(`${command} needs <dir> and <file>:<line>:<col>`);
      const gate = values.gate ?? DEFAULTS.gate;
      if (!isGatePolicy(gate)) throw new UsageError(`--gate ${gate}: not a gate policy (${GATE_POLICIES.join(', ')})`);
      if (values.mode !== undefined && values.mode !== 'line' && values.mode !== 'multiline') {
        throw new UsageError(`--mode ${values.mode}: the mode is line or multiline`);
      }
      noMoreThan(command, args, 2);
      const { relPath, text: saved, cursor: position } = await cursorFile(await repositoryDir(args[0]), args[1]);
      const generatorPath = modelPath(values.model);
      const { index, report } = await openIndex(args[0], { cacheBase: values.cache, quiet: values.json });
      const text = values['cut-line'] || command === 'demo' ? cutLineAt(saved, position) : saved;
      const server = serverFromFlags(values.engine, values.server, values['server-model']);
      const generator = await loadGenerator(generatorPath, threads, server);
      const policyModel = values['policy-model']
        ? await CodeModel.load({ modelPath: values['policy-model'], threads })
        : undefined;
      try {
        const engine = new CompletionEngine({
          generator,
          policyModel,
          gate,
          retrieve: async (request) => retrieve(index, request),
        });
        if (command === 'demo') {
          const rest = saved.split('\n')[position.line].slice(position.character);
          const repo = { label: args[0], files: report.files, symbols: report.symbols };
          const modelNote = values.model ? undefined : BUNDLED_MODEL_LABEL;
          const demo = { engine, model: generator.info, modelNote, gate, repo, relPath, text, rest };
          process.stdout.write(await runDemo({ ...demo, cursor: position }));
          return 0;
        }
        const result = await engine.complete({
          path: relPath,
          text,
          cursor: position,
          mode: values.mode as 'line' | 'multiline' | undefined,
        });
        if (values.json) process.stdout.write(`${JSON.stringify({ model: generator.info, ...result })}\n`);
        else
          process.stdout.write(
            `${values.model ? '' : `(no --model: ${BUNDLED_MODEL_LABEL})\n`}${explainCompletion(generator.info, result, policyModel?.info)}`,
          );
      } finally {
        await policyModel?.dispose();
        await generator.dispose();
      }
      return 0;
    }
    case 'make-tasks': {
      if (!args[0] || !values.out) throw new UsageError('make-tasks needs <dir> and --out FILE');
      noMoreThan(command, args, 1);
      const perKind = wholeNumber('per-kind', values['per-kind'], 1, MAKE_TASKS_DEFAULTS.perKind);
      const seed = wholeNumber('seed', values.seed, 0, MAKE_TASKS_DEFAULTS.seed);
      const perFile = wholeNumber('per-file', values['per-file'], 1, 3);
      await writableFile('--out', values.out);
      const { index } = await openIndex(args[0], { cacheBase: values.cache });
      const tasks = await makeTasks(index, index.root, { perKind, seed, perFile });
      await fs.writeFile(values.out, tasks.map((t) => JSON.stringify(t)).join('\n') + (tasks.length ? '\n' : ''));
      const cross = tasks.filter((t) => t.metadata.kind === 'cross').length;
      log(`wrote ${tasks.length} tasks (${cross} cross, ${tasks.length - cross} infile) to ${values.out}`);
      return 0;
    }
    case 'bench': {
      if (!values.repo || !values.tasks) throw new UsageError('bench needs --repo DIR and --tasks FILE');
      noMoreThan(command, args, 0);
      const repo = await repositoryDir(values.repo);
      const tasks = await readTasks(values.tasks);
      await checkTasksFit(repo, tasks, values.tasks);
      if (values.model || values.gate) {
        const gates = (values.gate ?? 'never,always,token,heuristic').split(',');
        const unknown = gates.filter((g) => !isGatePolicy(g));
        if (unknown.length) {
          throw new UsageError(`--gate ${unknown.join(',')}: not a gate policy (${GATE_POLICIES.join(', ')})`);
        }
        if (values.features) await writableFile('--features', values.features);
        const report = await runGenerationBench(repo, tasks, {
          modelPath: modelPath(values.model),
          policyModelPath: values['policy-model'],
          gates: gates as GatePolicyName[],
          threads,
          server: serverFromFlags(values.engine, values.server, values['server-model']),
          featuresOut: values.features,
          typing: !values['skip-typing'],
          log,
        });
        process.stdout.write(`${JSON.stringify(report, null, values.json ? undefined : 2)}\n`);
        return 0;
      }
      const report = await runBench(repo, tasks, budget, log, { baselines: !values['no-baselines'] });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
      } else {
        const r = report.retrieval;
        process.stdout.write(`${report.repo}: ${report.tasks.cross} cross tasks, budget ${budget} chars\n`);
        for (const [name, s] of Object.entries(r)) {
          process.stdout.write(
            `  ${name.padEnd(9)} recall ${s.recall.toFixed(3)}  p50 ${s.p50_ms} ms  p95 ${s.p95_ms} ms\n`,
          );
        }
        process.stdout.write(`  index: ${JSON.stringify(report.index)}\n`);
      }
      return 0;
    }
    case 'replay':
      return replayCommand(args, { budget, json: values.json, out: values.out }, log);
    case 'convert': {
      if (!args[0] || !values.out) throw new UsageError('convert needs <checkpoint dir> and --out FILE');
      noMoreThan(command, args, 1);
      if (values.type !== 'q8_0' && values.type !== 'f16') throw new UsageError(`--type ${values.type}: q8_0 or f16`);
      const result = await convertCheckpoint({
        dir: args[0],
        out: values.out,
        type: values.type,
        onProgress: ({ tensor, doneBytes, totalBytes }) =>
          log(`${((100 * doneBytes) / totalBytes).toFixed(1)}% ${tensor}`),
      });
      const seconds = (result.ms / 1000).toFixed(1);
      log(
        `wrote ${result.out}: ${result.tensors} tensors, ${(result.bytes / 1e6).toFixed(1)} MB, ` +
          `${result.hasGate ? 'with' : 'without'} the <cc> gate, ${seconds} s, peak RSS ${Math.round(peakRssMb())} MB`,
      );
      return 0;
    }
    case 'speed': {
      noMoreThan(command, args, 0);
      const report = await runSpeedBench({
        modelPath: modelPath(values.model),
        repo: values.repo ?? 'src',
        threads: threads ?? defaultThreads(),
        contextSize: wholeNumber('context', values.context, 1, 4096),
        lines: wholeNumber('lines', values.lines, 1, 6)!,
        keystrokes: wholeNumber('keystrokes', values.keystrokes, 1, 12)!,
        log,
      });
      process.stdout.write(`${JSON.stringify(report, null, values.json ? undefined : 2)}\n`);
      return 0;
    }
    case 'make-shape': {
      if (values.list) {
        for (const s of SHAPES) {
          process.stdout.write(`${s.name.padEnd(22)} ${(shapeBytes(s) / 2 ** 30).toFixed(2)} GiB  ${s.of}\n`);
        }
        return 0;
      }
      if (!args[0]) throw new UsageError('make-shape needs a shape name', 'make-shape --list shows them.');
      noMoreThan(command, args, 1);
      const shape = SHAPES.find((known) => known.name === args[0]);
      if (!shape)
        throw new UsageError(`${args[0]}: not a known shape`, `Known: ${SHAPES.map((k) => k.name).join(', ')}.`);
      const started = performance.now();
      const file = await ensureShapeModel(shape, modelPath(undefined), values.out);
      log(`${shape.name}: ${file} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      process.stdout.write(`${file}\n`);
      return 0;
    }
    default:
      throw new UsageError(`${command}: not a command of repogate`);
  }
}

/** The file as it was before the rest of the cursor's line was typed. */
function cutLineAt(text: string, position: { line: number; character: number }): string {
  const lines = text.split('\n');
  if (position.line < lines.length) lines[position.line] = lines[position.line].slice(0, position.character);
  return lines.join('\n');
}

function modelPath(option: string | undefined): string {
  const found = option ?? bundledModelPath();
  if (!found) {
    const fix = 'Pass --model PATH to a fill-in-the-middle GGUF file.';
    throw new UsageError('no --model given, and the bundled demo model is missing', fix);
  }
  return found;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const { text, exitCode } = renderError(error);
    process.stderr.write(text);
    process.exitCode = exitCode;
  },
);
