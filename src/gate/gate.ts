/**
 * The retrieval gate: decides per request whether cross-file context is worth retrieving. One interface, four
 * policies. The engine supplies the signals lazily, so a policy pays only for what it reads: `token` reads
 * P(<cc>) after `<fim_prefix>L<fim_suffix>R<eof>` (from the generator or from a small policy model),
 * `heuristic` reads cheap cursor signals, a trial retrieval and a short draft; `always` and `never` read nothing.
 */
import { heuristicProbability, type HeuristicFeatures, type HeuristicModel } from './heuristic';

export type GatePolicyName = 'token' | 'heuristic' | 'always' | 'never';
export const GATE_POLICIES: readonly GatePolicyName[] = ['token', 'heuristic', 'always', 'never'];

export interface GateSignals {
  /** P(<cc>) from a model with a gate token, or undefined when no loaded model has one. */
  gateProbability(): Promise<{ probability: number; source: 'generator' | 'policy-model' } | undefined>;
  heuristicFeatures(): Promise<HeuristicFeatures>;
}

export interface GateThresholds {
  /** Retrieve iff P > threshold (Repoformer: 0.2 for lines). */
  line: number;
  /** For multi-line and function-body completions (Repoformer: 0.15). */
  multiline: number;
}

export interface GateDecision {
  /** The policy that decided: `token` falls back to `heuristic` when no model has a gate token. */
  policy: GatePolicyName;
  fire: boolean;
  /** P(<cc>) for `token`, the fitted probability for `heuristic`, 1 or 0 for the fixed policies. */
  score: number;
  threshold: number;
  source: 'generator' | 'policy-model' | 'heuristic' | 'fixed';
  features?: HeuristicFeatures;
}

export function isGatePolicy(name: string): name is GatePolicyName {
  return (GATE_POLICIES as readonly string[]).includes(name);
}

export async function decideGate(
  policy: GatePolicyName,
  signals: GateSignals,
  options: { multiline: boolean; thresholds: GateThresholds; heuristic: HeuristicModel },
): Promise<GateDecision> {
  switch (policy) {
    case 'always':
    case 'never': {
      const fire = policy === 'always';
      return { policy, fire, score: fire ? 1 : 0, threshold: 0.5, source: 'fixed' };
    }
    case 'token': {
      const gate = await signals.gateProbability();
      if (gate) {
        const threshold = options.multiline ? options.thresholds.multiline : options.thresholds.line;
        return { policy, fire: gate.probability > threshold, score: gate.probability, threshold, source: gate.source };
      }
      return decideGate('heuristic', signals, options);
    }
    case 'heuristic': {
      const features = await signals.heuristicFeatures();
      const score = heuristicProbability(features, options.heuristic);
      const threshold = options.heuristic.threshold;
      return { policy, fire: score > threshold, score, threshold, source: 'heuristic', features };
    }
  }
}
