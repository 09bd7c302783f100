import { LRUCache } from 'lru-cache';
import { languageForPath } from './languages';

const TASK_LANGUAGES = new Set(['typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java']);

/**
 * Code that is not product code: tests, their fixtures and mocks, benchmarks, examples. Their lines are
 * repetitive (fixtures copy product code) and their cross-file needs are atypical. A folder counts when one of
 * its `-`/`_`/`.`-separated words is listed (`__tests__`, `e2e-tests`, `dts-test`); a file when its name has
 * such a word after a separator (`a.test.ts`, `a.spec.tsx`, `a.test-d.ts`, `a-bench.js`).
 * `scripts` stays in: build and maintenance scripts are ordinary code that imports the repository's modules.
 */
const NON_PRODUCT_WORDS = new Set([
  'test',
  'tests',
  'spec',
  'specs',
  'e2e',
  'fixture',
  'fixtures',
  'mock',
  'mocks',
  'bench',
  'benches',
  'benchmark',
  'benchmarks',
  'example',
  'examples',
]);
const NON_PRODUCT_FILE = /[._-](test|tests|spec|e2e|bench|stories)(?![a-z\d])|^(test_|conftest\.)/;

/** Paths whose answer is kept: retrieval asks about the same files many times a request. */
const KNOWN_PATHS = 20_000;
const nonProduct = new LRUCache<string, boolean, void>({
  max: KNOWN_PATHS,
  memoMethod: (filePath) => {
    const parts = filePath.toLowerCase().split('/');
    const base = parts.pop()!;
    return NON_PRODUCT_FILE.test(base) || parts.some((dir) => dir.split(/[-_.]/).some((w) => NON_PRODUCT_WORDS.has(w)));
  },
});

/** Whether a path is test, fixture, mock, benchmark or example code, whatever its language. */
export function isNonProductPath(filePath: string): boolean {
  return nonProduct.memo(filePath);
}

/** A product source file of a language the benchmark tasks (and the fusion's calibration) are made in. */
export function isProductSource(filePath: string): boolean {
  const spec = languageForPath(filePath);
  if (!spec || !TASK_LANGUAGES.has(spec.id) || filePath.endsWith('.d.ts')) return false;
  return !isNonProductPath(filePath);
}
