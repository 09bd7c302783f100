/** Benchmark task files (JSON lines, optionally gzipped, as `repogate make-tasks` writes them), read and checked. */
import { promises as fs } from 'fs';
import * as path from 'path';
import { gunzipSync } from 'zlib';
import { CliError, describeFsError } from '../cli/cliError';
import type { Task } from './makeTasks';

const FIX = 'Make a task file with `repogate make-tasks <dir> --out tasks.jsonl`.';

export async function readTasks(file: string): Promise<Task[]> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(file);
  } catch (error) {
    throw new CliError(file, describeFsError(error), FIX);
  }
  let text: string;
  try {
    text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  } catch {
    throw new CliError(
      file,
      'is named .gz but is not gzip-compressed',
      `Compress it with gzip, or drop .gz from its name. ${FIX}`,
    );
  }
  const tasks: Task[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    const problem = taskProblem(line);
    if (problem) throw new CliError(`${file}:${i + 1}`, problem, FIX);
    tasks.push(JSON.parse(line) as Task);
  }
  if (tasks.length === 0) throw new CliError(file, 'holds no tasks', FIX);
  return tasks;
}

/** What keeps one line from being a task, or undefined when it is one. */
function taskProblem(line: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'is not JSON';
  }
  const task = value as Partial<Task> | null;
  const metadata = task?.metadata;
  if (
    typeof task?.prompt !== 'string' ||
    typeof task.right_context !== 'string' ||
    typeof task.groundtruth !== 'string'
  ) {
    return 'is not a task: prompt, right_context and groundtruth must be strings';
  }
  if (typeof metadata?.file !== 'string' || !Array.isArray(metadata.novel_identifiers)) {
    return 'is not a task: metadata.file and metadata.novel_identifiers are missing';
  }
  if (metadata.kind !== 'cross' && metadata.kind !== 'infile')
    return 'is not a task: metadata.kind must be cross or infile';
  return undefined;
}

/** Tasks name files of the repository they were made from; another repository's tasks would score nothing. */
export async function checkTasksFit(repo: string, tasks: readonly Task[], file: string): Promise<void> {
  const files = [...new Set(tasks.map((t) => t.metadata.file))];
  const exists = await Promise.all(
    files.map((f) =>
      fs.access(path.join(repo, f)).then(
        () => true,
        () => false,
      ),
    ),
  );
  const missing = files.filter((_, i) => !exists[i]);
  if (missing.length) {
    throw new CliError(
      file,
      `names ${missing.length} of its ${files.length} files that are not in ${repo} (first: ${missing[0]})`,
      'Pass --repo the repository the tasks were made from, or make tasks for this one with `repogate make-tasks`.',
    );
  }
}
