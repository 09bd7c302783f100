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

/**
 * Python's builtins and the methods of its built-in types, and Go's predeclared names: a task whose line needs
 * only these needs no repository context (the TS/JS list is builtins.json).
 */
const PYTHON_GO_BUILTINS: Record<'python' | 'go', Set<string>> = {
  python: new Set(
    `self cls None True False print len range str int float bool dict list tuple set frozenset bytes
    object type super isinstance issubclass getattr setattr hasattr delattr iter next open repr hash id min max sum
    any all map filter zip enumerate sorted reversed abs round divmod pow format vars dir callable property
    staticmethod classmethod Exception BaseException ValueError TypeError KeyError IndexError AttributeError
    RuntimeError NotImplementedError StopIteration OSError IOError ImportError AssertionError NotImplemented
    append extend insert pop remove clear copy update get items keys values setdefault join split strip lstrip
    rstrip startswith endswith replace lower upper format encode decode find rfind index count add discard
    __init__ __name__ __class__ __dict__ __call__ args kwargs`.split(/\s+/),
  ),
  go: new Set(
    `append cap clear close complex copy delete imag len make max min new panic print println real recover
    bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint
    uint8 uint16 uint32 uint64 uintptr any true false iota nil Error String`.split(/\s+/),
  ),
};

/** The names a language provides without an import: what a line may use that no repository file declares. */
export function languageBuiltins(languageId: string): Set<string> {
  return languageId === 'python' || languageId === 'go' ? PYTHON_GO_BUILTINS[languageId] : builtinNames();
}
