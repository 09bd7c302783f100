/** What the status bar shows: how often the gate fired recently, the last latency, and what served requests. */
import type { GateDecision } from '../gate/gate';

/** The retrieval rate is over this many recent model completions. */
const WINDOW = 100;
/** The first-token median is over this many recent requests, and needs at least FIRST_TOKEN_MIN of them. */
const FIRST_TOKEN_WINDOW = 10;
const FIRST_TOKEN_MIN = 5;

export interface StatsSnapshot {
  /** Share of the recent model completions where the gate fired (undefined before the first). */
  retrievalRate?: number;
  recentCompletions: number;
  recentRetrievals: number;
  lastLatencyMs?: number;
  lastGate?: GateDecision;
  modelCalls: number;
  cacheHits: number;
  cancelled: number;
  /** Median keystroke-to-first-token time of the recent model requests (after a few of them). */
  firstTokenP50Ms?: number;
}

export class CompletionStats {
  private readonly fired: boolean[] = [];
  private lastLatencyMs?: number;
  private lastGate?: GateDecision;
  private modelCalls = 0;
  private cacheHits = 0;
  private cancelled = 0;
  private readonly firstTokens: number[] = [];

  recordModel(gate: GateDecision, latencyMs: number): void {
    this.modelCalls++;
    this.fired.push(gate.fire);
    if (this.fired.length > WINDOW) this.fired.shift();
    this.lastGate = gate;
    this.lastLatencyMs = latencyMs;
  }

  recordCacheHit(latencyMs: number): void {
    this.cacheHits++;
    this.lastLatencyMs = latencyMs;
  }

  recordCancelled(): void {
    this.cancelled++;
  }

  /**
   * Time to the first token of a model request; for a request cancelled before its first token, the time it had
   * waited (a lower bound: on a slow machine most requests end that way).
   */
  recordFirstToken(ms: number): void {
    this.firstTokens.push(ms);
    if (this.firstTokens.length > FIRST_TOKEN_WINDOW) this.firstTokens.shift();
  }

  snapshot(): StatsSnapshot {
    const recentRetrievals = this.fired.filter(Boolean).length;
    return {
      retrievalRate: this.fired.length ? recentRetrievals / this.fired.length : undefined,
      recentCompletions: this.fired.length,
      recentRetrievals,
      lastLatencyMs: this.lastLatencyMs,
      lastGate: this.lastGate,
      modelCalls: this.modelCalls,
      cacheHits: this.cacheHits,
      cancelled: this.cancelled,
      firstTokenP50Ms: this.firstTokens.length >= FIRST_TOKEN_MIN ? median(this.firstTokens) : undefined,
    };
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
