import type { RetrieverName } from './types';

/** Which retrievers fill the budget for a repository: all of them fused, or one alone (with recent files). */
export interface FusionProfile {
  name: 'fused' | Exclude<RetrieverName, 'recent'>;
  retrievers: readonly RetrieverName[];
}

export const FUSED: FusionProfile = {
  name: 'fused',
  retrievers: ['definition', 'lexical', 'similar', 'sibling', 'recent'],
};

/**
 * The profiles calibration chooses from: the fusion and each retriever alone, so that on the repository's own
 * lines the chosen one is never below its best component. Recent files stay in every profile: the editor's
 * recent files are the user's own signal, which the calibration's samples cannot show.
 */
export const PROFILES: readonly FusionProfile[] = [
  FUSED,
  ...(['definition', 'lexical', 'similar', 'sibling'] as const).map((name) => ({
    name,
    retrievers: [name, 'recent'] as const,
  })),
];
