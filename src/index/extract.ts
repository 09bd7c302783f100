import type { Node, Tree } from 'web-tree-sitter';
import type { LanguageSpec } from './languages';
import { extractImports } from './imports';
import {
  chunkId,
  type Chunk,
  type ChunkKind,
  type FileFacts,
  type SymbolInfo,
  type SymbolKind,
  type TypeAnnotation,
} from './types';
import { ownString, ownStrings } from './ownStrings';
import { lineWindows } from './windows';

/** Longest signature kept for a symbol; longer headers are cut at a line end. */
const MAX_SIGNATURE_CHARS = 300;
/** Top-level statements are grouped into chunks of at most this many lines. */
const STATEMENT_GROUP_LINES = 40;
const SHORT_TYPE_LINES = 15;
const MAX_MEMBER_CHARS = 90;
const MODIFIERS = /^(?:(?:public|private|protected|readonly|static|override|declare|abstract)\s+)+/;

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);

interface Walk {
  spec: LanguageSpec;
  path: string;
  lines: string[];
  symbols: SymbolInfo[];
  chunks: Chunk[];
  types: TypeAnnotation[];
}

/** A declared name; `#x` is a private class member in JavaScript. */
const IDENTIFIER = /^#?[A-Za-z_$][\w$]*$/;

function nameOf(node: Node, nameField: string): string | undefined {
  const nameNode = nameField ? node.childForFieldName(nameField) : node.firstNamedChild;
  if (!nameNode) return undefined;
  // Java/Go declarators wrap the name (`int x = 1` → variable_declarator name: x).
  const target = nameNode.childForFieldName('name') ?? nameNode;
  if (IDENTIFIER.test(target.text)) return target.text;
  // Generic names (`impl Foo<T>`) are named by their first identifier.
  const first = target.descendantsOfType(['type_identifier', 'identifier'])[0];
  return first && IDENTIFIER.test(first.text) ? first.text : undefined;
}

function bodyOf(node: Node, bodyField: string | undefined): Node | null {
  return node.childForFieldName(bodyField ?? 'body');
}

/** Wrappers whose text belongs to the declaration inside (`export`, decorators, `const`). */
const ATTACHED_WRAPPERS = new Set([
  'export_statement',
  'decorated_definition',
  'lexical_declaration',
  'variable_declaration',
  'expression_statement',
  'ambient_declaration',
  'type_declaration',
  'var_declaration',
  'const_declaration',
]);

/** The declaration's header: everything before its body, or its first lines when it has none. */
function signatureOf(node: Node, body: Node | null): string {
  const text =
    body && body.startIndex > node.startIndex ? node.text.slice(0, body.startIndex - node.startIndex) : node.text;
  let header = text.trimEnd();
  if (header.length > MAX_SIGNATURE_CHARS) {
    const cut = header.lastIndexOf('\n', MAX_SIGNATURE_CHARS);
    header = header.slice(0, cut > 0 ? cut : MAX_SIGNATURE_CHARS);
  }
  return header.replace(/[\s{(=:]+$/, (m) => (m.includes('(') ? m : ''));
}

function isExported(outer: Node, spec: LanguageSpec, name: string): boolean {
  if (outer.type === 'export_statement') return true;
  if (spec.id === 'go') return /^[A-Z]/.test(name);
  if (spec.id === 'python') return !name.startsWith('_');
  const head = outer.text.slice(0, 40);
  return /^(pub\b|public\b)/.test(head);
}

function typeNamesIn(typeNode: Node, spec: LanguageSpec): string[] {
  const names: string[] = [];
  const visit = (node: Node): void => {
    if (spec.typeNameNodes.has(node.type)) {
      if (!names.includes(node.text)) names.push(node.text);
      return;
    }
    for (const child of node.namedChildren) if (child) visit(child);
  };
  visit(typeNode);
  return names;
}

/** Records the written type of `node`'s name, or of `given` (the name of a declaration that has none of its own). */
function recordTyped(walk: Walk, node: Node, container: string | undefined, given?: string): void {
  const typed = walk.spec.typed[node.type];
  if (!typed) return;
  const typeNode = node.childForFieldName(typed.typeField);
  if (!typeNode) return;
  // `self.settings: Settings = …` annotates the attribute, not `self`.
  const target = typed.nameField ? node.childForFieldName(typed.nameField) : null;
  const name = given ?? (target?.type === 'attribute' ? selfAttribute(target) : nameOf(node, typed.nameField));
  if (!name || name === walk.spec.blankIdentifier) return;
  const typeNames = typeNamesIn(typeNode, walk.spec);
  if (typeNames.length) addType(walk, { name, typeNames, container, line: node.startPosition.row });
}

/** `x` of Python's `self.x`; undefined for any other attribute target. */
function selfAttribute(target: Node): string | undefined {
  const name = target.childForFieldName('attribute')?.text;
  return target.childForFieldName('object')?.text === 'self' && name && IDENTIFIER.test(name) ? name : undefined;
}

function addType(walk: Walk, annotation: TypeAnnotation): void {
  const last = walk.types[walk.types.length - 1];
  if (last && last.name === annotation.name && last.line === annotation.line) return;
  walk.types.push(annotation);
}

/** `x = new Foo()` / `self.x = Foo()` / `this.x = new Foo()`: the constructed class is x's type. */
function recordConstruction(walk: Walk, target: Node | null, value: Node | null, container: string | undefined): void {
  if (!target || !value) return;
  const field = walk.spec.constructs[value.type];
  if (!field) return;
  const ctor = value.childForFieldName(field);
  const className = ctor?.text.split('.').pop();
  if (!className || !/^[A-Z][\w$]*$/.test(className)) return;
  const name = (
    target.childForFieldName('property') ??
    target.childForFieldName('attribute') ??
    target.childForFieldName('field') ??
    target
  ).text;
  if (IDENTIFIER.test(name)) addType(walk, { name, typeNames: [className], container, line: target.startPosition.row });
}

/** Parameters and member assignments inside a header or constructor: where injected types are written. */
function scanForTypes(walk: Walk, node: Node, container: string | undefined, depth: number): void {
  if (depth > 6) return;
  recordTyped(walk, node, container);
  if (node.type === 'assignment_expression' || node.type === 'assignment') {
    recordConstruction(walk, node.childForFieldName('left'), node.childForFieldName('right'), container);
  }
  for (const child of node.namedChildren) if (child) scanForTypes(walk, child, container, depth + 1);
}

function addChunk(
  walk: Walk,
  kind: ChunkKind,
  startRow: number,
  endRow: number,
  text: string,
  symbols: string[],
): void {
  if (!text.trim()) return;
  const range = { start: startRow, end: endRow };
  const id = chunkId(walk.path, range, kind);
  // Error recovery can yield two declarations over the same rows: one chunk, both names.
  const same = walk.chunks.find((c) => c.id === id);
  if (same) {
    same.symbols.push(...symbols.filter((s) => !same.symbols.includes(s)));
    return;
  }
  walk.chunks.push({
    id,
    path: walk.path,
    kind,
    range,
    text,
    symbols,
  });
}

function linesOf(walk: Walk, node: Node): string {
  return walk.lines.slice(node.startPosition.row, node.endPosition.row + 1).join('\n');
}

/** One line of an outline: a declared member, or an attribute the class's body does not declare. */
interface OutlineEntry {
  name: string;
  signature: string;
  /** The row whose indentation the line takes. */
  indentRow: number;
}

/** Instance attributes listed per class at most: an outline is focused to its likeliest members anyway. */
const MAX_UNDECLARED_ATTRIBUTES = 64;

/**
 * The attributes a class has without declaring them in its body: TypeScript's parameter properties
 * (`constructor(private readonly em: EntityManager)`), shown as written, and those its methods assign
 * (`self.x = …`, `this.x = …`), shown by their first assignment's line — in Python and JavaScript most of a class's
 * vocabulary. They are listed in the outline only; the symbol table keeps declarations.
 */
function undeclaredAttributes(walk: Walk, body: Node, declared: readonly SymbolInfo[]): OutlineEntry[] {
  const { selfAssignment: how, parameterProperties: params } = walk.spec;
  if ((!how && !params) || declared.length === 0) return [];
  const seen = new Set(declared.map((m) => m.name));
  const indentRow = declared[0].range.start;
  const entries: OutlineEntry[] = [];
  const add = (name: string | undefined, signature: string): void => {
    if (!name || !IDENTIFIER.test(name) || seen.has(name) || entries.length === MAX_UNDECLARED_ATTRIBUTES) return;
    seen.add(name);
    entries.push({ name, signature, indentRow });
  };
  if (params) {
    for (const node of body.descendantsOfType(params.nodes)) {
      if (node?.children.some((c) => c && params.modifiers.includes(c.type)))
        add(node.childForFieldName('pattern')?.text, node.text);
    }
  }
  if (how) {
    for (const node of body.descendantsOfType(how.node)) {
      const target = node?.childForFieldName('left');
      if (node && target?.type === how.target && target.childForFieldName(how.object)?.text === how.receiver)
        add(target.childForFieldName(how.property)?.text, walk.lines[node.startPosition.row].trim());
    }
  }
  return entries;
}

/** A member's signature on one line, cut at MAX_MEMBER_CHARS. */
function memberLine(signature: string): string {
  const sig = signature.replace(/\s*\n\s*/g, ' ');
  return sig.length > MAX_MEMBER_CHARS ? `${sig.slice(0, MAX_MEMBER_CHARS)}…` : sig;
}

/** A class outline: its header, one line a member (`entries`), no bodies. Short or body-less types stay whole. */
function outlineOf(walk: Walk, outer: Node, body: Node, members: SymbolInfo[], entries: OutlineEntry[]): string {
  const full = linesOf(walk, outer).split('\n');
  const hasBodies = members.some((m) => m.kind === 'method' && m.range.end - m.range.start > 1);
  // Short body-less types (interfaces, enums) read best as written; long ones lose comments and bodies.
  if (!hasBodies && full.length <= SHORT_TYPE_LINES) return full.join('\n');
  const indent = (row: number): string => /^\s*/.exec(walk.lines[row] ?? '')![0];
  const opener = walk.spec.blockClose ? ' {' : '';
  const lines = [
    outer.text
      .slice(0, body.startIndex - outer.startIndex)
      .trimEnd()
      .replace(/\s*\n\s*/g, ' ') + opener,
  ];
  for (const entry of entries) {
    // One line a member, so that a budget holds as many member names as possible.
    // Modifiers cost characters and rarely decide the next line; the budget is better spent on members.
    lines.push(indent(entry.indentRow) + memberLine(entry.signature.replace(MODIFIERS, '')));
  }
  if (walk.spec.blockClose) lines.push(indent(outer.startPosition.row) + walk.spec.blockClose);
  // One line a member, whatever the count: retrieval focuses an oversized outline on the members it needs.
  return lines.join('\n');
}

/** Visit one declaration; returns the symbol it declared, if any. */
function visitDecl(walk: Walk, node: Node, outer: Node, container: string | undefined): SymbolInfo | undefined {
  const spec = walk.spec;
  const decl = spec.decls[node.type];
  const embeddedType = decl.embeddedField && !node.childForFieldName(decl.nameField ?? 'name');
  // An embedded field is named by its type: `*pkg.Base` declares the field `Base`.
  const name = embeddedType
    ? typeNamesIn(node.childForFieldName(decl.embeddedField!)!, spec)[0]
    : nameOf(node, decl.nameField ?? 'name');
  if (!name || name === spec.blankIdentifier) return undefined;
  // Python's assignment names its value `right`.
  const value =
    decl.kind === 'variable' || decl.kind === 'field'
      ? (node.childForFieldName('value') ?? node.childForFieldName('right'))
      : null;
  const functionValue = value && FUNCTION_VALUES.has(value.type) ? value : null;
  let kind: SymbolKind = functionValue ? 'function' : decl.kind;
  // Go methods are declared at top level; their receiver type is their container.
  const receiver = node.childForFieldName('receiver');
  if (receiver) container = typeNamesIn(receiver, spec)[0] ?? container;
  if (kind === 'function' && container) kind = 'method';
  const body = functionValue ? functionValue.childForFieldName('body') : bodyOf(node, decl.bodyField);
  const symbol: SymbolInfo = {
    name,
    kind,
    container,
    range: { start: outer.startPosition.row, end: outer.endPosition.row + 1 },
    signature: signatureOf(outer, kind === 'variable' || kind === 'field' || kind === 'type' ? null : body),
    exported: isExported(outer, spec, name),
  };
  if (embeddedType) symbol.embedded = true;
  walk.symbols.push(symbol);
  // A Go method's receiver types the name its body uses for it (`func (app *App)` → app: App).
  for (const field of ['receiver', 'parameters']) {
    const header = node.childForFieldName(field);
    if (header) scanForTypes(walk, header, container, 0);
  }
  recordTyped(walk, node, container, embeddedType ? name : undefined);
  if (value) recordConstruction(walk, node.childForFieldName(decl.nameField ?? 'name'), value, container);

  if (decl.container && body) {
    const members: SymbolInfo[] = [];
    walkChildren(walk, body, name, members);
    const entries = members.map((m) => ({ name: m.name, signature: m.signature, indentRow: m.range.start }));
    entries.push(...undeclaredAttributes(walk, body, members));
    addChunk(walk, 'outline', symbol.range.start, symbol.range.end, outlineOf(walk, outer, body, members, entries), [
      name,
      ...entries.map((e) => e.name),
    ]);
  } else if ((kind === 'function' || kind === 'method') && body) {
    if (name === 'constructor' || name === '__init__') scanForTypes(walk, body, container, 0);
    addChunk(walk, kind, symbol.range.start, symbol.range.end, linesOf(walk, outer), [name]);
  }
  return symbol;
}

/** Walks declarations below `parent`, collecting direct members (for outlines) into `members`. */
function walkChildren(
  walk: Walk,
  parent: Node,
  container: string | undefined,
  members: SymbolInfo[],
  outer?: Node,
): void {
  for (const child of parent.namedChildren) {
    if (!child) continue;
    if (walk.spec.decls[child.type]) {
      const symbol = visitDecl(walk, child, outer ?? child, container);
      if (symbol) members.push(symbol);
    } else if (walk.spec.wrappers.has(child.type) || child.type === 'ERROR') {
      // ERROR nodes hold whatever tree-sitter recovered around a syntax error: still worth indexing.
      const attached = ATTACHED_WRAPPERS.has(child.type) ? (outer ?? child) : undefined;
      walkChildren(walk, child, container, members, attached);
    }
  }
}

/** Top-level statements that are not declarations with chunks of their own, grouped by adjacency. */
function statementGroups(walk: Walk, root: Node): void {
  const owned = walk.chunks.map((c) => c.range);
  let groupStart = -1;
  let groupEnd = -1;
  const flush = (): void => {
    if (groupStart >= 0) {
      const text = walk.lines.slice(groupStart, groupEnd).join('\n');
      const names = walk.symbols
        .filter((s) => s.range.start >= groupStart && s.range.start < groupEnd)
        .map((s) => s.name);
      addChunk(walk, 'statements', groupStart, groupEnd, text, names);
    }
    groupStart = -1;
  };
  for (const child of root.namedChildren) {
    if (!child || /import|comment|package_clause|use_declaration/.test(child.type)) continue;
    const start = child.startPosition.row;
    const end = child.endPosition.row + 1;
    if (owned.some((r) => r.start <= start && r.end >= end)) {
      flush();
      continue;
    }
    if (groupStart >= 0 && end - groupStart > STATEMENT_GROUP_LINES) flush();
    if (groupStart < 0) groupStart = start;
    groupEnd = end;
  }
  flush();
}

/** A Go method's receiver, as its signature opens: `func (app *App) `. */
const RECEIVER = /^func\s*\([^)]*\)\s*/;

/**
 * Go declares a type's methods beside it, not inside it: the outline of each type the file declares methods for is
 * written one member a line — its fields, then those methods without their receiver — so that it lists what a
 * value of the type can do and can be focused like any other outline.
 */
function addReceiverMethods(walk: Walk): void {
  const members = new Map<string, SymbolInfo[]>();
  for (const symbol of walk.symbols) {
    if (symbol.container) members.set(symbol.container, [...(members.get(symbol.container) ?? []), symbol]);
  }
  const isReceiverMethod = (m: SymbolInfo): boolean => m.kind === 'method' && RECEIVER.test(m.signature);
  for (const chunk of walk.chunks) {
    const own = chunk.kind === 'outline' ? (members.get(chunk.symbols[0]) ?? []) : [];
    const methods = own.filter(isReceiverMethod);
    if (methods.length === 0) continue;
    const listed = [...own.filter((m) => !isReceiverMethod(m)), ...methods];
    const lines = listed.map((m) => `\t${memberLine(m.signature.replace(RECEIVER, ''))}`);
    chunk.text = [chunk.text.split('\n', 1)[0], ...lines, walk.spec.blockClose].join('\n');
    chunk.symbols = [chunk.symbols[0], ...listed.map((m) => m.name)];
  }
}

/** A Rust `impl` block's header: `impl<T> Foo<T>`, `unsafe impl Send for Foo`. */
const IMPL_HEADER = /^\s*(?:unsafe\s+)?impl\b/;

/**
 * Rust declares a type's methods in impl blocks beside it, often several (one per concern, one per trait): the
 * outline of a struct or enum lists, after its own fields or variants, the methods its file's impl blocks declare
 * for it, one a line, so that one outline says what a value of the type can do and can be focused like any other.
 */
function addImplMethods(walk: Walk): void {
  for (const type of walk.symbols) {
    if (type.container || (type.kind !== 'class' && type.kind !== 'enum') || IMPL_HEADER.test(type.signature)) continue;
    const chunk = walk.chunks.find(
      (c) => c.kind === 'outline' && c.range.start === type.range.start && c.symbols[0] === type.name,
    );
    const methods = walk.symbols.filter(
      (m) =>
        m.container === type.name &&
        m.kind === 'method' &&
        (m.range.start < type.range.start || m.range.start >= type.range.end),
    );
    if (!chunk || methods.length === 0) continue;
    const indent = /^\s*/.exec(walk.lines[type.range.start] ?? '')![0];
    const lines = chunk.text.split('\n');
    // One line a member (how retrieval focuses an outline): a short type kept as written is rewritten so.
    const fields = walk.symbols.filter((f) => f.container === type.name && !methods.includes(f));
    const oneLineEach = lines.length === chunk.symbols.length + 1;
    if (!oneLineEach && lines[lines.length - 1].trim() === walk.spec.blockClose) {
      lines.splice(1, lines.length, ...fields.map((f) => `${indent}    ${memberLine(f.signature)}`), '}');
      chunk.symbols = [type.name, ...fields.map((f) => f.name)];
    }
    const close = lines[lines.length - 1].trim() === walk.spec.blockClose ? lines.pop()! : undefined;
    lines.push(...methods.map((m) => `${indent}    ${memberLine(m.signature)}`));
    if (close !== undefined) lines.push(close);
    chunk.text = lines.join('\n');
    chunk.symbols.push(...methods.map((m) => m.name));
  }
}

/** Everything the index keeps about one parsed file. */
export function extractFacts(filePath: string, spec: LanguageSpec, text: string, tree: Tree): FileFacts {
  const walk: Walk = { spec, path: filePath, lines: text.split('\n'), symbols: [], chunks: [], types: [] };
  const root = tree.rootNode;
  walkChildren(walk, root, undefined, []);
  if (spec.receiverMethods) addReceiverMethods(walk);
  if (spec.implMethods) addImplMethods(walk);
  statementGroups(walk, root);
  if (walk.chunks.length === 0) walk.chunks.push(...lineWindows(filePath, text));
  const facts: FileFacts = {
    path: filePath,
    language: spec.id,
    symbols: walk.symbols,
    chunks: walk.chunks,
    imports: extractImports(spec, root),
    types: walk.types,
    hasErrors: root.hasError,
  };
  const packageName = root.namedChildren.find((c) => c?.type === 'package_clause')?.firstNamedChild?.text;
  if (packageName) facts.package = packageName;
  // Chunk texts go to disk whole; what stays in memory must not hold the file's text.
  ownStrings([facts.symbols, facts.imports, facts.types, facts.chunks.map((c) => c.symbols)]);
  facts.package &&= ownString(facts.package);
  return facts;
}

/** Facts for a file without a grammar: line windows only. */
export function textFacts(filePath: string, text: string): FileFacts {
  return {
    path: filePath,
    language: 'text',
    symbols: [],
    chunks: lineWindows(filePath, text),
    imports: [],
    types: [],
    hasErrors: false,
  };
}
