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
 * Python's builtins and the methods of its built-in types, Go's predeclared names, Rust's prelude with the methods
 * of its standard types and traits, and Java's java.lang with the methods of Object, String and the collections: a
 * task whose line needs only these needs no repository context (the TS/JS list is builtins.json).
 */
const LANGUAGE_BUILTINS: Record<'python' | 'go' | 'rust' | 'java', Set<string>> = {
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
  rust: new Set(
    `self Self super crate Some None Ok Err Option Result Vec String Box Rc Arc Cell RefCell HashMap HashSet BTreeMap
    BTreeSet VecDeque Cow Default Debug Clone Copy PartialEq Eq PartialOrd Ord Hash Send Sync Sized Iterator
    IntoIterator From Into AsRef AsMut Drop Fn FnMut FnOnce ToString Display Write Read fmt io std core alloc
    bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 println print eprintln eprint
    format write writeln vec panic assert assert_eq assert_ne debug_assert unreachable todo unimplemented matches
    new default clone to_string to_owned into from as_ref as_mut as_str as_slice iter iter_mut into_iter next map
    and_then or_else ok err ok_or unwrap unwrap_or unwrap_or_else unwrap_or_default expect is_some is_none is_ok
    is_err len is_empty push pop insert remove get get_mut contains contains_key extend collect filter fold
    enumerate zip chain take skip rev any all find position count sum join split trim starts_with ends_with
    replace chars bytes lines parse fmt eq cmp partial_cmp hash drop borrow borrow_mut lock`.split(/\s+/),
  ),
  java: new Set(
    `this super null true false Object String Integer Long Double Float Boolean Character Byte Short Number Math
    System Class Enum Record Iterable Comparable Runnable Thread Exception RuntimeException Error Throwable
    IllegalArgumentException IllegalStateException NullPointerException UnsupportedOperationException
    IndexOutOfBoundsException Override Deprecated SuppressWarnings FunctionalInterface SafeVarargs StringBuilder
    CharSequence Void List ArrayList Map HashMap LinkedHashMap Set HashSet Collection Collections Arrays Optional
    Iterator Objects out err println print printf format equals hashCode toString getClass valueOf length
    charAt substring indexOf isEmpty size get put add addAll remove contains containsKey set clear append
    stream map filter collect forEach iterator hasNext next of asList emptyList singletonList requireNonNull
    compareTo trim split startsWith endsWith replace toLowerCase toUpperCase intValue name ordinal values
    getMessage printStackTrace`.split(/\s+/),
  ),
};

/** The names a language provides without an import: what a line may use that no repository file declares. */
export function languageBuiltins(languageId: string): Set<string> {
  return languageId in LANGUAGE_BUILTINS
    ? LANGUAGE_BUILTINS[languageId as keyof typeof LANGUAGE_BUILTINS]
    : builtinNames();
}
