/**
 * What the command line prints when it cannot do what was asked: the input at fault, what is wrong with it and
 * what to do, never a stack trace or an internal message.
 */
import { CheckpointError } from '../convert';
import { ModelFileError } from '../model/modelFile';
import { ServerError } from '../model/remote/http';

/** A problem with something the user gave: a path, a position, a file's contents. Exit status 1. */
export class CliError extends Error {
  readonly exitCode: number = 1;

  constructor(
    readonly input: string,
    problem: string,
    readonly fix: string,
  ) {
    super(`${input}: ${problem}`);
  }
}

/** An error no check foresaw is RepoGate's fault, not the user's. */
const BUG = 'This is a bug in RepoGate: please report it with the command you ran.';
const HELP = 'Run `repogate --help` for the commands and their options.';

/** A malformed command line: an unknown command or option, a missing or extra argument, a bad value. Exit 2. */
export class UsageError extends Error {
  readonly exitCode: number = 2;

  constructor(
    message: string,
    readonly fix = HELP,
  ) {
    super(message);
  }
}

/** A failed file system call, in words (the error's code is kept for what the words do not cover). */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be accessed (permission denied)';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'ENOTDIR':
      return 'is not a folder (a part of the path is a file)';
    case 'ENOSPC':
      return 'cannot be written: the disk is full';
    default:
      return `cannot be read or written (${code ?? (error as Error)?.message ?? 'unknown error'})`;
  }
}

/** The text to print on stderr, and the exit status. */
export function renderError(error: unknown): { text: string; exitCode: number } {
  if (error instanceof CliError || error instanceof UsageError) {
    return { text: `repogate: ${error.message}\n  ${error.fix}\n`, exitCode: error.exitCode };
  }
  // Model file problems already name the file, the problem and the fix (the editor shows the same words).
  if (error instanceof ModelFileError) return { text: `repogate: ${error.message}\n`, exitCode: 1 };
  // So do the converter's: what is wrong with the checkpoint and what to do.
  if (error instanceof CheckpointError) return { text: `repogate: ${error.message}\n`, exitCode: 1 };
  // So do an inference server's failures (--engine): what went wrong there and what to do.
  if (error instanceof ServerError) {
    return { text: `repogate: ${error.message}\n${error.hint ? `  ${error.hint}\n` : ''}`, exitCode: 1 };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    text: `repogate: unexpected error: ${message}\n  ${BUG}\n`,
    exitCode: 1,
  };
}
