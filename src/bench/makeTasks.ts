/**
 * Benchmark tasks in the CrossCodeEval format (docs/benchmarks.md, "Task format"), made from one indexed
 * repository: each task cuts a source file at the first non-blank character of a line, and the rest of that
 * line is the ground truth. `cross` tasks need identifiers declared in another file of the repository;
 * `infile` tasks need only what the file itself already says (`src/index/questionLines.ts` says which lines).
 */
import * as path from 'path';
import { languageForPath } from '../index/languages';
import { SourceParser } from '../index/parser';
import { isProductSource } from '../index/productPath';
import { questionLines, sampleLines, type QuestionKind, type QuestionLine } from '../index/questionLines';
import { seededRandom } from '../index/seededRandom';
import type { RepoIndex } from '../index/repoIndex';
import { readSourceFile } from '../index/readSource';

export type TaskKind = QuestionKind;

export interface Task {
  prompt: string;
  right_context: string;
  groundtruth: string;
  metadata: {
    /** `${repository}/${file}:${groundtruth_start_lineno}`. */
    task_id: string;
    repository: string;
    file: string;
    /** Zero-based, as in CrossCodeEval: the number of lines before the ground truth. */
    groundtruth_start_lineno: number;
    kind: TaskKind;
    /** Identifiers the ground truth uses that the file never mentions and another file declares. */
    novel_identifiers: string[];
  };
}

/** 100 tasks of each kind: a recall's standard error is at most 5 points; the seed only has to stay put between runs. */
export const MAKE_TASKS_DEFAULTS = { perKind: 100, seed: 42 };

export interface MakeTasksOptions {
  /** Tasks of each kind (default MAKE_TASKS_DEFAULTS.perKind). */
  perKind?: number;
  /** Seed of the sampling shuffle (default MAKE_TASKS_DEFAULTS.seed). */
  seed?: number;
  /** Most tasks of one kind from one file (default: no cap, lines sampled uniformly). */
  perFile?: number;
  /** A parser to reuse; one is created (and disposed) otherwise. */
  parser?: SourceParser;
}

/**
 * Finds every line of the repository's product files that makes a `cross` or `infile` task, then samples
 * `perKind` of each deterministically, uniformly over the lines. Cross tasks come first, then infile tasks, each in sample order.
 */
export async function makeTasks(index: RepoIndex, root: string, options: MakeTasksOptions = {}): Promise<Task[]> {
  const perKind = options.perKind ?? MAKE_TASKS_DEFAULTS.perKind;
  const parser = options.parser ?? new SourceParser();
  const repository = path.basename(path.resolve(root));
  const texts = new Map<string, string>();
  const found: Record<TaskKind, QuestionLine[]> = { cross: [], infile: [] };

  try {
    for (const file of [...index.files.keys()].filter(isProductSource).sort()) {
      const read = await readSourceFile(root, file);
      if (!('text' in read)) continue;
      const language = languageForPath(file)!;
      const tree = await parser.parse(file, language, read.text);
      const lines = questionLines(file, read.text, tree, language.id, (name) => index.declaredElsewhere(name, file));
      found.cross.push(...lines.cross);
      found.infile.push(...lines.infile);
      // Only files that gave candidates are needed again, to cut the sampled tasks.
      if (lines.cross.length + lines.infile.length > 0) texts.set(file, read.text);
      parser.forget(file);
    }
  } finally {
    if (!options.parser) parser.dispose();
  }

  const next = seededRandom(options.seed ?? MAKE_TASKS_DEFAULTS.seed);
  const tasks: Task[] = [];
  for (const kind of ['cross', 'infile'] as const) {
    for (const c of sampleLines(found[kind], perKind, next, options.perFile))
      tasks.push(toTask(c, kind, texts.get(c.file)!, repository));
  }
  return tasks;
}

/** One question line cut into a task in `text`, the file it was found in. */
export function toTask(c: QuestionLine, kind: TaskKind, text: string, repository: string): Task {
  let lineStart = 0;
  for (let row = 0; row < c.row; row++) lineStart = text.indexOf('\n', lineStart) + 1;
  const newline = text.indexOf('\n', lineStart);
  const lineEnd = newline < 0 ? text.length : newline;
  return {
    prompt: text.slice(0, lineStart + c.column),
    right_context: newline < 0 ? '' : text.slice(newline + 1),
    groundtruth: text.slice(lineStart + c.column, lineEnd).trimEnd(),
    metadata: {
      task_id: `${repository}/${c.file}:${c.row}`,
      repository,
      file: c.file,
      groundtruth_start_lineno: c.row,
      kind,
      novel_identifiers: c.novel,
    },
  };
}
