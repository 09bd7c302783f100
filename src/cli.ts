/** The `repogate` command (bundled as dist/cli.js): the user commands and the benchmark commands, one table. */
import { BENCH_COMMANDS, BENCH_OPTIONS } from './bench/commands';
import { runCommandLine } from './cli/commandLine';
import { USER_COMMANDS } from './cli/commands';
import { ENGINE_USAGE } from './cli/generator';

void runCommandLine(process.argv.slice(2), BENCH_OPTIONS, [...USER_COMMANDS, ...BENCH_COMMANDS], ENGINE_USAGE);
