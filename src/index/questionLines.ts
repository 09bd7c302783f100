/**
 * The lines of a parsed file that are questions for retrieval, as CrossCodeEval cuts them: the file is cut at the
 * first non-blank character of a line, and the rest of the line is what the model must write. A `cross` line
 * needs identifiers that its file never mentions elsewhere and another file declares; an `infile` line needs only
 * what its file already says. `make-tasks` turns them into benchmark tasks, and the fusion's calibration samples
 * them from the user's own repository, so that both ask the same kind of question.
 */
import type { Tree } from 'web-tree-sitter';
import { languageBuiltins } from './builtins';
import { scanIdentifiers, type LineIdentifier } from './lineIdentifiers';
import { shuffled } from './seededRandom';
import { wordCounts } from './tokenize';

export type QuestionKind = 'cross' | 'infile';

/** One line of a file as a question: where it is cut, and the identifiers it needs from other files. */
export interface QuestionLine {
  file: string;
  /** Zero-based row, and the column of its first non-blank character. */
  row: number;
  column: number;
  /**
   * Identifiers the rest of the line uses that another file declares and the file never mentions elsewhere (in
   * commit replay: or that the line is the first to use, the file's previous version never having mentioned them).
   */
  novel: string[];
}

/** Shorter lines (`});`, `break;`) say nothing about retrieval. */
const MIN_LINE_CHARS = 6;

/** Literals and comments: a line that starts inside one is prose or data, not code to complete. */
const TEXT_NODES = new Set([
  'comment',
  'string',
  'template_string',
  'jsx_text',
  'regex',
  'concatenated_string',
  'interpreted_string_literal',
  'raw_string_literal',
  'rune_literal',
  'string_literal',
  'char_literal',
  'character_literal',
  'text_block',
]);
/** Comment nodes: Rust's and Java's grammars tell line comments from block comments. */
const COMMENT_NODES = new Set(['comment', 'line_comment', 'block_comment']);
/** Imports and package clauses (TS/JS, Python, Go, Rust, Java): not a line to complete. */
const IMPORT_NODES = new Set([
  'import_statement',
  'import_from_statement',
  'future_import_statement',
  'import_declaration',
  'package_clause',
  'package_declaration',
  'use_declaration',
]);

/** Whether a question line may start at `index`: not inside a comment or literal, not an import or re-export. */
function startsCode(tree: Tree, row: number, column: number, index: number): boolean {
  for (let node = tree.rootNode.descendantForPosition({ row, column }); node; node = node.parent) {
    if (COMMENT_NODES.has(node.type)) return false;
    if (TEXT_NODES.has(node.type) && node.startIndex < index) return false;
    if (IMPORT_NODES.has(node.type)) return false;
    if (node.type === 'export_statement' && node.childForFieldName('source')) return false;
  }
  return true;
}

/**
 * The question lines of one parsed file, by kind (`crossOnly`: none of the infile kind, found faster).
 * `declaredElsewhere` says whether a file other than this one declares a name. `newToFile` (commit replay) says
 * whether the file's previous version never mentioned a name: such a name is also novel on the first row that uses
 * it, though the file now mentions it elsewhere (the import the same commit added, its later uses).
 */
export function questionLines(
  file: string,
  text: string,
  tree: Tree,
  languageId: string,
  declaredElsewhere: (name: string) => boolean,
  crossOnly = false,
  newToFile?: (name: string) => boolean,
): Record<QuestionKind, QuestionLine[]> {
  const found: Record<QuestionKind, QuestionLine[]> = { cross: [], infile: [] };
  const builtins = languageBuiltins(languageId);
  const totals = wordCounts(text);
  const lines = text.split('\n');
  const mayBeNovel = (name: string): boolean => !builtins.has(name) && declaredElsewhere(name);
  const rows = crossOnly ? crossCandidateRows(lines, totals, mayBeNovel) : undefined;
  const scan = scanIdentifiers(tree, languageId, rows);
  const firstUse = newToFile ? firstUseRows(scan.identifiers) : undefined;
  let lineStart = 0;
  for (let row = 0; row < lines.length; lineStart += lines[row].length + 1, row++) {
    if (rows && !rows.has(row)) continue;
    const line = lines[row];
    const column = line.search(/\S/);
    if (column < 0 || scan.errorRows.has(row)) continue;
    const rest = line.slice(column).trimEnd();
    if (rest.replace(/\s/g, '').length < MIN_LINE_CHARS) continue;
    const ids = scan.identifiers.get(row);
    if (!ids || !startsCode(tree, row, column, lineStart + column)) continue;

    // A name the line declares itself (`(x) => x.id`) needs no context.
    const declaredHere = new Set(ids.filter((i) => i.role === 'declared').map((i) => i.name));
    const used = [...new Set(ids.filter((i) => i.role !== 'declared' && !declaredHere.has(i.name)).map((i) => i.name))];
    const onLine = wordCounts(rest);
    const inContext = (name: string): boolean => (totals.get(name) ?? 0) > (onLine.get(name) ?? 0);
    const firstUsedHere = (name: string): boolean => firstUse?.get(name) === row && newToFile!(name);
    const novel = used.filter((n) => (!inContext(n) || firstUsedHere(n)) && mayBeNovel(n));
    if (!used.every((n) => inContext(n) || novel.includes(n))) continue;
    if (novel.length > 0) found.cross.push({ file, row, column, novel });
    else if (used.length >= 2) found.infile.push({ file, row, column, novel });
  }
  return found;
}

/** The row each name is first used on (declarations, imports among them, are no use). */
function firstUseRows(identifiers: ReadonlyMap<number, readonly LineIdentifier[]>): Map<string, number> {
  const first = new Map<string, number>();
  for (const row of [...identifiers.keys()].sort((a, b) => a - b)) {
    for (const id of identifiers.get(row)!) if (id.role !== 'declared' && !first.has(id.name)) first.set(id.name, row);
  }
  return first;
}

/**
 * The rows that can be cross lines: a word of theirs occurs nowhere else in the file, is no builtin and is declared
 * elsewhere (every novel identifier is such a word; a row with a character outside the words' alphabet is kept).
 */
function crossCandidateRows(
  lines: readonly string[],
  totals: ReadonlyMap<string, number>,
  mayBeNovel: (name: string) => boolean,
): Set<number> {
  const rows = new Set<number>();
  lines.forEach((line, row) => {
    if (/[^\x00-\x7f]/.test(line)) rows.add(row);
    else {
      for (const [word, count] of wordCounts(line)) {
        if ((totals.get(word) ?? 0) <= count && mayBeNovel(word)) {
          rows.add(row);
          break;
        }
      }
    }
  });
  return rows;
}

/**
 * `count` of `lines` in a seeded order: uniform over the lines, so a file weighs what it holds, as it does where
 * people type. `maxPerFile` caps one file's share (the old capped view; a large file's lines then go unsampled).
 */
export function sampleLines(
  lines: readonly QuestionLine[],
  count: number,
  next: () => number,
  maxPerFile = Infinity,
): QuestionLine[] {
  const perFile = new Map<string, number>();
  const picked: QuestionLine[] = [];
  for (const line of shuffled(lines, next)) {
    if (picked.length >= count) break;
    const n = perFile.get(line.file) ?? 0;
    if (n >= maxPerFile) continue;
    perFile.set(line.file, n + 1);
    picked.push(line);
  }
  return picked;
}
