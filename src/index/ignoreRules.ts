/**
 * Which paths may be indexed: secrets, exclude globs, extensions and .gitignore rules (with .git/info/exclude),
 * shared by the walker and the incremental filter that judges file events.
 */
import * as fs from 'fs';
import * as path from 'path';
import ignore, { type Ignore } from 'ignore';
import { DEFAULT_EXCLUDE_GLOBS } from './defaultGlobs';
import { globMatcher } from './globMatcher';
import { dirOf, leavesRoot, normalizeRel } from './relPath';
import { secretMatcher, type Matcher } from './secrets';
import type { SkipReason } from './skipReason';

export interface RuleOptions {
  /** Replaces DEFAULT_EXCLUDE_GLOBS when given (spread the defaults in to extend them). */
  excludeGlobs?: string[];
  /** Added to DEFAULT_SECRET_GLOBS: configuration can widen, never narrow, what counts as a secret. */
  secretGlobs?: string[];
  /** If given, only files with these extensions ('.ts' or 'ts') are indexed. */
  extensions?: string[];
}

/** Git on Linux compares case-sensitively; on macOS and Windows file systems it usually does not. */
const GIT_IGNORECASE = process.platform !== 'linux';

/** A directory's .gitignore rules; their patterns are relative to that directory. */
interface GitignoreLink {
  dir: string;
  ig: Ignore;
}

/** Exclude globs, extensions and .gitignore rules, shared by the walker and the incremental filter. */
export class Rules {
  private readonly absRoot: string;
  private readonly isSecret: Matcher;
  private readonly isExcluded: Matcher;
  private readonly extensions?: Set<string>;
  /** Directory → rules of its .gitignore (null: it has none). Filled lazily or by the walker. */
  private readonly gitignores = new Map<string, Ignore | null>();
  /** Directory → the .gitignore rules that apply in it, deepest first: built once per directory, not per file. */
  private readonly chains = new Map<string, readonly GitignoreLink[]>();
  private readonly dirIgnored = new Map<string, boolean>();
  private infoExclude: Ignore | null | undefined;

  constructor(root: string, opts: RuleOptions) {
    this.absRoot = path.resolve(root);
    this.isSecret = secretMatcher(opts.secretGlobs);
    this.isExcluded = globMatcher(opts.excludeGlobs ?? DEFAULT_EXCLUDE_GLOBS, { dot: true });
    if (opts.extensions) {
      this.extensions = new Set(opts.extensions.map((e) => (e.startsWith('.') ? e : `.${e}`).toLowerCase()));
    }
  }

  invalidate(): void {
    this.gitignores.clear();
    this.chains.clear();
    this.dirIgnored.clear();
    this.infoExclude = undefined;
  }

  setGitignore(dir: string, content: string | null): void {
    // A chain built with the old rules would outlive them (descendants' chains are built from this one).
    if (this.chains.has(dir)) this.chains.clear();
    this.gitignores.set(dir, content === null ? null : ignore({ ignorecase: GIT_IGNORECASE }).add(content));
  }

  setInfoExclude(content: string | null): void {
    this.infoExclude = content === null ? null : ignore({ ignorecase: GIT_IGNORECASE }).add(content);
  }

  /** The reason a file is never indexed, before looking at its size or contents. */
  fileReason(rel: string, realPath?: string): SkipReason | undefined {
    if (this.isSecret(rel) || (realPath !== undefined && this.isSecret(normalizeRel(realPath)))) return 'secret';
    // Both give 'excluded'; the extension is far cheaper to look at than the globs, so it goes first.
    if (this.extensions && !this.extensions.has(path.posix.extname(rel).toLowerCase())) return 'excluded';
    if (this.isExcludedPath(rel)) return 'excluded';
    const dir = dirOf(rel);
    if (this.isDirIgnored(dir) || this.matchesGitignore(rel, false, dir)) return 'gitignored';
    return undefined;
  }

  /** Whether the walker should not descend into a directory at all. */
  dirReason(rel: string): SkipReason | undefined {
    if (this.isExcludedPath(rel)) return 'excluded';
    if (this.isDirIgnored(rel)) return 'gitignored';
    return undefined;
  }

  private isExcludedPath(rel: string): boolean {
    // VCS internals are never source, whatever the configured globs say.
    return (
      rel === '.git' ||
      rel.startsWith('.git/') ||
      rel.includes('/.git/') ||
      rel.endsWith('/.git') ||
      this.isExcluded(rel)
    );
  }

  /** Git cannot re-include anything below an ignored directory, so ancestors are checked first. */
  private isDirIgnored(dir: string): boolean {
    if (dir === '') return false;
    let ignored = this.dirIgnored.get(dir);
    if (ignored === undefined) {
      ignored = this.isDirIgnored(dirOf(dir)) || this.matchesGitignore(dir, true);
      this.dirIgnored.set(dir, ignored);
    }
    return ignored;
  }

  /** The deepest .gitignore with a matching rule decides; .git/info/exclude has the lowest precedence. */
  private matchesGitignore(rel: string, isDir: boolean, parent = dirOf(rel)): boolean {
    for (const { dir, ig } of this.chainOf(parent)) {
      const sub = dir ? rel.slice(dir.length + 1) : rel;
      const r = ig.test(isDir ? `${sub}/` : sub);
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
    if (this.infoExclude === undefined) {
      this.setInfoExclude(readTextSync(path.join(this.absRoot, '.git', 'info', 'exclude')));
    }
    return this.infoExclude ? this.infoExclude.ignores(isDir ? `${rel}/` : rel) : false;
  }

  private chainOf(dir: string): readonly GitignoreLink[] {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const above = dir === '' ? [] : this.chainOf(dirOf(dir));
      const ig = this.gitignoreOf(dir);
      chain = ig ? [{ dir, ig }, ...above] : above;
      this.chains.set(dir, chain);
    }
    return chain;
  }

  /** Synchronous but cached: each directory's .gitignore is read at most once until invalidated. */
  private gitignoreOf(dir: string): Ignore | null {
    let ig = this.gitignores.get(dir);
    if (ig === undefined) {
      this.setGitignore(dir, readTextSync(path.join(this.absRoot, dir, '.gitignore')));
      ig = this.gitignores.get(dir) ?? null;
    }
    return ig;
  }
}

function readTextSync(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Decides for one relative path; `dir` for a directory, as the walker does (the root is never left out);
 * `invalidate` drops cached .gitignore rules after one of them changed.
 */
export interface PathFilter {
  (relPath: string): SkipReason | undefined;
  dir(relDir: string): SkipReason | undefined;
  invalidate(): void;
}

/**
 * For incremental file events: cheap after the first call in a directory (rules and results are cached).
 * Size and content checks are left to readSourceFile.
 */
export function createPathFilter(root: string, opts: RuleOptions = {}): PathFilter {
  const rules = new Rules(root, opts);
  const filter = (relPath: string) => {
    const rel = normalizeRel(relPath);
    return rel === '' || leavesRoot(rel) ? 'excluded' : rules.fileReason(rel);
  };
  const dir = (relDir: string) => {
    const rel = normalizeRel(relDir);
    if (rel === '') return undefined;
    return leavesRoot(rel) ? 'excluded' : rules.dirReason(rel);
  };
  return Object.assign(filter, { dir, invalidate: () => rules.invalidate() });
}
