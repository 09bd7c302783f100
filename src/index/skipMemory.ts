/**
 * Files a build read and left out for what they hold (binary, minified), each with the size and mtime it had then:
 * a later start skips a file whose stat is still that one without reading it again (decisions-memory.md, M19). At
 * 100k files a warm start read 2,783 minified files again only to skip them.
 */
import type { ScannedFile } from './scan';
import type { SkipReason } from './skipReason';

type Stat = Pick<ScannedFile, 'mtimeMs' | 'size'>;

/** Reasons that last as long as the bytes do; a failed read (unreadable, vanished) is tried again next time. */
const LASTING: ReadonlySet<SkipReason> = new Set(['binary', 'minified']);

/** One remembered file as a cache holds it: path, mtime, size, reason. */
export type PersistedSkip = [string, number, number, SkipReason];

export class SkipMemory {
  private readonly skips = new Map<string, Stat & { reason: SkipReason }>();

  /** Remembers `path` as left out for `reason` at `stat`; true when that is news (the cache is then worth saving). */
  remember(path: string, stat: Stat, reason: SkipReason): boolean {
    if (!LASTING.has(reason)) return false;
    const known = this.skips.get(path);
    if (known?.reason === reason && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return false;
    this.skips.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, reason });
    return true;
  }

  /** Why `path` was left out, while its stat is still the one it had then. */
  reasonFor(path: string, stat: Stat): SkipReason | undefined {
    const known = this.skips.get(path);
    return known && known.mtimeMs === stat.mtimeMs && known.size === stat.size ? known.reason : undefined;
  }

  forget(path: string): void {
    this.skips.delete(path);
  }

  /** Forgets the files no longer in the workspace. */
  keepOnly(present: ReadonlySet<string>): void {
    for (const path of this.skips.keys()) if (!present.has(path)) this.skips.delete(path);
  }

  entries(): PersistedSkip[] {
    return [...this.skips].map(([path, { mtimeMs, size, reason }]) => [path, mtimeMs, size, reason]);
  }

  /** Takes a cache's entries in place of its own; one not of the persisted shape is passed over. */
  restore(entries: unknown): void {
    this.skips.clear();
    if (!Array.isArray(entries)) return;
    for (const entry of entries as unknown[]) {
      if (!Array.isArray(entry) || entry.length !== 4) continue;
      const [path, mtimeMs, size, reason] = entry as unknown[];
      if (typeof path === 'string' && typeof mtimeMs === 'number' && typeof size === 'number')
        this.remember(path, { mtimeMs, size }, reason as SkipReason);
    }
  }
}
