/**
 * The `repogate` command line: its options, one table of commands (each a small function with its usage lines)
 * and the loop that parses, dispatches and prints errors. The user commands are in `commands.ts`, the benchmark
 * commands in `src/bench/commands.ts`; `src/cli.ts` joins the two tables.
 */
import { parseArgs } from 'util';
import { DEFAULTS } from '../defaults';
import { bundledModelPath } from '../model/bundledModel';
import { renderError, UsageError } from './cliError';
import { wholeNumber } from './inputs';

/** The options every command may be given; a command table adds its own. */
export const CLI_OPTIONS = {
  json: { type: 'boolean', default: false },
  fresh: { type: 'boolean', default: false },
  cache: { type: 'string' },
  'shared-cache': { type: 'string' },
  budget: { type: 'string', default: String(DEFAULTS.contextBudget) },
  out: { type: 'string' },
  repo: { type: 'string' },
  model: { type: 'string' },
  'policy-model': { type: 'string' },
  gate: { type: 'string' },
  mode: { type: 'string' },
  threads: { type: 'string' },
  engine: { type: 'string' },
  server: { type: 'string' },
  'server-model': { type: 'string' },
  'text-prompts': { type: 'boolean', default: false },
  'cut-line': { type: 'boolean', default: false },
  type: { type: 'string', default: 'q8_0' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type OptionsConfig = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** The parsed values of a set of options. */
export type FlagsOf<O extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true }>
>['values'];

export type CliFlags = FlagsOf<typeof CLI_OPTIONS>;

export interface Command<F> {
  name: string;
  /** Its lines in `repogate --help`. */
  usage: string;
  /** The arguments after the command's name; returns the exit status. */
  run(args: string[], flags: F): Promise<number>;
}

export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** Node's own parse errors (unknown option, missing value) in the command line's words. */
function parseCommandLine<O extends OptionsConfig>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1] ?? argv.join(' ');
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`${option}: not an option of repogate`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`${option}: needs a value`);
    throw error;
  }
}

/** Arguments past the last one a command takes. */
export function noMoreThan(command: string, args: string[], count: number): void {
  if (args.length > count) throw new UsageError(`${args[count]}: one argument too many for ${command}`);
}

/** `--budget`: characters of packed context. */
export function budgetOf(flags: CliFlags): number {
  return wholeNumber('budget', flags.budget, 1, DEFAULTS.contextBudget)!;
}

/** `--threads`: undefined leaves the choice to the model loader. */
export function threadsOf(flags: CliFlags): number | undefined {
  return wholeNumber('threads', flags.threads, 1, 2);
}

/** `--model`, else the bundled demo model. */
export function modelPath(option: string | undefined): string {
  const found = option ?? bundledModelPath();
  if (!found) {
    const fix = 'Pass --model PATH to a fill-in-the-middle GGUF file.';
    throw new UsageError('no --model given, and the bundled demo model is missing', fix);
  }
  return found;
}

function usageOf(commands: readonly Command<never>[], tail: string): string {
  return `usage: repogate <command> [options]\n\n${commands.map((c) => c.usage).join('')}  ${tail}\n`;
}

/** Parses `argv`, runs the command it names and sets the exit status; errors are printed in the user's words. */
export async function runCommandLine<O extends typeof CLI_OPTIONS>(
  argv: string[],
  options: O,
  commands: readonly Command<FlagsOf<O>>[],
  usageTail: string,
): Promise<void> {
  try {
    const { values, positionals } = parseCommandLine(argv, options);
    const [name, ...args] = positionals;
    // Every command line's options include CLI_OPTIONS, `help` among them.
    const { help } = values as CliFlags;
    if (help || !name) {
      process.stdout.write(usageOf(commands, usageTail));
      process.exitCode = name || help ? 0 : 2;
      return;
    }
    const command = commands.find((c) => c.name === name);
    if (!command) throw new UsageError(`${name}: not a command of repogate`);
    process.exitCode = await command.run(args, values);
  } catch (error) {
    const { text, exitCode } = renderError(error);
    process.stderr.write(text);
    process.exitCode = exitCode;
  }
}
