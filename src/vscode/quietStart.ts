/**
 * Waiting for the extension host to settle before the start-up work (the model load, then the index build). Each
 * takes a core for a second or more; started while VS Code is still activating its extensions (git's scans and
 * processes, the language servers), they slowed that work on the host's event loop on a two-core machine.
 */

/** How often the event loop's lateness is sampled. */
const TICK_MS = 100;
/** A tick later than this means the host is still busy. */
const BUSY_LATENESS_MS = 15;
/** This long without a busy tick counts as settled. */
const QUIET_MS = 1_500;
/** The build starts after this long in any case: a host that never settles still gets its index. */
const MAX_WAIT_MS = 10_000;

/** Resolves once the event loop has kept time for `quietMs`, or after `maxWaitMs`; with the ms waited. */
export function whenQuiet({ quietMs = QUIET_MS, maxWaitMs = MAX_WAIT_MS } = {}): Promise<number> {
  const now = (): number => performance.now();
  const started = now();
  return new Promise((done) => {
    let last = started;
    let quietSince = started;
    const tick = (): void => {
      const t = now();
      if (t - last - TICK_MS > BUSY_LATENESS_MS) quietSince = t;
      last = t;
      if (t - quietSince >= quietMs || t - started >= maxWaitMs) done(t - started);
      else setTimeout(tick, TICK_MS);
    };
    setTimeout(tick, TICK_MS);
  });
}
