/**
 * The time left of a build from its progress so far: the mean time per file done, times the files left. A cache
 * that answers most files at once makes the first rate too fast, so no estimate is given until enough files and
 * time have gone by for the rate to mean something.
 */

/** Files done before the rate is trusted: the first ones are mostly the cache's or the walk's. */
const MIN_FILES = 50;
/** Milliseconds before the rate is trusted: shorter builds end before an estimate would help. */
const MIN_ELAPSED_MS = 2000;

/** Milliseconds left, or undefined while too little is known. */
export function timeLeftMs(done: number, total: number, elapsedMs: number): number | undefined {
  if (done < MIN_FILES || elapsedMs < MIN_ELAPSED_MS || total <= done) return total <= done ? 0 : undefined;
  return ((total - done) * elapsedMs) / done;
}

/** "about 40 s left", "about 3 min left", or '' while there is no estimate. */
export function describeTimeLeft(ms: number | undefined): string {
  if (ms === undefined || ms <= 0) return '';
  const seconds = Math.ceil(ms / 1000);
  return seconds < 90 ? `about ${seconds} s left` : `about ${Math.round(seconds / 60)} min left`;
}
