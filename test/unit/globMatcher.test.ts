import * as assert from 'assert';
import picomatch from 'picomatch';
import { DEFAULT_EXCLUDE_GLOBS, DEFAULT_SECRET_GLOBS } from '../../src/index/defaultGlobs';
import { globMatcher } from '../../src/index/globMatcher';

/** A small seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)];
}

/** Paths built from names the default globs care about, at depths 1 to 4. */
function samplePaths(rnd: () => number, count: number): string[] {
  const names = (
    'src node_modules dist .git out vendor a.ts a.min.js x.map .env .env.local prod.env id_rsa ' +
    'id_rsa.pub MY_SECRET.txt Key.PEM .ssh .docker config.json .kube config package-lock.json ' +
    'yarn.lock service-account-1.json credentials . .. build __pycache__ Node_Modules distx a.map.ts ' +
    '.npmrc secrets x'
  ).split(' ');
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const depth = 1 + Math.floor(rnd() * 4);
    out.push(Array.from({ length: depth }, () => pick(rnd, names)).join('/'));
  }
  return out;
}

function assertSame(globs: string[], opts: { dot?: boolean; nocase?: boolean }, paths: string[]): void {
  const expected = picomatch(globs, opts);
  const actual = globMatcher(globs, opts);
  for (const p of paths) {
    assert.strictEqual(actual(p), Boolean(expected(p)), `${JSON.stringify(globs)} on ${JSON.stringify(p)}`);
  }
}

describe('globMatcher', () => {
  it('answers as picomatch does for the default exclude and secret globs', () => {
    const paths = [...samplePaths(random(1), 4000), '', 'a', '**/node_modules/**', '.env'];
    assertSame(DEFAULT_EXCLUDE_GLOBS, { dot: true }, paths);
    assertSame([...DEFAULT_SECRET_GLOBS, 'custom/**'], { dot: true, nocase: true }, paths);
  });

  it('answers as picomatch does for random plain globs, alone and in lists', () => {
    const rnd = random(7);
    const parts = ['a', 'b', 'ab', '.', '-', '_', '*', '**', '/', '.a'];
    const globs = Array.from({ length: 300 }, () =>
      Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => pick(rnd, parts)).join(''),
    );
    const paths = Array.from({ length: 200 }, () =>
      Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(rnd, ['a', 'b', 'A', '.', '-', '_', '/'])).join(''),
    );
    for (const g of globs) {
      assertSame([g], { dot: true }, paths);
      assertSame([g], { dot: false, nocase: true }, paths);
    }
    for (let i = 0; i < globs.length; i += 6) assertSame(globs.slice(i, i + 6), { dot: true }, paths);
  });

  it('answers as picomatch does for globs it cannot prefilter or join', () => {
    const globs = ['(a)\\1', '!foo', '{a,b}/*.ts', '[ab]*', './a', '**', '*', '@(x|y)', 'a?c', '\\1', '*.[jt]s'];
    const paths = ['a', 'aa', 'foo', 'bar', 'a/x.ts', 'c/x.ts', 'b.js', 'x', 'abc', '1', 'a/b/c', '.hidden'];
    for (const g of globs) assertSame([g], { dot: true }, paths);
    assertSame(globs, { dot: true }, paths);
    assertSame(globs, { nocase: true }, paths);
  });

  it('matches nothing for no globs', () => {
    assert.strictEqual(globMatcher([], { dot: true })('a'), false);
  });
});
