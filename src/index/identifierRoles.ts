/**
 * How an identifier occurs in Python and Go code (the TS/JS rules live in lineIdentifiers.ts):
 * `declared` names need no prior knowledge; members, calls, constructions, types and references do.
 */
import type { Node } from 'web-tree-sitter';

export type IdentifierRole = 'declared' | 'member' | 'call' | 'new' | 'type' | 'reference';

/** Identifier node types of the Python and Go grammars. */
export const PYTHON_GO_IDENTIFIERS = new Set([
  'identifier',
  'field_identifier',
  'type_identifier',
  'package_identifier',
  'label_name',
]);

/** Python nodes that only ever hold binding targets (`a, b = ...`, `for k, v in ...`). */
const PYTHON_TARGET_PATTERNS = new Set([
  'pattern_list',
  'tuple_pattern',
  'list_pattern',
  'list_splat_pattern',
  'dictionary_splat_pattern',
  'parameters',
  'lambda_parameters',
  'dotted_name',
  'aliased_import',
  'global_statement',
  'nonlocal_statement',
]);

const field = (node: Node): string | null => {
  const parent = node.parent;
  if (!parent) return null;
  for (let i = 0; i < parent.childCount; i++) if (parent.child(i)?.equals(node)) return parent.fieldNameForChild(i);
  return null;
};

const isField = (parent: Node | null, name: string, node: Node): boolean =>
  parent?.childForFieldName(name)?.equals(node) ?? false;

export function pythonRole(node: Node, fieldName: string | null): IdentifierRole | undefined {
  const parent = node.parent;
  const type = parent?.type ?? '';
  if (fieldName === 'name' && (type === 'function_definition' || type === 'class_definition')) return 'declared';
  if (PYTHON_TARGET_PATTERNS.has(type)) {
    // A dotted name is a binding only inside an import (`import a.b`); elsewhere it is a decorator or type.
    if (type !== 'dotted_name') return 'declared';
    const holder = parent!.parent?.type ?? '';
    if (/import/.test(holder) || holder === 'aliased_import') return 'declared';
  }
  if (/import/.test(type)) return 'declared';
  if (fieldName === 'name' && (type === 'default_parameter' || type === 'typed_default_parameter')) return 'declared';
  if (type === 'typed_parameter' && !isField(parent, 'type', node)) return 'declared';
  if (fieldName === 'left' && (type === 'assignment' || type === 'for_statement' || type === 'for_in_clause')) {
    return 'declared';
  }
  if (fieldName === 'name' && type === 'named_expression') return 'declared';
  if (type === 'as_pattern_target' || (fieldName === 'alias' && type === 'as_pattern')) return 'declared';
  if (fieldName === 'name' && type === 'keyword_argument') return 'member';
  const target = fieldName === 'attribute' && type === 'attribute' ? parent! : node;
  const holder = target.parent;
  if (holder?.type === 'call' && isField(holder, 'function', target)) return /^[A-Z]/.test(node.text) ? 'new' : 'call';
  if (target !== node) return 'member';
  if (type === 'type' || holder?.parent?.type === 'type') return 'type';
  return 'reference';
}

/** Go declarations whose `name` field names what they declare. */
const GO_NAMED_DECLARATIONS = new Set([
  'function_declaration',
  'method_declaration',
  'type_spec',
  'type_alias',
  'parameter_declaration',
  'variadic_parameter_declaration',
  'var_spec',
  'const_spec',
  'field_declaration',
  'method_elem',
  'method_spec',
  'type_parameter_declaration',
  'import_spec',
]);

export function goRole(node: Node, fieldName: string | null): IdentifierRole | undefined {
  const parent = node.parent;
  const type = parent?.type ?? '';
  if (node.type === 'label_name') return type === 'labeled_statement' ? 'declared' : 'reference';
  if (fieldName === 'name' && GO_NAMED_DECLARATIONS.has(type)) return 'declared';
  if (type === 'package_clause') return 'declared';
  // `a, b := f()` and `for k, v := range m` declare; `a = f()` assigns what exists.
  if (type === 'expression_list') {
    const holder = parent!.parent;
    if ((holder?.type === 'short_var_declaration' || holder?.type === 'range_clause') && field(parent!) === 'left') {
      return 'declared';
    }
  }
  if (type === 'range_clause' && fieldName === 'left') return 'declared';
  const target = fieldName === 'field' && type === 'selector_expression' ? parent! : node;
  const holder = target.parent;
  if (holder?.type === 'call_expression' && isField(holder, 'function', target)) return 'call';
  if (target !== node) return 'member';
  if (type === 'composite_literal' && fieldName === 'type') return 'new';
  // A struct literal's key names a field of its type.
  if (node.type === 'field_identifier') return 'member';
  return node.type === 'type_identifier' ? 'type' : 'reference';
}
