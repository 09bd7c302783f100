/** Whether a path names a secret file: such files never reach a prompt or the on-disk index. */
import picomatch from 'picomatch';
import { DEFAULT_SECRET_GLOBS } from './defaultGlobs';
import { baseName, normalizeRel } from './relPath';

export type Matcher = (p: string) => boolean;

const secretMatcherCache = new Map<string, Matcher>();

export function secretMatcher(extraGlobs: readonly string[] = []): Matcher {
  const key = extraGlobs.join('\0');
  let m = secretMatcherCache.get(key);
  if (!m) {
    const isMatch = picomatch([...DEFAULT_SECRET_GLOBS, ...extraGlobs], { dot: true, nocase: true });
    m = (p) => isMatch(p) || isMatch(baseName(p));
    secretMatcherCache.set(key, m);
  }
  return m;
}

export function isSecretPath(relPath: string, extraGlobs?: string[]): boolean {
  return secretMatcher(extraGlobs)(normalizeRel(relPath));
}
