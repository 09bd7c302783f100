/**
 * The command line's inputs, checked before any work starts: each failure is a CliError that names the input,
 * says what is wrong and what to do.
 */
import { promises as fs, type Stats } from 'fs';
import * as path from 'path';
import { relativeTo } from '../index/relPath';
import { isSecretPath } from '../index/secrets';
import { CliError, describeFsError, UsageError } from './cliError';

/** The repository folder, resolved; it must exist and be a folder. */
export async function repositoryDir(dir: string): Promise<string> {
  const fix = 'Pass the folder of a repository, e.g. `repogate index .`.';
  let stat: Stats;
  try {
    stat = await fs.stat(dir);
  } catch (error) {
    throw new CliError(dir, describeFsError(error), fix);
  }
  if (!stat.isDirectory()) throw new CliError(dir, 'is a file, not a folder', fix);
  return path.resolve(dir);
}

/** `--name value` as a whole number of at least `min`; undefined when the option was not given. */
export function wholeNumber(name: string, value: string | undefined, min: number, example: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new UsageError(
      `--${name} ${value}: not a whole number of at least ${min}`,
      `Pass e.g. --${name} ${example}.`,
    );
  }
  return n;
}

export interface CursorFile {
  /** Workspace-relative, forward slashes. */
  relPath: string;
  text: string;
  /** Zero-based. */
  cursor: { line: number; character: number };
}

const POSITION_FIX =
  'Give the position as <file>:<line>:<column>, counted from 1 as editors show them, e.g. src/app.ts:12:5.';

/** `file:line:col` (one-based, as editors print them) inside `root`, read and checked against the file's text. */
export async function cursorFile(root: string, spec: string): Promise<CursorFile> {
  const match = /^(.+):(\d+):(\d+)$/.exec(spec);
  if (!match) throw new UsageError(`${spec}: not a position`, POSITION_FIX);
  const [, file, lineText, columnText] = match;
  const line = Number(lineText);
  const column = Number(columnText);
  if (line < 1 || column < 1) throw new UsageError(`${spec}: lines and columns count from 1`, POSITION_FIX);
  const relPath = relativeTo(root, path.resolve(root, file));
  if (relPath === '' || relPath === '..' || relPath.startsWith('../') || path.isAbsolute(relPath)) {
    throw new CliError(
      file,
      `is not a file inside the repository ${root}`,
      'Give the path of a file in the repository, relative to its folder.',
    );
  }
  if (isSecretPath(relPath)) {
    throw new CliError(
      relPath,
      'is a secret file: RepoGate never reads it into a prompt',
      'Give the path of a source file.',
    );
  }
  let text: string;
  try {
    text = await fs.readFile(path.join(root, relPath), 'utf8');
  } catch (error) {
    throw new CliError(
      relPath,
      describeFsError(error),
      `Give the path of a file in the repository, relative to ${root}.`,
    );
  }
  const lines = text.split('\n');
  if (line > lines.length) {
    throw new CliError(
      spec,
      `line ${line} is past the end of the file (${lines.length} lines)`,
      `Pass a line from 1 to ${lines.length}.`,
    );
  }
  const width = lines[line - 1].replace(/\r$/, '').length;
  if (column > width + 1) {
    throw new CliError(
      spec,
      `column ${column} is past the end of line ${line} (${width} characters)`,
      `Pass a column from 1 to ${width + 1}.`,
    );
  }
  return { relPath, text, cursor: { line: line - 1, character: column - 1 } };
}

/** Makes sure `file` can be written before a long run produces what goes into it. */
export async function writableFile(option: string, file: string): Promise<void> {
  try {
    await fs.access(path.dirname(path.resolve(file)), fs.constants.W_OK);
  } catch (error) {
    throw new CliError(
      `${option} ${file}`,
      `its folder ${describeFsError(error)}`,
      `Pass ${option} a path in an existing folder you can write to.`,
    );
  }
}
