/**
 * What commit replay reads from a repository's git directory (bare or not): its non-merge commits, each commit's
 * changed paths and added lines, and file contents. Read-only: nothing here writes to the git directory.
 */
import { execFileSync } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';

/** Whole trees of large repositories pass through one `cat-file --batch` call. */
const MAX_GIT_OUTPUT = 1 << 30;

function git(gitDir: string, args: string[], input?: string): Buffer {
  // safe.directory: a mirror owned by another user is still read; quotePath: paths come back as they are.
  return execFileSync('git', ['-c', 'safe.directory=*', '-c', 'core.quotePath=false', `--git-dir=${gitDir}`, ...args], {
    input,
    maxBuffer: MAX_GIT_OUTPUT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/**
 * The `count` newest non-merge commits reachable from `end`, oldest first in topological order (a pull request's
 * commits in a row, each after its parents), and the commit the replay starts from: the oldest one's first parent.
 * A repository that merges its pull requests has merge commits only on its first-parent line; their pull requests'
 * own commits are what was written.
 */
export function replayCommits(gitDir: string, end: string, count: number): { base: string; commits: string[] } {
  const commits = git(gitDir, ['rev-list', '--no-merges', '--topo-order', `--max-count=${count}`, end])
    .toString()
    .trim()
    .split('\n')
    .filter(Boolean)
    .reverse();
  const base = commits.length ? parentsOf(gitDir, commits[0])[0] : undefined;
  if (commits.length < count || !base) throw new Error(`${end} has only ${commits.length} non-merge commits before it`);
  return { base, commits };
}

export function parentsOf(gitDir: string, commit: string): string[] {
  return git(gitDir, ['rev-list', '--parents', '--max-count=1', commit]).toString().trim().split(' ').slice(1);
}

export interface ChangedPath {
  /** A added, M modified (or its type changed), D deleted. */
  status: 'A' | 'M' | 'D';
  path: string;
}

/** The paths that differ between two commits, renames as a deletion and an addition, in git's path order. */
export function changedPaths(gitDir: string, from: string, to: string): ChangedPath[] {
  const fields = git(gitDir, ['diff-tree', '-r', '--no-renames', '--name-status', '-z', from, to])
    .toString()
    .split('\0');
  const changed: ChangedPath[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i][0] === 'D' ? 'D' : fields[i][0] === 'A' ? 'A' : 'M';
    changed.push({ status, path: fields[i + 1] });
  }
  return changed;
}

/**
 * Per path, the zero-based rows of the new file that `to` added or changed beyond whitespace; `formatting` when the
 * two commits differ in whitespace only (a reformat, nothing written).
 */
export function addedRows(
  gitDir: string,
  from: string,
  to: string,
): { rows: Map<string, Set<number>>; formatting: boolean } {
  const diff = git(gitDir, [
    'diff',
    '-U0',
    '-w',
    '--ignore-blank-lines',
    '--no-color',
    '--no-renames',
    '--no-ext-diff',
    from,
    to,
  ]).toString();
  const rows = new Map<string, Set<number>>();
  let current: Set<number> | undefined;
  let anyChange = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) {
      const target = line.slice(4);
      current = undefined;
      if (target.startsWith('b/')) rows.set(target.slice(2), (current = new Set()));
    } else if (line.startsWith('@@ ')) {
      anyChange = true;
      const match = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!match || !current) continue;
      const start = Number(match[1]) - 1;
      const count = match[2] === undefined ? 1 : Number(match[2]);
      for (let row = start; row < start + count; row++) current.add(row);
    } else if (line.startsWith('Binary files ')) {
      anyChange = true;
    }
  }
  return { rows, formatting: !anyChange };
}

/** The contents of `spec`s (`commit:path` or object ids); undefined where the object is absent (a partial mirror). */
export function readObjects(gitDir: string, specs: readonly string[]): (Buffer | undefined)[] {
  if (specs.length === 0) return [];
  const out = git(gitDir, ['cat-file', '--batch'], specs.map((s) => `${s}\n`).join(''));
  const contents: (Buffer | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < specs.length; i++) {
    const headerEnd = out.indexOf(10, at);
    const header = out.subarray(at, headerEnd).toString();
    at = headerEnd + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      contents.push(undefined);
      continue;
    }
    const size = Number(header.split(' ')[2]);
    contents.push(out.subarray(at, at + size));
    at += size + 1;
  }
  return contents;
}

/** Writes the regular files of `commit`'s tree under `dir` (symbolic links and submodules left out, as absent blobs). */
export async function extractTree(gitDir: string, commit: string, dir: string): Promise<number> {
  const entries = git(gitDir, ['ls-tree', '-r', '-z', '--full-tree', commit])
    .toString()
    .split('\0')
    .filter(Boolean)
    .map((entry) => {
      const tab = entry.indexOf('\t');
      const [mode, type, oid] = entry.slice(0, tab).split(' ');
      return { mode, type, oid, path: entry.slice(tab + 1) };
    })
    .filter((e) => e.type === 'blob' && (e.mode === '100644' || e.mode === '100755'));
  const contents = readObjects(
    gitDir,
    entries.map((e) => e.oid),
  );
  let written = 0;
  for (const [i, entry] of entries.entries()) {
    const content = contents[i];
    if (!content) continue;
    await writeFileIn(dir, entry.path, content);
    written++;
  }
  return written;
}

export async function writeFileIn(dir: string, relPath: string, content: Buffer): Promise<void> {
  const file = path.join(dir, relPath);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
}
