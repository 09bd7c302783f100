/**
 * Every identifier of a parsed file with how it occurs: `declared` (the name of a declaration, a parameter, a
 * destructuring target, an object-literal key) or used (member, call, `new`, type, plain reference). The benchmark's
 * tasks and the fusion's calibration ask which used names a line needs from other files.
 */
import type { Node, Tree } from 'web-tree-sitter';
import {
  goRole,
  JAVA_IDENTIFIERS,
  javaRole,
  PYTHON_GO_IDENTIFIERS,
  pythonRole,
  RUST_IDENTIFIERS,
  rustRole,
  type IdentifierRole,
} from './identifierRoles';

export type { IdentifierRole };

export interface LineIdentifier {
  name: string;
  role: IdentifierRole;
}

/** Identifier node types of the TS/JS grammars. */
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

/** The identifier nodes and role rules of each language other than TS/JS. */
const ROLES: Record<string, { nodes: ReadonlySet<string>; role: typeof roleOf }> = {
  python: { nodes: PYTHON_GO_IDENTIFIERS, role: pythonRole },
  go: { nodes: PYTHON_GO_IDENTIFIERS, role: goRole },
  rust: { nodes: RUST_IDENTIFIERS, role: rustRole },
  java: { nodes: JAVA_IDENTIFIERS, role: javaRole },
};

export interface FileScan {
  /** Identifiers by zero-based row, in source order. */
  identifiers: Map<number, LineIdentifier[]>;
  /** Rows touched by a parse error, whose roles cannot be trusted. */
  errorRows: Set<number>;
}

/**
 * Every identifier of a tree (TS/JS, Python, Go, Rust, Java) with how it occurs: used (member, call, `new`, type, plain
 * reference) or `declared` (name of a declaration, parameter, destructuring target or object-literal key). With
 * `rows`, only those rows are scanned: subtrees that span none of them are skipped.
 */
export function scanIdentifiers(tree: Tree, language = 'typescript', rows?: ReadonlySet<number>): FileScan {
  const spans = rows && rowSpanTest(rows, tree.rootNode.endPosition.row);
  const { nodes, role } = ROLES[language] ?? { nodes: IDENTIFIER_NODES, role: roleOf };
  const identifiers = new Map<number, LineIdentifier[]>();
  const errorRows = new Set<number>();
  const cursor = tree.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (type === 'ERROR' || cursor.nodeIsMissing) {
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
      if ((!spans || spans(cursor.startPosition.row, cursor.endPosition.row)) && cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return { identifiers, errorRows };
      }
    }
  } finally {
    cursor.delete();
  }
}

/** Whether rows `from`..`to` hold one of `rows` (of a file of `last` + 1 rows), in constant time. */
function rowSpanTest(rows: ReadonlySet<number>, last: number): (from: number, to: number) => boolean {
  const before = new Int32Array(last + 2);
  for (let row = 0; row <= last; row++) before[row + 1] = before[row] + (rows.has(row) ? 1 : 0);
  return (from, to) => before[Math.min(to, last) + 1] - before[from] > 0;
}
