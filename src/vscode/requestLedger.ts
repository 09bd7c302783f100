/**
 * How the provider's calls ended, for long sessions (the soak, test/soak): answered with text, answered empty,
 * cancelled (the user typed on, or VS Code withdrew the request), failed; and how long the slowest took. A call
 * that never ends shows up as `open` after its siblings have finished.
 */
export type RequestOutcome = 'answered' | 'empty' | 'cancelled' | 'failed';

export interface RequestLedgerSnapshot extends Record<RequestOutcome, number> {
  /** Calls begun and not ended yet, with the age of the oldest in ms. */
  open: number;
  oldestOpenMs: number;
  /** The longest a call took from the provider's entry to its answer, in ms. */
  slowestMs: number;
  /** Calls that took longer than `slowMs`, answered or not. */
  overSlow: number;
}

export class RequestLedger {
  private readonly counts: Record<RequestOutcome, number> = { answered: 0, empty: 0, cancelled: 0, failed: 0 };
  private readonly started = new Map<number, number>();
  private next = 0;
  private slowestMs = 0;
  private overSlow = 0;

  constructor(
    private readonly slowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  begin(): number {
    const id = this.next++;
    this.started.set(id, this.now());
    return id;
  }

  end(id: number, outcome: RequestOutcome): void {
    const began = this.started.get(id);
    if (began === undefined) return;
    this.started.delete(id);
    const ms = this.now() - began;
    this.counts[outcome]++;
    this.slowestMs = Math.max(this.slowestMs, ms);
    if (ms > this.slowMs) this.overSlow++;
  }

  snapshot(): RequestLedgerSnapshot {
    const now = this.now();
    const oldest = Math.min(now, ...this.started.values());
    return {
      ...this.counts,
      open: this.started.size,
      oldestOpenMs: Math.round(now - oldest),
      slowestMs: Math.round(this.slowestMs),
      overSlow: this.overSlow,
    };
  }
}
