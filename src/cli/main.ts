import { promises as fs } from 'fs';
import * as path from 'path';
import { parseArgs } from 'util';
import { retrieve } from '../retrieval/retrieve';
import { renderCommentBlocks } from '../retrieval/verbalize';
import { CompletionEngine } from '../engine/completionEngine';
import { isGatePolicy, type GatePolicyName } from '../gate/gate';
import { BUNDLED_MODEL_LABEL, bundledModelPath } from '../model/bundledModel';
import { CodeModel } from '../model/codeModel';
import { readTasks, runBench } from './bench';
import { explainCompletion } from '../engine/explain';
import { runGenerationBench } from './generationBench';
import { makeTasks } from './makeTasks';
import { openIndex, parsePosition, peakRssMb } from './workspaceIndex';

const USAGE = `usage: repogate <command> [options]

  index <dir> [--fresh] [--cache DIR]            build or load the index; print files, symbols, chunks, time, peak RSS
  retrieve <dir> <file>:<line>:<col> [--json] [--budget N]
                                                 snippets for a cursor position, with reasons and timings
  complete <dir> <file>:<line>:<col> [--model PATH] [--gate POLICY] [--policy-model PATH] [--mode line|multiline]
           [--threads N] [--cut-line] [--json]
                                                 a completion with its gate decision, snippets and timings;
                                                 --cut-line drops the rest of the line, as if not yet typed
                                                 (default model: the bundled tiny demo model; gates: token,
                                                 heuristic, always, never)
  make-tasks <dir> --out tasks.jsonl [--per-kind N] [--seed N]
                                                 CrossCodeEval-style benchmark tasks from a repository
  bench --repo <dir> --tasks <file.jsonl[.gz]> [--budget N] [--no-baselines] [--json]
                                                 RepoGate's retrieval against RepoCoder's Jaccard and BM25 baselines
  bench --repo <dir> --tasks <file> --model PATH --gate P1,P2,... [--features OUT.jsonl] [--skip-typing] [--json]
                                                 generation mode: gate rates and AUC, exact match, edit similarity
                                                 and latency per policy on the same tasks, and a typing replay
`;

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      fresh: { type: 'boolean', default: false },
      cache: { type: 'string' },
      budget: { type: 'string', default: '2000' },
      out: { type: 'string' },
      'per-kind': { type: 'string', default: '100' },
      seed: { type: 'string', default: '42' },
      repo: { type: 'string' },
      tasks: { type: 'string' },
      model: { type: 'string' },
      'policy-model': { type: 'string' },
      gate: { type: 'string' },
      mode: { type: 'string' },
      threads: { type: 'string' },
      features: { type: 'string' },
      'skip-typing': { type: 'boolean', default: false },
      'cut-line': { type: 'boolean', default: false },
      'no-baselines': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...args] = positionals;
  const budget = Number(values.budget);
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'index': {
      const dir = args[0] ?? '.';
      const { report } = await openIndex(dir, { cacheBase: values.cache, fresh: values.fresh });
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
      process.stdout.write(values.json ? `${JSON.stringify(summary)}\n` : `${Object.entries(summary).map(([k, v]) => `${k}: ${v}`).join('\n')}\n`);
      return 0;
    }
    case 'retrieve': {
      if (args.length < 2) throw new UsageError('retrieve needs <dir> and <file>:<line>:<col>');
      const { index } = await openIndex(args[0], { cacheBase: values.cache, quiet: values.json });
      const position = parsePosition(args[1]);
      const relPath = path.relative(index.root, path.resolve(index.root, position.file)).split(path.sep).join('/');
      const text = await fs.readFile(path.join(index.root, relPath), 'utf8');
      const result = retrieve(index, { path: relPath, text, cursor: position, budget });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else {
        for (const [i, s] of result.snippets.entries()) {
          process.stdout.write(`#${i + 1} ${s.path}:${s.range.start + 1}-${s.range.end} [${s.retriever}] ${s.why} (score ${s.score.toFixed(3)})\n`);
        }
        const t = result.timings;
        const stages = Object.entries(t.stages).map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ');
        process.stdout.write(`timings: total ${t.totalMs.toFixed(1)} ms (${stages})\n`);
        process.stdout.write(`\npacked context (${result.snippets.length} snippets):${renderCommentBlocks(result.snippets, relPath)}`);
      }
      return 0;
    }
    case 'complete': {
      if (args.length < 2) throw new UsageError('complete needs <dir> and <file>:<line>:<col>');
      const gate = values.gate ?? 'token';
      if (!isGatePolicy(gate)) throw new UsageError(`unknown gate policy "${gate}"`);
      if (values.mode !== undefined && values.mode !== 'line' && values.mode !== 'multiline') throw new UsageError('--mode is line or multiline');
      const { index } = await openIndex(args[0], { cacheBase: values.cache, quiet: values.json });
      const position = parsePosition(args[1]);
      const relPath = path.relative(index.root, path.resolve(index.root, position.file)).split(path.sep).join('/');
      const saved = await fs.readFile(path.join(index.root, relPath), 'utf8');
      const text = values['cut-line'] ? cutLineAt(saved, position) : saved;
      const threads = values.threads ? Number(values.threads) : undefined;
      const generator = await CodeModel.load({ modelPath: modelPath(values.model), threads });
      const policyModel = values['policy-model'] ? await CodeModel.load({ modelPath: values['policy-model'], threads }) : undefined;
      try {
        const engine = new CompletionEngine({ generator, policyModel, gate, retrieve: async (request) => retrieve(index, request) });
        const result = await engine.complete({ path: relPath, text, cursor: position, mode: values.mode as 'line' | 'multiline' | undefined });
        if (values.json) process.stdout.write(`${JSON.stringify({ model: generator.info, ...result })}\n`);
        else process.stdout.write(`${values.model ? '' : `(no --model: ${BUNDLED_MODEL_LABEL})\n`}${explainCompletion(generator.info, result, policyModel?.info)}`);
      } finally {
        await policyModel?.dispose();
        await generator.dispose();
      }
      return 0;
    }
    case 'make-tasks': {
      if (!args[0] || !values.out) throw new UsageError('make-tasks needs <dir> and --out FILE');
      const { index } = await openIndex(args[0], { cacheBase: values.cache });
      const tasks = await makeTasks(index, index.root, { perKind: Number(values['per-kind']), seed: Number(values.seed) });
      await fs.writeFile(values.out, tasks.map((t) => JSON.stringify(t)).join('\n') + (tasks.length ? '\n' : ''));
      const cross = tasks.filter((t) => t.metadata.kind === 'cross').length;
      log(`wrote ${tasks.length} tasks (${cross} cross, ${tasks.length - cross} infile) to ${values.out}`);
      return 0;
    }
    case 'bench': {
      if (!values.repo || !values.tasks) throw new UsageError('bench needs --repo DIR and --tasks FILE');
      const tasks = await readTasks(values.tasks);
      if (values.model || values.gate) {
        const gates = (values.gate ?? 'never,always,token,heuristic').split(',');
        const unknown = gates.filter((g) => !isGatePolicy(g));
        if (unknown.length) throw new UsageError(`unknown gate policy "${unknown.join(', ')}"`);
        const report = await runGenerationBench(values.repo, tasks, {
          modelPath: modelPath(values.model),
          policyModelPath: values['policy-model'],
          gates: gates as GatePolicyName[],
          threads: values.threads ? Number(values.threads) : undefined,
          featuresOut: values.features,
          typing: !values['skip-typing'],
          log,
        });
        process.stdout.write(`${JSON.stringify(report, null, values.json ? undefined : 2)}\n`);
        return 0;
      }
      const report = await runBench(values.repo, tasks, budget, log, { baselines: !values['no-baselines'] });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
      } else {
        const r = report.retrieval;
        process.stdout.write(`${report.repo}: ${report.tasks.cross} cross tasks, budget ${budget} chars\n`);
        for (const [name, s] of Object.entries(r)) {
          process.stdout.write(`  ${name.padEnd(9)} recall ${s.recall.toFixed(3)}  p50 ${s.p50_ms} ms  p95 ${s.p95_ms} ms\n`);
        }
        process.stdout.write(`  index: ${JSON.stringify(report.index)}\n`);
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

class UsageError extends Error {}

/** The file as it was before the rest of the cursor's line was typed. */
function cutLineAt(text: string, position: { line: number; character: number }): string {
  const lines = text.split('\n');
  if (position.line < lines.length) lines[position.line] = lines[position.line].slice(0, position.character);
  return lines.join('\n');
}

function modelPath(option: string | undefined): string {
  const found = option ?? bundledModelPath();
  if (!found) throw new Error('no model given and the bundled tiny model is missing: pass --model PATH to a FIM GGUF');
  return found;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`repogate: ${(error as Error).message}\n`);
    if (error instanceof UsageError) process.stderr.write(USAGE);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
