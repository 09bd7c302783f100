/** What the status bar shows: how often the gate fired recently, the last latency, and what served requests. */
import type { GateDecision } from '../gate/gate';

/** The retrieval rate is over this many recent model completions. */
const WINDOW = 100;

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
}

export class CompletionStats {
  private readonly fired: boolean[] = [];
  private lastLatencyMs?: number;
  private lastGate?: GateDecision;
  private modelCalls = 0;
  private cacheHits = 0;
  private cancelled = 0;

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
    };
  }
}
