import { promises as fs } from 'fs';
import * as path from 'path';
import { parseArgs } from 'util';
import { retrieve } from '../retrieval/retrieve';
import { renderCommentBlocks } from '../retrieval/verbalize';
import { readTasks, runBench } from './bench';
import { makeTasks } from './makeTasks';
import { openIndex, parsePosition, peakRssMb } from './workspaceIndex';

const USAGE = `usage: repogate <command> [options]

  index <dir> [--fresh] [--cache DIR]            build or load the index; print files, symbols, chunks, time, peak RSS
  retrieve <dir> <file>:<line>:<col> [--json] [--budget N]
                                                 snippets for a cursor position, with reasons and timings
  make-tasks <dir> --out tasks.jsonl [--per-kind N] [--seed N]
                                                 CrossCodeEval-style benchmark tasks from a repository
  bench --repo <dir> --tasks <file.jsonl[.gz]> [--budget N] [--json]
                                                 RepoGate's retrieval against RepoCoder's Jaccard and BM25 baselines
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
        process.stdout.write(`timings: total ${t.totalMs.toFixed(1)} ms (definitions ${t.definitionMs.toFixed(1)}, lexical ${t.lexicalMs.toFixed(1)}, rerank+pack ${t.rerankMs.toFixed(1)})\n`);
        process.stdout.write(`\npacked context (${result.snippets.length} snippets):${renderCommentBlocks(result.snippets, relPath)}`);
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
      const report = await runBench(values.repo, tasks, budget, log);
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
