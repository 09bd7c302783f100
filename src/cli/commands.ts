/** The user commands of `repogate`: index, build-cache, retrieve, complete, demo, convert. */
import { promises as fs } from 'fs';
import * as path from 'path';
import { CompletionEngine } from '../engine/completionEngine';
import { explainCompletion } from '../engine/explain';
import { DEFAULTS } from '../defaults';
import { GATE_POLICIES, isGatePolicy } from '../gate/gate';
import { BUNDLED_MODEL_LABEL } from '../model/bundledModel';
import { CodeModel } from '../model/codeModel';
import { convertCheckpoint } from '../convert';
import { saveSharedIndex } from '../index/persist';
import { retrieve } from '../retrieval/retrieve';
import type { Cursor } from '../retrieval/types';
import { renderCommentBlocks } from '../retrieval/verbalize';
import { UsageError } from './cliError';
import { budgetOf, log, modelPath, noMoreThan, threadsOf, type CliFlags, type Command } from './commandLine';
import { runDemo } from './demo';
import { loadGenerator, serverFromFlags } from './generator';
import { cursorFile, repositoryDir } from './inputs';
import { liveHeapMb, openIndex, peakRssMb } from './workspaceIndex';

async function indexCommand(args: string[], flags: CliFlags): Promise<number> {
  noMoreThan('index', args, 1);
  const { index, report } = await openIndex(args[0] ?? '.', {
    cacheBase: flags.cache,
    sharedCache: flags['shared-cache'],
    fresh: flags.fresh,
  });
  const rss = peakRssMb();
  const summary = {
    files: report.files,
    symbols: report.symbols,
    chunks: report.chunks,
    ms: Math.round(report.buildMs),
    parsed: report.parsed,
    verified: report.verified,
    cache: report.cache.ok ? 'loaded' : report.cache.reason,
    ...(report.sharedCache && { shared_cache: report.sharedCache.ok ? 'loaded' : report.sharedCache.reason }),
    skipped: report.skipped.length,
    rss_mb: Math.round(rss),
    heap_mb: Math.round(liveHeapMb(index)),
  };
  process.stdout.write(
    flags.json
      ? `${JSON.stringify(summary)}\n`
      : `${Object.entries(summary)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')}\n`,
  );
  return 0;
}

/** Builds (or brings up to date) the index of a checkout and writes it as a shared cache file (`saveSharedIndex`). */
async function buildCacheCommand(args: string[], flags: CliFlags): Promise<number> {
  if (!args[0] || !flags.out) throw new UsageError('build-cache needs <dir> and --out FILE');
  noMoreThan('build-cache', args, 1);
  const { index, report } = await openIndex(args[0], {
    cacheBase: flags.cache,
    sharedCache: flags['shared-cache'],
    fresh: flags.fresh,
  });
  const out = path.resolve(flags.out);
  await saveSharedIndex(index, out);
  const { size } = await fs.stat(out);
  log(
    `wrote ${out}: ${report.files} files, ${report.symbols} symbols, ${(size / 1e6).toFixed(1)} MB ` +
      `(${report.parsed} parsed, ${Math.round(report.buildMs)} ms)`,
  );
  return 0;
}

async function retrieveCommand(args: string[], flags: CliFlags): Promise<number> {
  const budget = budgetOf(flags);
  if (args.length < 2) throw new UsageError('retrieve needs <dir> and <file>:<line>:<col>');
  noMoreThan('retrieve', args, 2);
  const { relPath, text, cursor } = await cursorFile(await repositoryDir(args[0]), args[1]);
  const { index } = await openIndex(args[0], { cacheBase: flags.cache, quiet: flags.json });
  const result = retrieve(index, { path: relPath, text, cursor, budget });
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  }
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
  return 0;
}

/** The checked inputs of `complete` and `demo`, before any index or model is loaded. */
async function completionInputs(command: string, args: string[], flags: CliFlags) {
  const threads = threadsOf(flags);
  if (args.length < 2) throw new UsageError(`${command} needs <dir> and <file>:<line>:<col>`);
  const gate = flags.gate ?? DEFAULTS.gate;
  if (!isGatePolicy(gate)) throw new UsageError(`--gate ${gate}: not a gate policy (${GATE_POLICIES.join(', ')})`);
  if (flags.mode !== undefined && flags.mode !== 'line' && flags.mode !== 'multiline') {
    throw new UsageError(`--mode ${flags.mode}: the mode is line or multiline`);
  }
  noMoreThan(command, args, 2);
  const { relPath, text, cursor } = await cursorFile(await repositoryDir(args[0]), args[1]);
  // Ollama's model brings its own GGUF; elsewhere no --model means the bundled demo model.
  const generatorPath = flags.engine === 'ollama' && !flags.model ? '' : modelPath(flags.model);
  const mode = flags.mode as 'line' | 'multiline' | undefined;
  return { threads, gate, mode, relPath, saved: text, cursor, generatorPath };
}

/** Runs `use` with the generator (and the policy model, if given) and an engine over the index, then frees them. */
async function withEngine<T>(
  inputs: Awaited<ReturnType<typeof completionInputs>>,
  flags: CliFlags,
  index: Parameters<typeof retrieve>[0],
  use: (
    engine: CompletionEngine,
    generator: Awaited<ReturnType<typeof loadGenerator>>,
    policy?: CodeModel,
  ) => Promise<T>,
): Promise<T> {
  const server = serverFromFlags(flags.engine, flags.server, flags['server-model'], flags['text-prompts']);
  const generator = await loadGenerator(inputs.generatorPath, inputs.threads, server);
  const policyModel = flags['policy-model']
    ? await CodeModel.load({ modelPath: flags['policy-model'], threads: inputs.threads })
    : undefined;
  try {
    const engine = new CompletionEngine({
      generator,
      policyModel,
      gate: inputs.gate,
      retrieve: async (request) => retrieve(index, request),
    });
    return await use(engine, generator, policyModel);
  } finally {
    await policyModel?.dispose();
    await generator.dispose();
  }
}

async function completeCommand(args: string[], flags: CliFlags): Promise<number> {
  const inputs = await completionInputs('complete', args, flags);
  const { index } = await openIndex(args[0], { cacheBase: flags.cache, quiet: flags.json });
  const text = flags['cut-line'] ? cutLineAt(inputs.saved, inputs.cursor) : inputs.saved;
  await withEngine(inputs, flags, index, async (engine, generator, policyModel) => {
    const result = await engine.complete({ path: inputs.relPath, text, cursor: inputs.cursor, mode: inputs.mode });
    if (flags.json) process.stdout.write(`${JSON.stringify({ model: generator.info, ...result })}\n`);
    else
      process.stdout.write(
        `${flags.model ? '' : `(no --model: ${BUNDLED_MODEL_LABEL})\n`}${explainCompletion(generator.info, result, policyModel?.info)}`,
      );
  });
  return 0;
}

async function demoCommand(args: string[], flags: CliFlags): Promise<number> {
  const inputs = await completionInputs('demo', args, flags);
  const { index, report } = await openIndex(args[0], { cacheBase: flags.cache, quiet: flags.json });
  const { saved, cursor, relPath, gate } = inputs;
  const text = cutLineAt(saved, cursor);
  await withEngine(inputs, flags, index, async (engine, generator) => {
    const rest = saved.split('\n')[cursor.line].slice(cursor.character);
    const repo = { label: args[0], files: report.files, symbols: report.symbols };
    const modelNote = flags.model ? undefined : BUNDLED_MODEL_LABEL;
    const demo = { engine, model: generator.info, modelNote, gate, repo, relPath, text, rest };
    process.stdout.write(await runDemo({ ...demo, cursor }));
  });
  return 0;
}

async function convertCommand(args: string[], flags: CliFlags): Promise<number> {
  if (!args[0] || !flags.out) throw new UsageError('convert needs <checkpoint dir> and --out FILE');
  noMoreThan('convert', args, 1);
  if (flags.type !== 'q8_0' && flags.type !== 'f16') throw new UsageError(`--type ${flags.type}: q8_0 or f16`);
  const result = await convertCheckpoint({
    dir: args[0],
    out: flags.out,
    type: flags.type,
    onProgress: ({ tensor, doneBytes, totalBytes }) => log(`${((100 * doneBytes) / totalBytes).toFixed(1)}% ${tensor}`),
  });
  const seconds = (result.ms / 1000).toFixed(1);
  log(
    `wrote ${result.out}: ${result.tensors} tensors, ${(result.bytes / 1e6).toFixed(1)} MB, ` +
      `${result.hasGate ? 'with' : 'without'} the <cc> gate, ${seconds} s, peak RSS ${Math.round(peakRssMb())} MB`,
  );
  return 0;
}

/** The file as it was before the rest of the cursor's line was typed. */
function cutLineAt(text: string, position: Cursor): string {
  const lines = text.split('\n');
  if (position.line < lines.length) lines[position.line] = lines[position.line].slice(0, position.character);
  return lines.join('\n');
}

export const USER_COMMANDS: readonly Command<CliFlags>[] = [
  {
    name: 'index',
    usage: `  index <dir> [--fresh] [--cache DIR] [--shared-cache FILE] [--json]
                                                 build or load the index; print files, symbols, chunks, time, peak
                                                 RSS, live heap; with no cache of its own, warm-start from FILE
`,
    run: indexCommand,
  },
  {
    name: 'build-cache',
    usage: `  build-cache <dir> --out FILE [--fresh] [--shared-cache FILE]
                                                 write the index as one file a checkout in any folder warm-starts
                                                 from (repogate.sharedIndexCache, index --shared-cache): symbols,
                                                 chunks and search data of the indexed code, paths relative to
                                                 <dir>; secret files are never indexed, so never in it
`,
    run: buildCacheCommand,
  },
  {
    name: 'retrieve',
    usage: `  retrieve <dir> <file>:<line>:<col> [--json] [--budget N]
                                                 snippets for a cursor position, with reasons and timings
`,
    run: retrieveCommand,
  },
  {
    name: 'complete',
    usage: `  complete <dir> <file>:<line>:<col> [--model PATH] [--gate POLICY] [--policy-model PATH] [--mode line|multiline]
           [--threads N] [--cut-line] [--json] [--engine E --server URL]
                                                 a completion with its gate decision, snippets and timings;
                                                 --cut-line drops the rest of the line, as if not yet typed
                                                 (default model: the bundled tiny demo model; gates: token,
                                                 heuristic, always, never)
`,
    run: completeCommand,
  },
  {
    name: 'demo',
    usage: `  demo <dir> <file>:<line>:<col> [--model PATH] [--gate POLICY] [--policy-model PATH] [--threads N]
                                                 one completion step by step: the gate's reading, the snippets
                                                 retrieval packs and why (forced once if the gate stays closed),
                                                 the completion with and without them
`,
    run: demoCommand,
  },
  {
    name: 'convert',
    usage: `  convert <checkpoint dir> --out model.gguf [--type q8_0|f16]
                                                 a GPTBigCode checkpoint (Repoformer, StarCoderBase: config.json,
                                                 .bin or .safetensors weights, tokenizer.json) to a starcoder GGUF
`,
    run: convertCommand,
  },
];
