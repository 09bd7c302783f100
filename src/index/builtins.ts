/**
 * Names the languages themselves provide, in the two forms their two users need.
 *
 * - builtinNames(): every name JavaScript's and TypeScript's standard libraries (ES, DOM, web workers) and Node's
 *   API declare, members and keywords included, generated into builtins.json by tools/builtins/generate.mjs (the
 *   CLI runs without the `typescript` and `@types/node` devDependencies it is computed from). Benchmark task
 *   generation never counts them as repository identifiers.
 * - BUILTIN_TYPES: the primitive and standard generic type names of the six indexed languages that type
 *   annotations name; retrieval never looks them up as definitions. Hand-picked, not the generated list: that one
 *   also holds thousands of DOM and Node names (Element, Node, Request) that repositories declare themselves. A
 *   unit test checks the TypeScript part against the generated list.
 */
import names from './builtins.json';

let cached: Set<string> | undefined;

export function builtinNames(): Set<string> {
  cached ??= new Set(names as string[]);
  return cached;
}

export const BUILTIN_TYPES_BY_LANGUAGE = {
  typescript: [
    'string',
    'number',
    'boolean',
    'any',
    'unknown',
    'void',
    'never',
    'object',
    'undefined',
    'null',
    'Promise',
    'Array',
    'Map',
    'Set',
    'Record',
    'Partial',
    'Readonly',
    'Required',
    'Pick',
    'Omit',
    'Date',
    'Error',
    'RegExp',
    'Function',
    'Object',
    'String',
    'Number',
    'Boolean',
    'Iterable',
    'Iterator',
  ],
  python: ['int', 'str', 'float', 'bool', 'bytes', 'list', 'dict', 'None', 'Optional', 'List', 'Dict', 'Any'],
  go: ['error', 'byte', 'rune', 'int64', 'int32', 'float64', 'uint'],
  rust: ['Self', 'Vec', 'Option', 'Result', 'Box'],
  java: ['Integer', 'Long', 'Double'],
  /** The usual type parameter names: a generic's parameter is never a repository type. */
  typeParameters: ['T', 'K', 'V'],
} as const;

export const BUILTIN_TYPES: ReadonlySet<string> = new Set(Object.values(BUILTIN_TYPES_BY_LANGUAGE).flat());
