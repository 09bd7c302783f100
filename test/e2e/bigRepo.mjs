// A large real-code workspace for the event-loop measurement, built offline from what `npm ci` installed: the
// JavaScript and TypeScript sources of the packages in node_modules, copied (sorted, so every run with the same
// lock file gets the same files) into a folder whose path has no node_modules, dist, build… segment — the
// index's default excludes would otherwise skip them. Type declarations, minified bundles and files over
// 256 KB are left out: they are not the code a person edits.
import { copyFileSync, mkdirSync, readdirSync, statSync } from 'fs';
import { dirname, join, relative } from 'path';

const CODE = /\.(?:[cm]?js|tsx?)$/;
const NOT_CODE = /\.d\.[cm]?ts$|\.min\.js$/;
/** Path segments the index excludes by default (src/index/scan.ts, DEFAULT_EXCLUDE_GLOBS) or that hold no source. */
const SKIP_DIRS = new Set([
  '.git',
  'dist',
  'out',
  'build',
  'coverage',
  'vendor',
  'target',
  'bower_components',
  'jspm_packages',
  '.cache',
  '.bin',
  'bins',
  'llama',
]);
const MAX_BYTES = 256 * 1024;

/** Copies up to `maxFiles` source files of `nodeModules` into `dest` (node_modules segments renamed packages/). Returns the count. */
export function buildBigRepo(nodeModules, dest, { maxFiles = 3_000 } = {}) {
  let copied = 0;
  const walk = (dir) => {
    if (copied >= maxFiles) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
    } catch {
      return;
    }
    for (const entry of entries) {
      if (copied >= maxFiles) return;
      const from = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(from);
      } else if (
        entry.isFile() &&
        CODE.test(entry.name) &&
        !NOT_CODE.test(entry.name) &&
        statSync(from).size <= MAX_BYTES
      ) {
        const to = join(
          dest,
          'packages',
          relative(nodeModules, from)
            .split('/')
            .map((s) => (s === 'node_modules' ? 'packages' : s))
            .join('/'),
        );
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(from, to);
        copied++;
      }
    }
  };
  walk(nodeModules);
  return copied;
}
