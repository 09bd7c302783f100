import type { FileFacts } from './types';

/** Kinds and language names: a few values, each held once for the whole index. */
const constants = new Map<string, string>();

/**
 * Makes the strings of one file's facts that are equal one string, in place, and its bindings that import names as
 * they are called share one array. A parse thread's message and a cache's JSON line bring each string as a copy of its
 * own (a chunk's path, a name used by several symbols): at 100,000 files those copies cost about 100 MB
 * (decisions-memory.md, M12). `canonical` gives the index's own copy of a word it already holds (its vocabulary), so
 * that a name declared in many files is held once; other strings are shared within the file.
 */
export function shareStrings(facts: FileFacts, canonical: (word: string) => string | undefined): FileFacts {
  const seen = new Map<string, string>([[facts.path, facts.path]]);
  const one = <T extends string>(text: T): T => {
    let shared = seen.get(text);
    if (shared === undefined) seen.set(text, (shared = canonical(text) ?? text));
    return shared as T;
  };
  const constant = <T extends string>(text: T): T => (constants.get(text) ?? constants.set(text, text).get(text)!) as T;
  facts.language = constant(facts.language);
  for (const symbol of facts.symbols) {
    symbol.name = one(symbol.name);
    symbol.kind = constant(symbol.kind);
    if (symbol.container) symbol.container = one(symbol.container);
  }
  for (const chunk of facts.chunks) {
    chunk.path = facts.path;
    chunk.kind = constant(chunk.kind);
    chunk.symbols = chunk.symbols.map(one);
  }
  for (const binding of facts.imports) {
    binding.specifier = one(binding.specifier);
    binding.names = binding.names.map(one);
    binding.imported = sameStrings(binding.imported, binding.names) ? binding.names : binding.imported.map(one);
  }
  for (const type of facts.types) {
    type.name = one(type.name);
    type.typeNames = type.typeNames.map(one);
    if (type.container) type.container = one(type.container);
  }
  if (facts.package) facts.package = one(facts.package);
  return facts;
}

/** Whether two lists hold the same strings in the same order. */
export function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
