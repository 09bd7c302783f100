// What the benchmark scripts share: the repository root, the built CLI, and `--name value` options.
import { dirname, join } from 'path';
import { fileURLToPath } from 'url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cli = join(root, 'dist', 'cli.js');
const args = process.argv.slice(2);

/** The value after `name` on the command line, or `fallback`. */
export function option(name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
}

/** Whether the flag `name` is on the command line. */
export function flag(name) {
  return args.includes(name);
}
