/**
 * Benchmark tasks in the CrossCodeEval format (docs/benchmarks.md, "Task format"), made from one indexed
 * repository: each task cuts a source file at the first non-blank character of a line, and the rest of that
 * line is the ground truth. `cross` tasks need identifiers declared in another file of the repository;
 * `infile` tasks need only what the file itself already says.
 */
import * as path from 'path';
import type { Node, Tree } from 'web-tree-sitter';
import { languageForPath } from '../index/languages';
import { SourceParser } from '../index/parser';
import { isProductSource } from '../index/productPath';
import { seededRandom, shuffled } from '../index/seededRandom';
import type { RepoIndex } from '../index/repoIndex';
import { readSourceFile } from '../index/readSource';
import { wordCounts } from '../index/tokenize';
import { languageBuiltins } from '../index/builtins';
import { goRole, PYTHON_GO_IDENTIFIERS, pythonRole, type IdentifierRole } from './taskRoles';

export type TaskKind = 'cross' | 'infile';

export interface Task {
  prompt: string;
  right_context: string;
  groundtruth: string;
  metadata: {
    /** `${repository}/${file}:${groundtruth_start_lineno}`. */
    task_id: string;
    repository: string;
    file: string;
    /** Zero-based, as in CrossCodeEval: the number of lines before the ground truth. */
    groundtruth_start_lineno: number;
    kind: TaskKind;
    /** Identifiers the ground truth uses that the file never mentions and another file declares. */
    novel_identifiers: string[];
  };
}

/** 100 tasks of each kind: a recall's standard error is at most 5 points; the seed only has to stay put between runs. */
export const MAKE_TASKS_DEFAULTS = { perKind: 100, seed: 42 };

export interface MakeTasksOptions {
  /** Tasks of each kind (default MAKE_TASKS_DEFAULTS.perKind). */
  perKind?: number;
  /** Seed of the sampling shuffle (default MAKE_TASKS_DEFAULTS.seed). */
  seed?: number;
  /** A parser to reuse; one is created (and disposed) otherwise. */
  parser?: SourceParser;
}

export type { IdentifierRole };

export interface LineIdentifier {
  name: string;
  role: IdentifierRole;
}

/** Spreads the sample over files: one file's repetitive lines cannot fill a kind. */
const MAX_TASKS_PER_FILE = 3;
/** Shorter ground truths (`});`, `break;`) say nothing about retrieval. */
const MIN_GROUNDTRUTH_CHARS = 6;

const IDENTIFIER_NODES = new Set([
  'identifier',
  'property_identifier',
  'type_identifier',
  'shorthand_property_identifier',
  'shorthand_property_identifier_pattern',
  'private_property_identifier',
  'statement_identifier',
]);

/** Declarations whose `name` field names what they declare. */
const NAMED_DECLARATIONS = new Set([
  'function_declaration',
  'generator_function_declaration',
  'function_expression',
  'function',
  'generator_function',
  'function_signature',
  'class_declaration',
  'abstract_class_declaration',
  'class',
  'interface_declaration',
  'type_alias_declaration',
  'enum_declaration',
  'enum_assignment',
  'internal_module',
  'module',
  'method_definition',
  'method_signature',
  'abstract_method_signature',
  'public_field_definition',
  'property_signature',
  'variable_declarator',
  'type_parameter',
  'mapped_type_clause',
]);

/** Nodes whose identifier children are all bound by them (parameters, destructuring targets, imports). */
const BINDING_PATTERNS = new Set([
  'formal_parameters',
  'array_pattern',
  'rest_pattern',
  'infer_type',
  'import_specifier',
  'import_clause',
  'namespace_import',
]);

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
]);
/** Imports and package clauses (TS/JS, Python, Go): not a line to complete. */
const IMPORT_NODES = new Set([
  'import_statement',
  'import_from_statement',
  'future_import_statement',
  'import_declaration',
  'package_clause',
]);

function isField(parent: Node | null, field: string, node: Node): boolean {
  return parent?.childForFieldName(field)?.equals(node) ?? false;
}

function roleOf(node: Node, field: string | null): IdentifierRole | undefined {
  const parent = node.parent;
  const parentType = parent?.type ?? '';
  if (node.type === 'shorthand_property_identifier_pattern' || node.type === 'statement_identifier') return 'declared';
  if (field === 'name' && NAMED_DECLARATIONS.has(parentType)) return 'declared';
  if (parentType === 'enum_body') return 'declared';
  if (field === 'property' && parentType === 'field_definition') return 'declared';
  if (field === 'pattern' && (parentType === 'required_parameter' || parentType === 'optional_parameter')) {
    return 'declared';
  }
  if (BINDING_PATTERNS.has(parentType)) return 'declared';
  if (field === 'parameter' && (parentType === 'arrow_function' || parentType === 'catch_clause')) return 'declared';
  if (field === 'left' && parentType === 'assignment_pattern') return 'declared';
  if (field === 'value' && parentType === 'pair_pattern') return 'declared';
  // `for (const x of xs)` declares x; `for (x of xs)` assigns an existing one.
  if (field === 'left' && parentType === 'for_in_statement' && parent!.childForFieldName('kind')) return 'declared';
  // A key of an object literal defines a property; it needs no prior knowledge of the name.
  if (field === 'key' && parentType === 'pair') return 'declared';
  // Lower-case JSX tags are HTML elements, not bindings.
  if (field === 'name' && /^jsx_(opening|closing|self_closing)_element$/.test(parentType) && /^[a-z]/.test(node.text)) {
    return undefined;
  }

  const target = field === 'property' && parentType === 'member_expression' ? parent! : node;
  const holder = target.parent;
  if (holder?.type === 'call_expression' && isField(holder, 'function', target)) return 'call';
  if (holder?.type === 'new_expression' && isField(holder, 'constructor', target)) return 'new';
  if (target !== node || parentType === 'jsx_attribute' || (field === 'key' && parentType === 'pair_pattern')) {
    return 'member';
  }
  if (node.type === 'type_identifier' || parentType === 'nested_type_identifier') return 'type';
  return 'reference';
}

export interface FileScan {
  /** Identifiers by zero-based row, in source order. */
  identifiers: Map<number, LineIdentifier[]>;
  /** Rows touched by a parse error, whose roles cannot be trusted. */
  errorRows: Set<number>;
}

/**
 * Every identifier of a TS/JS tree with how it occurs: used (member, call, `new`, type, plain reference) or
 * `declared` (name of a declaration, parameter, destructuring target or object-literal key).
 */
export function scanIdentifiers(tree: Tree, language = 'typescript'): FileScan {
  const nodes = language === 'python' || language === 'go' ? PYTHON_GO_IDENTIFIERS : IDENTIFIER_NODES;
  const role = language === 'python' ? pythonRole : language === 'go' ? goRole : roleOf;
  const identifiers = new Map<number, LineIdentifier[]>();
  const errorRows = new Set<number>();
  const cursor = tree.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (type === 'ERROR' || cursor.currentNode.isMissing) {
        for (let row = cursor.startPosition.row; row <= cursor.endPosition.row; row++) errorRows.add(row);
      } else if (nodes.has(type)) {
        const node = cursor.currentNode;
        const found = role(node, cursor.currentFieldName);
        if (found) {
          const row = node.startPosition.row;
          const list = identifiers.get(row);
          const item = { name: node.text.replace(/^#/, ''), role: found };
          if (list) list.push(item);
          else identifiers.set(row, [item]);
        }
      }
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return { identifiers, errorRows };
      }
    }
  } finally {
    cursor.delete();
  }
}

/** Whether a task may start at `index`: not inside a comment or literal, not an import or re-export. */
function startsCode(tree: Tree, row: number, column: number, index: number): boolean {
  for (let node = tree.rootNode.descendantForPosition({ row, column }); node; node = node.parent) {
    if (node.type === 'comment') return false;
    if (TEXT_NODES.has(node.type) && node.startIndex < index) return false;
    if (IMPORT_NODES.has(node.type)) return false;
    if (node.type === 'export_statement' && node.childForFieldName('source')) return false;
  }
  return true;
}

interface Candidate {
  file: string;
  row: number;
  column: number;
  novel: string[];
}

function sample(candidates: Candidate[], count: number, next: () => number): Candidate[] {
  const perFile = new Map<string, number>();
  const picked: Candidate[] = [];
  for (const c of shuffled(candidates, next)) {
    if (picked.length >= count) break;
    const n = perFile.get(c.file) ?? 0;
    if (n >= MAX_TASKS_PER_FILE) continue;
    perFile.set(c.file, n + 1);
    picked.push(c);
  }
  return picked;
}

/**
 * Finds every line of the repository's product TS/JS files that makes a `cross` or `infile` task, then
 * samples `perKind` of each deterministically. Cross tasks come first, then infile tasks, each in sample order.
 */
export async function makeTasks(index: RepoIndex, root: string, options: MakeTasksOptions = {}): Promise<Task[]> {
  const perKind = options.perKind ?? MAKE_TASKS_DEFAULTS.perKind;
  const parser = options.parser ?? new SourceParser();
  const repository = path.basename(path.resolve(root));
  const texts = new Map<string, string>();
  const found: Record<TaskKind, Candidate[]> = { cross: [], infile: [] };

  const declaredElsewhere = (name: string, file: string): boolean =>
    index.symbols(name).some((ref) => ref.path !== file);

  try {
    for (const file of [...index.files.keys()].filter(isProductSource).sort()) {
      const read = await readSourceFile(root, file);
      if (!('text' in read)) continue;
      const text = read.text;
      const language = languageForPath(file)!;
      const tree = await parser.parse(file, language, text);
      const scan = scanIdentifiers(tree, language.id);
      const builtins = languageBuiltins(language.id);
      const totals = wordCounts(text);
      const before = found.cross.length + found.infile.length;
      const lines = text.split('\n');
      let lineStart = 0;
      for (let row = 0; row < lines.length; lineStart += lines[row].length + 1, row++) {
        const line = lines[row];
        const column = line.search(/\S/);
        if (column < 0 || scan.errorRows.has(row)) continue;
        const groundtruth = line.slice(column).trimEnd();
        if (groundtruth.replace(/\s/g, '').length < MIN_GROUNDTRUTH_CHARS) continue;
        const ids = scan.identifiers.get(row);
        if (!ids || !startsCode(tree, row, column, lineStart + column)) continue;

        // A name the line declares itself (`(x) => x.id`) needs no context.
        const declaredHere = new Set(ids.filter((i) => i.role === 'declared').map((i) => i.name));
        const used = [
          ...new Set(ids.filter((i) => i.role !== 'declared' && !declaredHere.has(i.name)).map((i) => i.name)),
        ];
        const onLine = wordCounts(groundtruth);
        const inContext = (name: string): boolean => (totals.get(name) ?? 0) > (onLine.get(name) ?? 0);
        const novel = used.filter((n) => !inContext(n) && !builtins.has(n) && declaredElsewhere(n, file));
        if (!used.every((n) => inContext(n) || novel.includes(n))) continue;
        if (novel.length > 0) found.cross.push({ file, row, column, novel });
        else if (used.length >= 2) found.infile.push({ file, row, column, novel });
      }
      // Only files that gave candidates are needed again, to cut the sampled tasks.
      if (found.cross.length + found.infile.length > before) texts.set(file, text);
      parser.forget(file);
    }
  } finally {
    if (!options.parser) parser.dispose();
  }

  const next = seededRandom(options.seed ?? MAKE_TASKS_DEFAULTS.seed);
  const tasks: Task[] = [];
  for (const kind of ['cross', 'infile'] as const) {
    for (const c of sample(found[kind], perKind, next)) tasks.push(toTask(c, kind, texts.get(c.file)!, repository));
  }
  return tasks;
}

function toTask(c: Candidate, kind: TaskKind, text: string, repository: string): Task {
  let lineStart = 0;
  for (let row = 0; row < c.row; row++) lineStart = text.indexOf('\n', lineStart) + 1;
  const newline = text.indexOf('\n', lineStart);
  const lineEnd = newline < 0 ? text.length : newline;
  return {
    prompt: text.slice(0, lineStart + c.column),
    right_context: newline < 0 ? '' : text.slice(newline + 1),
    groundtruth: text.slice(lineStart + c.column, lineEnd).trimEnd(),
    metadata: {
      task_id: `${repository}/${c.file}:${c.row}`,
      repository,
      file: c.file,
      groundtruth_start_lineno: c.row,
      kind,
      novel_identifiers: c.novel,
    },
  };
}
