/**
 * How often a part that died by itself (the engine process, the index worker) is restarted: up to `max` times
 * within `windowMs`. A part that keeps dying (a model that crashes on load, a worker out of memory on every build)
 * is then left stopped with an error instead of being restarted in a loop.
 */
export class RestartBudget {
  private readonly restarts: number[] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether one more restart is allowed now; counts it when it is. */
  take(): boolean {
    const now = this.now();
    while (this.restarts.length && now - this.restarts[0] > this.windowMs) this.restarts.shift();
    if (this.restarts.length >= this.max) return false;
    this.restarts.push(now);
    return true;
  }
}
