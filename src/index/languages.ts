import type { LanguageId, SymbolKind } from './types';

/** How a declaration node becomes a symbol. */
export interface DeclSpec {
  kind: SymbolKind;
  /** Members inside its body are indexed with this symbol as container; its chunk is an outline. */
  container?: boolean;
  /** Field holding the name when it is not `name` (Rust `impl Foo` → `type`). */
  nameField?: string;
  /** Field holding the members when it is not `body` (Go `type X struct{…}` → `type`). */
  bodyField?: string;
  /** Field whose type names a declaration that has no name of its own (Go's embedded `struct { Base }` → `type`). */
  embeddedField?: string;
}

/** A node that declares something with a written type: `field: Type`, `param: Type`. */
export interface TypedSpec {
  nameField: string;
  typeField: string;
}

export interface LanguageSpec {
  id: LanguageId;
  /** File name in tree-sitter-wasms' `out/` folder; absent for plain text. */
  wasm?: string;
  extensions: string[];
  lineComment: string;
  decls: Record<string, DeclSpec>;
  /** Nodes that only wrap declarations (export, decorators, bodies of classes); searched through. */
  wrappers: Set<string>;
  /** Declarations that carry a written type, searched in headers and class bodies. */
  typed: Record<string, TypedSpec>;
  /** Node types that hold a type's name inside a type annotation. */
  typeNameNodes: Set<string>;
  /** Nodes that construct an instance (`new Foo()`), field holding the class name. */
  constructs: Record<string, string>;
  /** Closing line of a block for outlines ('' for indentation-scoped languages). */
  blockClose: string;
  /**
   * How a method assigns an instance attribute (`self.x = …`, `this.x = …`), where classes need not declare their
   * attributes: the assignment node, its target's node type and fields, and the receiver's text.
   */
  selfAssignment?: { node: string; target: string; object: string; property: string; receiver: string };
  /** Parameter nodes that declare an attribute when a child is one of `modifiers` (TypeScript's parameter properties). */
  parameterProperties?: { nodes: string[]; modifiers: string[] };
  /** Methods are declared outside their type, with a receiver (Go): outlines list them from the file. */
  receiverMethods?: boolean;
  /** Methods are declared in impl blocks apart from their type (Rust): a type's outline lists its file's. */
  implMethods?: boolean;
  /** A name that declares nothing (Go's blank identifier `_`): never a symbol or a typed name. */
  blankIdentifier?: string;
}

const tsDecls: Record<string, DeclSpec> = {
  function_declaration: { kind: 'function' },
  generator_function_declaration: { kind: 'function' },
  // Only reached through wrappers and error recovery, where a declaration may be parsed as an expression.
  function_expression: { kind: 'function' },
  function_signature: { kind: 'function' },
  class_declaration: { kind: 'class', container: true },
  abstract_class_declaration: { kind: 'class', container: true },
  class: { kind: 'class', container: true },
  interface_declaration: { kind: 'interface', container: true },
  type_alias_declaration: { kind: 'type' },
  enum_declaration: { kind: 'enum', container: true },
  internal_module: { kind: 'namespace', container: true },
  module: { kind: 'namespace', container: true },
  method_definition: { kind: 'method' },
  method_signature: { kind: 'method' },
  abstract_method_signature: { kind: 'method' },
  public_field_definition: { kind: 'field' },
  field_definition: { kind: 'field' },
  property_signature: { kind: 'field' },
  variable_declarator: { kind: 'variable' },
};

const tsShared = {
  lineComment: '//',
  decls: tsDecls,
  wrappers: new Set([
    'program',
    'export_statement',
    'lexical_declaration',
    'variable_declaration',
    'class_body',
    'interface_body',
    'object_type',
    'enum_body',
    'statement_block',
    'expression_statement',
    'ambient_declaration',
    'declaration',
  ]),
  typed: {
    public_field_definition: { nameField: 'name', typeField: 'type' },
    field_definition: { nameField: 'property', typeField: 'type' },
    property_signature: { nameField: 'name', typeField: 'type' },
    required_parameter: { nameField: 'pattern', typeField: 'type' },
    optional_parameter: { nameField: 'pattern', typeField: 'type' },
    variable_declarator: { nameField: 'name', typeField: 'type' },
  },
  typeNameNodes: new Set(['type_identifier', 'identifier']),
  constructs: { new_expression: 'constructor' },
  blockClose: '}',
};

const tsParameterProperties = {
  nodes: ['required_parameter', 'optional_parameter'],
  modifiers: ['accessibility_modifier', 'readonly'],
};

const SPECS: LanguageSpec[] = [
  {
    id: 'typescript',
    wasm: 'tree-sitter-typescript.wasm',
    extensions: ['.ts', '.mts', '.cts'],
    ...tsShared,
    parameterProperties: tsParameterProperties,
  },
  {
    id: 'tsx',
    wasm: 'tree-sitter-tsx.wasm',
    extensions: ['.tsx'],
    ...tsShared,
    parameterProperties: tsParameterProperties,
  },
  {
    id: 'javascript',
    wasm: 'tree-sitter-javascript.wasm',
    extensions: ['.js', '.jsx', '.mjs', '.cjs'],
    ...tsShared,
    selfAssignment: {
      node: 'assignment_expression',
      target: 'member_expression',
      object: 'object',
      property: 'property',
      receiver: 'this',
    },
  },
  {
    id: 'python',
    wasm: 'tree-sitter-python.wasm',
    extensions: ['.py', '.pyi'],
    lineComment: '#',
    decls: {
      function_definition: { kind: 'function' },
      class_definition: { kind: 'class', container: true },
      assignment: { kind: 'variable', nameField: 'left' },
    },
    wrappers: new Set(['module', 'decorated_definition', 'block', 'expression_statement']),
    typed: {
      typed_parameter: { nameField: '', typeField: 'type' },
      typed_default_parameter: { nameField: 'name', typeField: 'type' },
      assignment: { nameField: 'left', typeField: 'type' },
    },
    typeNameNodes: new Set(['identifier']),
    constructs: { call: 'function' },
    blockClose: '',
    selfAssignment: {
      node: 'assignment',
      target: 'attribute',
      object: 'object',
      property: 'attribute',
      receiver: 'self',
    },
  },
  {
    id: 'go',
    wasm: 'tree-sitter-go.wasm',
    extensions: ['.go'],
    lineComment: '//',
    decls: {
      function_declaration: { kind: 'function' },
      method_declaration: { kind: 'method' },
      type_spec: { kind: 'type', container: true, bodyField: 'type' },
      method_spec: { kind: 'method' },
      method_elem: { kind: 'method' },
      field_declaration: { kind: 'field', embeddedField: 'type' },
      var_spec: { kind: 'variable' },
      const_spec: { kind: 'variable' },
    },
    wrappers: new Set([
      'source_file',
      'type_declaration',
      'struct_type',
      'interface_type',
      'field_declaration_list',
      'var_declaration',
      'const_declaration',
    ]),
    typed: {
      field_declaration: { nameField: 'name', typeField: 'type' },
      parameter_declaration: { nameField: 'name', typeField: 'type' },
      var_spec: { nameField: 'name', typeField: 'type' },
    },
    typeNameNodes: new Set(['type_identifier']),
    constructs: { composite_literal: 'type' },
    blockClose: '}',
    receiverMethods: true,
    blankIdentifier: '_',
  },
  {
    id: 'rust',
    wasm: 'tree-sitter-rust.wasm',
    extensions: ['.rs'],
    lineComment: '//',
    decls: {
      function_item: { kind: 'function' },
      function_signature_item: { kind: 'method' },
      struct_item: { kind: 'class', container: true },
      enum_item: { kind: 'enum', container: true },
      trait_item: { kind: 'interface', container: true },
      impl_item: { kind: 'class', container: true, nameField: 'type' },
      type_item: { kind: 'type' },
      mod_item: { kind: 'module', container: true },
      const_item: { kind: 'variable' },
      static_item: { kind: 'variable' },
      field_declaration: { kind: 'field' },
      // Listed in the enum's outline, as a class's fields are.
      enum_variant: { kind: 'field' },
    },
    wrappers: new Set(['source_file', 'declaration_list', 'field_declaration_list', 'enum_variant_list']),
    typed: {
      field_declaration: { nameField: 'name', typeField: 'type' },
      parameter: { nameField: 'pattern', typeField: 'type' },
      let_declaration: { nameField: 'pattern', typeField: 'type' },
    },
    typeNameNodes: new Set(['type_identifier']),
    constructs: { struct_expression: 'name' },
    blockClose: '}',
    implMethods: true,
  },
  {
    id: 'java',
    wasm: 'tree-sitter-java.wasm',
    extensions: ['.java'],
    lineComment: '//',
    decls: {
      class_declaration: { kind: 'class', container: true },
      interface_declaration: { kind: 'interface', container: true },
      enum_declaration: { kind: 'enum', container: true },
      record_declaration: { kind: 'class', container: true },
      method_declaration: { kind: 'method' },
      constructor_declaration: { kind: 'method' },
      field_declaration: { kind: 'field', nameField: 'declarator' },
      // Listed in the enum's outline, as a class's fields are.
      enum_constant: { kind: 'field' },
    },
    wrappers: new Set(['program', 'class_body', 'interface_body', 'enum_body', 'enum_body_declarations']),
    typed: {
      field_declaration: { nameField: 'declarator', typeField: 'type' },
      formal_parameter: { nameField: 'name', typeField: 'type' },
      local_variable_declaration: { nameField: 'declarator', typeField: 'type' },
    },
    typeNameNodes: new Set(['type_identifier']),
    constructs: { object_creation_expression: 'type' },
    blockClose: '}',
  },
];

export const TEXT_SPEC: LanguageSpec = {
  id: 'text',
  extensions: [],
  lineComment: '#',
  decls: {},
  wrappers: new Set(),
  typed: {},
  typeNameNodes: new Set(),
  constructs: {},
  blockClose: '',
};

const byExtension = new Map<string, LanguageSpec>();
for (const spec of SPECS) for (const ext of spec.extensions) byExtension.set(ext, spec);

/**
 * Code outside the parsed languages, indexed as line windows. Prose and configuration (Markdown, YAML, TOML,
 * JSON) are left out: they crowd code out of lexical results and rarely hold what a line of code needs.
 */
const TEXT_EXTENSIONS = new Set([
  '.c',
  '.h',
  '.cc',
  '.cpp',
  '.hpp',
  '.cs',
  '.rb',
  '.php',
  '.kt',
  '.kts',
  '.scala',
  '.swift',
  '.lua',
  '.sh',
  '.bash',
  '.vue',
  '.svelte',
  '.css',
  '.scss',
  '.less',
  '.html',
  '.sql',
  '.graphql',
  '.proto',
  '.dart',
  '.ex',
  '.exs',
  '.zig',
  '.r',
  '.jl',
  '.m',
  '.mm',
]);

function extensionOf(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash ? path.slice(dot).toLowerCase() : '';
}

/** The language a path is indexed as, or undefined when it is not indexed at all. */
export function languageForPath(path: string): LanguageSpec | undefined {
  const ext = extensionOf(path);
  if (path.endsWith('.d.ts')) return byExtension.get('.ts');
  return byExtension.get(ext) ?? (TEXT_EXTENSIONS.has(ext) ? TEXT_SPEC : undefined);
}

/** Line comment syntax for a path, used to verbalize cross-file context. */
export function lineCommentFor(path: string): string {
  const ext = extensionOf(path);
  if (
    ['.c', '.h', '.cc', '.cpp', '.hpp', '.cs', '.kt', '.kts', '.scala', '.swift', '.dart', '.zig', '.php'].includes(ext)
  ) {
    return '//';
  }
  if (ext === '.lua' || ext === '.sql') return '--';
  return languageForPath(path)?.lineComment ?? '#';
}

export const INDEXED_EXTENSIONS: string[] = [...byExtension.keys(), ...TEXT_EXTENSIONS];
