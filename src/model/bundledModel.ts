import { existsSync } from 'fs';
import * as path from 'path';

export const BUNDLED_MODEL_LABEL =
  'repogate-tiny (demo model, 4 M parameters: shows the pipeline, does not write good code)';

/**
 * The tiny model shipped with RepoGate: inside a packaged extension at dist/models/, in a source checkout at
 * test/fixtures/models/. Searched upward from the running bundle (dist/) or compiled module (out/src/model/).
 */
export function bundledModelPath(from: string = __dirname): string | undefined {
  for (let dir = from, i = 0; i < 5; i++, dir = path.dirname(dir)) {
    for (const candidate of [
      path.join(dir, 'models', 'repogate-tiny.gguf'),
      path.join(dir, 'test', 'fixtures', 'models', 'repogate-tiny.gguf'),
    ]) {
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}
