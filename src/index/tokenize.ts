/** Identifier-shaped words of code. */
const WORD = /[A-Za-z_$][\w$]*/g;
/** Boundaries inside an identifier: camelCase humps, acronyms, digits, underscores. */
const PARTS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g;
const SPLITTABLE = /[\d_$]/;

/** Identifiers as written, in order, duplicates kept. */
export function identifiers(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** Whether every identifier of `text` passes `test`, reading no further than the first that does not. */
export function everyIdentifier(text: string, test: (name: string) => boolean): boolean {
  for (const [name] of text.matchAll(WORD)) if (!test(name)) return false;
  return true;
}

/**
 * Search terms for BM25: each identifier whole (lower-cased) and, when compound, its parts too —
 * so `getUserById` matches `user` and `getUserById`. No stemming: `users` and `user` stay distinct.
 */
export function codeTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of identifiers(text)) {
    const lower = word.toLowerCase();
    if (lower.length > 1) terms.push(lower);
    // Most words of code are plain lower-case keywords and names: nothing to split.
    if (lower === word && !SPLITTABLE.test(word)) continue;
    const parts = word.match(PARTS);
    if (parts && parts.length > 1) {
      for (const part of parts) if (part.length > 1) terms.push(part.toLowerCase());
    }
  }
  return terms;
}

/** Occurrences of each identifier-shaped word, matched on word boundaries (`1e5` holds no `e5`). */
export function wordCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.match(/[\w$]+/g) ?? []) {
    if (/^\d/.test(word)) continue;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}
