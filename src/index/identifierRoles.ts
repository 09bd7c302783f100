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

/** Identifier node types of the Rust grammar. */
export const RUST_IDENTIFIERS = new Set([
  'identifier',
  'field_identifier',
  'type_identifier',
  'shorthand_field_identifier',
]);

/** Rust items and members whose `name` field names what they declare. */
const RUST_NAMED_DECLARATIONS = new Set([
  'function_item',
  'function_signature_item',
  'struct_item',
  'enum_item',
  'union_item',
  'trait_item',
  'type_item',
  'mod_item',
  'const_item',
  'static_item',
  'field_declaration',
  'enum_variant',
  'macro_definition',
  'associated_type',
  'constrained_type_parameter',
]);

/** Rust nodes whose identifiers are bound by them: patterns, parameters, type parameters, `use` lists. */
const RUST_BINDINGS = new Set([
  'tuple_pattern',
  'slice_pattern',
  'ref_pattern',
  'mut_pattern',
  'captured_pattern',
  'or_pattern',
  'closure_parameters',
  'type_parameters',
  'use_list',
  'use_as_clause',
  'use_wildcard',
]);

/** Whether `node` sits where a Rust pattern binds names: a `let`, a parameter, a `for`, a match arm, a closure. */
function inRustPattern(node: Node): boolean {
  for (let n: Node | null = node; n; n = n.parent) {
    const parent = n.parent;
    if (!parent) return false;
    if (RUST_BINDINGS.has(parent.type)) return parent.type !== 'use_as_clause' || isField(parent, 'alias', n);
    if (/_pattern$/.test(parent.type) || parent.type === 'match_pattern' || parent.type === 'field_pattern') continue;
    const f = field(n);
    return f === 'pattern' && /^(let_declaration|parameter|for_expression|let_condition|match_arm)$/.test(parent.type);
  }
  return false;
}

export function rustRole(node: Node, fieldName: string | null): IdentifierRole | undefined {
  const parent = node.parent;
  const type = parent?.type ?? '';
  // A lifetime (`'a`, `'static`, `'_`) names no declaration of the repository.
  if (type === 'lifetime') return undefined;
  if (fieldName === 'name' && RUST_NAMED_DECLARATIONS.has(type)) return 'declared';
  // A `use` declaration binds every name it lists; `mod x;` is declared above.
  for (let n: Node | null = parent; n; n = n.parent) if (n.type === 'use_declaration') return 'declared';
  // A struct or variant named in a pattern (`Foo { a, .. }`, `Some(x)`) is used; the names it binds are declared.
  if (node.type === 'shorthand_field_identifier') return 'declared';
  const isPatternType = fieldName === 'type' || (type === 'scoped_identifier' && field(parent!) === 'type');
  if (!isPatternType && node.type === 'identifier' && inRustPattern(node)) return 'declared';
  if (fieldName === 'field' && type === 'field_expression') {
    const holder = parent!.parent;
    const callee = holder?.type === 'generic_function' ? holder : parent!;
    return callee.parent?.type === 'call_expression' && isField(callee.parent, 'function', callee) ? 'call' : 'member';
  }
  // `Foo { bar: 1 }`: bar names a field of Foo.
  if (node.type === 'field_identifier') return 'member';
  if (type === 'struct_expression' && fieldName === 'name') return 'new';
  // `Type::new(…)`, `module::f(…)`: the last segment is called, the path before it is a type or a module.
  const target = fieldName === 'name' && type === 'scoped_identifier' ? parent! : node;
  const callee = target.parent?.type === 'generic_function' ? target.parent : target;
  // A tuple struct or variant called (`Wrapper(x)`) is constructed.
  if (callee.parent?.type === 'call_expression' && isField(callee.parent, 'function', callee))
    return /^[A-Z]/.test(node.text) ? 'new' : 'call';
  if (node.type === 'type_identifier' || fieldName === 'path') return 'type';
  return 'reference';
}

/** Identifier node types of the Java grammar. */
export const JAVA_IDENTIFIERS = new Set(['identifier', 'type_identifier']);

/** Java declarations whose `name` field names what they declare. */
const JAVA_NAMED_DECLARATIONS = new Set([
  'class_declaration',
  'interface_declaration',
  'enum_declaration',
  'record_declaration',
  'annotation_type_declaration',
  'method_declaration',
  'constructor_declaration',
  'compact_constructor_declaration',
  'annotation_type_element_declaration',
  'variable_declarator',
  'formal_parameter',
  'spread_parameter',
  'catch_formal_parameter',
  'enhanced_for_statement',
  'enum_constant',
  'resource',
]);

export function javaRole(node: Node, fieldName: string | null): IdentifierRole | undefined {
  const parent = node.parent;
  const type = parent?.type ?? '';
  if (fieldName === 'name' && JAVA_NAMED_DECLARATIONS.has(type)) return 'declared';
  if (type === 'type_parameter' || type === 'inferred_parameters') return 'declared';
  if (type === 'lambda_expression' && fieldName === 'parameters') return 'declared';
  // A varargs parameter's name sits in its declarator.
  if (fieldName === 'name' && type === 'variable_declarator') return 'declared';
  for (let n: Node | null = parent; n; n = n.parent)
    if (n.type === 'import_declaration' || n.type === 'package_declaration') return 'declared';
  if (type === 'method_invocation' && fieldName === 'name') return 'call';
  if (type === 'field_access' && fieldName === 'field') return 'member';
  // `@Override`, `@Inject`: an annotation names a type.
  if (fieldName === 'name' && (type === 'marker_annotation' || type === 'annotation')) return 'type';
  if (
    type === 'object_creation_expression' ||
    (type === 'generic_type' && parent!.parent?.type === 'object_creation_expression')
  )
    return 'new';
  if (node.type === 'type_identifier' || type === 'scoped_type_identifier') return 'type';
  return 'reference';
}
