import type { Snippet } from './types';

/** `name` occurs in `text` as a whole identifier (`$` counts as a word character, as in JavaScript). */
export function hasWord(text: string, name: string): boolean {
  return new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(text);
}

/** CrossCodeEval's retrieval hit: every one of `names` occurs, as a word, in the packed context. */
export function coversAll(names: readonly string[], snippets: readonly Snippet[]): boolean {
  const context = snippets.map((s) => s.text).join('\n');
  return names.every((name) => hasWord(context, name));
}
