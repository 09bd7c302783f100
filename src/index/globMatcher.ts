/**
 * One glob list as one regular expression. picomatch's array matcher calls a matcher per glob, and each call
 * builds result objects: at ~80 globs per file that was most of a workspace scan's time.
 */
import picomatch from 'picomatch';

export type Matcher = (p: string) => boolean;

/** Sources that could change meaning when joined: backreferences, named groups, or `\1` octal escapes. */
const UNSAFE_TO_JOIN = /\\[1-9k]|\(\?<(?![=!])/;

/** The same answers as `picomatch(globs, opts)` for every string input, with the same picomatch version. */
export function globMatcher(globs: readonly string[], opts: { dot?: boolean; nocase?: boolean }): Matcher {
  // picomatch's entry point fills in `windows` from the platform; makeRe is called below that, so we do too.
  const windows = process.platform === 'win32';
  const regexes = globs.map((g) => picomatch.makeRe(g, { ...opts, windows }));
  if (regexes.length === 0) return () => false;
  const literal = new Set(globs);
  const test = joinRegexes(regexes);
  const mayMatch = literalPrefilter(globs, regexes[0].flags);
  // picomatch tests the input against the glob's own text first, then the regex, on posix slashes on Windows.
  return (input) => {
    if (input === '') return false;
    if (literal.has(input)) return true;
    const p = windows ? input.replace(/\\/g, '/') : input;
    if (p !== input && literal.has(p)) return true;
    return (mayMatch === undefined || mayMatch.test(p)) && test(p);
  };
}

/**
 * A plain segment: `**`, or name characters with single `*`s between them. Braces, classes, extglobs, escapes,
 * `?`, a leading `!` and `**` inside a segment are not plain (picomatch turns the `.` of `***-.*` into "any").
 */
const PLAIN_SEGMENT = /^(\*\*|\*?([\w.-]+\*)*[\w.-]*)$/;
/** A `.` or `..` segment, which picomatch may drop (`./a` matches `a`). */
const DOT_SEGMENT = /^\.+$/;

/**
 * In a plain glob each run of name characters is matched literally, so no path without it can match: one
 * expression of every glob's longest run rules out most paths far faster than the globs' own expressions
 * (`**\/node_modules/**` steps through lookaheads at every character). Undefined where some glob is not plain.
 */
function literalPrefilter(globs: readonly string[], flags: string): RegExp | undefined {
  const runs: string[] = [];
  for (const g of globs) {
    const segments = g.split('/');
    if (segments.some((s) => s === '' || !PLAIN_SEGMENT.test(s) || DOT_SEGMENT.test(s))) return undefined;
    const longest = g.split(/[/*]+/).reduce((a, b) => (b.length > a.length ? b : a), '');
    if (longest === '') return undefined;
    runs.push(longest.replace(/\./g, '\\.'));
  }
  return new RegExp(runs.join('|'), flags);
}

function joinRegexes(regexes: RegExp[]): Matcher {
  const each: Matcher = (p) => regexes.some((r) => r.test(p));
  if (regexes.some((r) => UNSAFE_TO_JOIN.test(r.source) || r.flags !== regexes[0].flags)) {
    return each;
  }
  try {
    // Every source is anchored with ^ on its own; the outer ^ spares the engine a try at every offset.
    const joined = new RegExp(`^(?:${regexes.map((r) => `(?:${r.source})`).join('|')})`, regexes[0].flags);
    return (p) => joined.test(p);
  } catch {
    return each;
  }
}
