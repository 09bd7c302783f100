/** A timing-only shape small enough for unit tests: seconds to write and load, real special tokens of its family. */
import type { ModelShape } from '../../src/bench/shapeModel';

export function smallShape(name: string, family: ModelShape['family'], contextLength: number): ModelShape {
  return {
    name,
    of: 'nothing',
    embedding: 128,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    feedForward: 256,
    vocab: 5000,
    contextLength,
    ropeBase: 1e4,
    tied: false,
    family,
  };
}
