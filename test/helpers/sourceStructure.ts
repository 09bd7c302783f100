/**
 * Checks of the source tree's structure, run by `test/unit/structure.test.ts` (so by `npm test` and CI) and from
 * the command line (`node out/test/helpers/sourceStructure.js`, after `npx tsc -p .`): no import circle between
 * files, no import against the layer table of docs/architecture.md, `vscode` imported only by the editor glue,
 * and no function over 100 lines but the listed exceptions.
 */
import { readdirSync, readFileSync, statSync } from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/** What each folder of src/ (or file directly in it) may import besides itself: docs/architecture.md, "Layers". */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  'extension.ts': ['vscode', 'defaults.ts'],
  'cli.ts': ['cli', 'bench'],
  vscode: ['engine', 'convert', 'retrieval', 'model', 'gate', 'index', 'defaults.ts'],
  bench: ['cli', 'engine', 'convert', 'retrieval', 'model', 'gate', 'index', 'defaults.ts'],
  cli: ['engine', 'convert', 'retrieval', 'model', 'gate', 'index', 'defaults.ts'],
  engine: ['retrieval', 'model', 'gate', 'index', 'defaults.ts'],
  convert: ['model', 'index', 'defaults.ts'],
  gate: ['retrieval', 'index', 'defaults.ts'],
  model: ['retrieval', 'index', 'defaults.ts'],
  retrieval: ['index', 'defaults.ts'],
  index: ['defaults.ts'],
  'defaults.ts': [],
};

/** The places that may import `vscode`: the editor glue. */
const VSCODE_IMPORTERS = ['vscode', 'extension.ts'];

/**
 * Imports the layer table forbids that are allowed for now, each with its reason: a file kept at an old path for a
 * file another branch is changing; the entry goes when that import names the new path.
 */
export const PENDING_IMPORTS: readonly { from: string; to: string; reason: string }[] = [];

/** Longest function, in lines (its first to its last). */
export const MAX_FUNCTION_LINES = 100;

/**
 * Functions allowed to be longer, each with its reason: a data table or an opcode or command dispatch, or (for now)
 * a function another branch is splitting, whose entry goes when that branch is merged (the test fails on an entry
 * that is no longer long).
 */
export const LONG_FUNCTION_EXCEPTIONS: readonly { file: string; name: string; reason: string }[] = [
  { file: 'convert/pickle.ts', name: 'readStateDictPickle', reason: 'the pickle opcode dispatch: one case an opcode' },
];

/** Source files by their path relative to src/, forward slashes. */
export type SourceFiles = ReadonlyMap<string, string>;

export function readSourceTree(root: string): SourceFiles {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.ts'))
        files.set(path.relative(root, full).split(path.sep).join('/'), readFileSync(full, 'utf8'));
    }
  };
  walk(root);
  return files;
}

/** The folder (or top-level file) a source file belongs to in the layer table. */
export function layerOf(file: string): string {
  const slash = file.indexOf('/');
  return slash < 0 ? file : file.slice(0, slash);
}

interface ImportEdge {
  from: string;
  /** The imported file, or the bare package name. */
  to: string;
  line: number;
}

/** Each tree's files parsed once: every check reads the same syntax trees. */
const parsed = new WeakMap<SourceFiles, Map<string, ts.SourceFile>>();

function parse(files: SourceFiles, file: string): ts.SourceFile {
  let trees = parsed.get(files);
  if (!trees) parsed.set(files, (trees = new Map()));
  let tree = trees.get(file);
  if (!tree) trees.set(file, (tree = ts.createSourceFile(file, files.get(file)!, ts.ScriptTarget.ES2022, true)));
  return tree;
}

/** Every import and re-export of every file (type-only ones too: a circle of types is still a circle). */
export function importsOf(files: SourceFiles): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of files.keys()) {
    const source = parse(files, file);
    const add = (specifier: string, node: ts.Node): void => {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      edges.push({
        from: file,
        to: specifier.startsWith('.') ? resolveRelative(files, file, specifier) : specifier,
        line,
      });
    };
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
        add((node.moduleSpecifier as ts.StringLiteral).text, node);
      } else if (
        ts.isCallExpression(node) &&
        (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
          (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
        node.arguments.length === 1 &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        add(node.arguments[0].text, node);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/** `./x` from `a/b.ts`: `a/x.ts`, or `a/x/index.ts`; a non-TypeScript file (JSON) keeps its name. */
function resolveRelative(files: SourceFiles, from: string, specifier: string): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`]) if (files.has(candidate)) return candidate;
  return base;
}

/** Import circles between files: each strongly connected group of two or more files, or a file importing itself. */
export function importCircles(files: SourceFiles): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of importsOf(files)) if (files.has(to)) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's strongly connected components.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || next.get(file)?.includes(file)) circles.push(group.sort());
  };
  for (const file of files.keys()) if (!index.has(file)) connect(file);
  return circles;
}

/** Imports between layers that the table does not allow, `vscode` outside the editor glue, and unknown layers. */
export function layerViolations(files: SourceFiles, layers = LAYERS, pending = PENDING_IMPORTS): string[] {
  const problems: string[] = [];
  for (const file of files.keys()) {
    if (!(layerOf(file) in layers)) problems.push(`src/${file}: its folder is not in the layer table`);
  }
  for (const { from, to, line } of importsOf(files)) {
    const where = `src/${from}:${line}`;
    if (to === 'vscode') {
      if (!VSCODE_IMPORTERS.includes(layerOf(from))) problems.push(`${where} imports vscode below src/vscode`);
      continue;
    }
    if (!files.has(to)) continue;
    const [a, b] = [layerOf(from), layerOf(to)];
    if (a === b || layers[a]?.includes(b)) continue;
    if (pending.some((p) => p.from === from && p.to === to)) continue;
    problems.push(`${where} imports src/${to}: ${a} may not import ${b}`);
  }
  return problems;
}

export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** Functions, methods, constructors and accessors longer than `max` lines (a nested one counts in its own right). */
export function longFunctions(files: SourceFiles, max = MAX_FUNCTION_LINES): LongFunction[] {
  const found: LongFunction[] = [];
  for (const file of files.keys()) {
    const source = parse(files, file);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > max) found.push({ file, name: nameOf(node), line: first + 1, lines: last - first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** A function's name, or the name of what holds it (`const f = () => …`, `{ run: () => … }`). */
function nameOf(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named && (ts.isIdentifier(named) || ts.isStringLiteral(named))) return named.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return '(anonymous)';
}

/** Long functions that are not listed exceptions. */
export function unexpectedLongFunctions(files: SourceFiles): LongFunction[] {
  return longFunctions(files).filter(
    (f) => !LONG_FUNCTION_EXCEPTIONS.some((e) => e.file === f.file && e.name === f.name),
  );
}

if (require.main === module) {
  const files = readSourceTree(path.resolve(__dirname, '../../../src'));
  const report = [
    ...importCircles(files).map((c) => `import circle: ${c.map((f) => `src/${f}`).join(' → ')}`),
    ...layerViolations(files),
    ...longFunctions(files).map((f) => {
      const listed = LONG_FUNCTION_EXCEPTIONS.find((e) => e.file === f.file && e.name === f.name);
      return `src/${f.file}:${f.line} ${f.name}: ${f.lines} lines${listed ? ` (listed: ${listed.reason})` : ''}`;
    }),
  ];
  process.stdout.write(report.length ? `${report.join('\n')}\n` : 'no circle, no upward import, no long function\n');
}
