/**
 * Which files are data rather than code: literal tables (names, cities, coordinates, fixtures), minified bundles and
 * generated files. They keep their symbols and outlines, but nobody completes code by analogy with them, so they get
 * no similar-code windows and no BM25 postings — which is most of what they would otherwise cost in memory.
 * Decided from cheap text statistics in one pass over the text, so that a 600 KB table is judged in a millisecond.
 */

/** Below this many characters a file costs little whatever it holds, and a short constants module stays code. */
const DATA_MIN_CHARS = 8192;
/**
 * A file is a literal table when at least this share of its word characters (identifiers, strings and numbers
 * outside comments) lies in string or number literals: a table of names is almost all literal, and a module with
 * string constants, messages or a fixture object among its functions stays far below (its names outweigh them).
 */
const DATA_LITERAL_SHARE = 0.75;
/** Lines this long on average are a minified bundle: no one types code by analogy with it. */
const MINIFIED_LINE_CHARS = 400;
/** Markers of generated code, looked for in the file's head only (where generators write them). */
const GENERATED = /@generated\b|\bDO NOT EDIT\b|\bauto-?generated\b|\bautomatically generated\b/i;
const GENERATED_HEAD_CHARS = 1024;

/** Why a file is data and not code (one line), or undefined for code. */
export function dataFileReason(text: string): string | undefined {
  if (text.length < DATA_MIN_CHARS) return undefined;
  if (GENERATED.test(text.slice(0, GENERATED_HEAD_CHARS))) return 'generated (marked so in its head)';
  const lines = countLines(text);
  if (text.length / lines >= MINIFIED_LINE_CHARS) {
    return `minified (${Math.round(text.length / lines)} characters a line)`;
  }
  const { literal, word } = literalShare(text);
  if (word > 0 && literal / word >= DATA_LITERAL_SHARE) {
    return `literal table (${Math.round((100 * literal) / word)} % of its words are strings or numbers)`;
  }
  return undefined;
}

function countLines(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

const SLASH = 47;
const STAR = 42;
const HASH = 35;
const NEWLINE = 10;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const QUOTES = new Set([34, 39, 96]);
/** After these (or at the start) a `/` opens a regular expression, not a division: `(/[`'"]/`. */
const BEFORE_REGEX = new Set([...'(,=:[!&|?{};+-*%<>~^'].map((ch) => ch.charCodeAt(0)));

/** The end of the regular expression literal opening at `i` (past its closing `/`), within its line. */
function regexEnd(text: string, i: number): number {
  let inClass = false;
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === NEWLINE) return j;
    if (c === BACKSLASH) j++;
    else if (c === OPEN_BRACKET) inClass = true;
    else if (c === CLOSE_BRACKET) inClass = false;
    else if (c === SLASH && !inClass) return j + 1;
  }
  return text.length;
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c > 127;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Word characters in string and number literals, and word characters in all, outside comments (`//`, `/* *\/`,
 * `#`), regular expressions and Python's triple-quoted docstrings (a quote inside either would open a string).
 * Not a lexer: an odd regular expression or a `#` inside code may be read slightly wrong, which moves a share by a
 * little, never a verdict between a table and a module.
 */
export function literalShare(text: string): { literal: number; word: number } {
  let literal = 0;
  let word = 0;
  const n = text.length;
  let i = 0;
  /** The first character of the last token (not white space) before `i`; 0 at the start. */
  let previous = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const before = previous;
    if (c > 32) previous = c;
    if ((c === SLASH && text.charCodeAt(i + 1) === SLASH) || c === HASH) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === SLASH && text.charCodeAt(i + 1) === STAR) {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === SLASH && (before === 0 || BEFORE_REGEX.has(before))) {
      i = regexEnd(text, i);
    } else if (QUOTES.has(c)) {
      const triple = text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c;
      if (triple) {
        // A docstring documents code; it is not data.
        const end = text.indexOf(text.slice(i, i + 3), i + 3);
        i = end === -1 ? n : end + 3;
        continue;
      }
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === BACKSLASH) j++;
        else if (d === c || (d === NEWLINE && c !== 96)) break;
        else if (isWordChar(d)) {
          literal++;
          word++;
        }
      }
      i = j + 1;
    } else if (isWordChar(c)) {
      // A whole word: a number when it starts with a digit (`1e5`, `0xff`), else a name.
      const number = isDigit(c);
      let j = i;
      while (j < n && isWordChar(text.charCodeAt(j))) j++;
      word += j - i;
      if (number) literal += j - i;
      i = j;
    } else {
      i++;
    }
  }
  return { literal, word };
}
