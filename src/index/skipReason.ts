/** Why a file is not indexed; the indexer counts and explains what it left out by these. */
export type SkipReason =
  | 'secret'
  | 'excluded'
  | 'gitignored'
  | 'too-large'
  | 'binary'
  | 'minified'
  | 'unreadable'
  | 'vanished'
  | 'symlink-loop';

/** A failed file system call on one file or directory, as the reason it is left out. */
export function errorReason(e: unknown): SkipReason {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'vanished';
  if (code === 'ELOOP') return 'symlink-loop';
  return 'unreadable';
}
