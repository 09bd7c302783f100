/** Whether a path names a secret file: such files never reach a prompt or the on-disk index. */
import { DEFAULT_SECRET_GLOBS } from './defaultGlobs';
import { globMatcher, type Matcher } from './globMatcher';
import { baseName, normalizeRel } from './relPath';

export type { Matcher };

const secretMatcherCache = new Map<string, Matcher>();

export function secretMatcher(extraGlobs: readonly string[] = []): Matcher {
  const key = extraGlobs.join('\0');
  let m = secretMatcherCache.get(key);
  if (!m) {
    const isMatch = globMatcher([...DEFAULT_SECRET_GLOBS, ...extraGlobs], { dot: true, nocase: true });
    m = (p) => isMatch(p) || isMatch(baseName(p));
    secretMatcherCache.set(key, m);
  }
  return m;
}

export function isSecretPath(relPath: string, extraGlobs?: string[]): boolean {
  return secretMatcher(extraGlobs)(normalizeRel(relPath));
}
