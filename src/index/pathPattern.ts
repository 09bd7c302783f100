/** The `prefix*suffix` patterns of package.json `exports` / `imports` and tsconfig `paths`. */

/** A `paths` / `exports` / `imports` entry: `prefix*suffix` → targets with `*` where the match goes. */
export interface PathPattern {
  prefix: string;
  suffix: string;
  wildcard: boolean;
  /** Workspace-relative module paths (extension optional), best first. */
  targets: string[];
}

/** A pattern key (`@app/*`, `./utils`, `#internal/*`) with its targets, already as workspace-relative paths. */
export function patternOf(key: string, targets: string[]): PathPattern {
  const star = key.indexOf('*');
  return {
    prefix: star < 0 ? key : key.slice(0, star),
    suffix: star < 0 ? '' : key.slice(star + 1),
    wildcard: star >= 0,
    targets,
  };
}

/** Exact patterns first, then by longest prefix, which is the order TypeScript tries them in. */
export function sortPatterns(patterns: PathPattern[]): PathPattern[] {
  return patterns.sort((a, b) => Number(a.wildcard) - Number(b.wildcard) || b.prefix.length - a.prefix.length);
}
