/**
 * The debounced cursor cache: completions keyed on the local context around the cursor (file, the text just
 * before it, the text just after it), not on the rendered prompt. A lookup also tries the states the user may
 * have come from by typing: if the text typed since a cached state is the start of that state's completion,
 * the rest is served with no model call. Accepting a line of a multi-line completion is such typing too.
 */
import { createHash } from 'crypto';
import { LRUCache } from 'lru-cache';

export interface CursorContext {
  path: string;
  /** Document text before the cursor. */
  before: string;
  /** Document text after the cursor. */
  after: string;
}

export interface CacheHit {
  /** The completion from the current cursor on. */
  text: string;
  /** What was typed since the cached state (empty for an exact hit). */
  typed: string;
}

/** Characters of left context in the key: enough to tell places apart, small enough to hash per keystroke. */
const KEY_BEFORE_CHARS = 512;
const KEY_AFTER_CHARS = 256;
/** How far back a lookup searches for the state a completion was made in. */
const MAX_TYPED_CHARS = 256;

export class CursorCache {
  private readonly entries: LRUCache<string, string>;

  constructor(maxEntries = 500) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** Stores (or, while it streams, extends) the completion made at this context. */
  set(context: CursorContext, completion: string): void {
    if (completion) this.entries.set(keyOf(context.path, context.before, context.after), completion);
  }

  get(context: CursorContext): CacheHit | undefined {
    const reach = Math.min(MAX_TYPED_CHARS, context.before.length);
    for (let typedChars = 0; typedChars <= reach; typedChars++) {
      const start = context.before.length - typedChars;
      const cached = this.entries.get(keyOf(context.path, context.before.slice(0, start), context.after));
      if (cached === undefined) continue;
      const typed = context.before.slice(start);
      if (cached.startsWith(typed) && cached.length > typed.length) return { text: cached.slice(typed.length), typed };
    }
    return undefined;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(path: string, before: string, after: string): string {
  return createHash('sha1')
    .update(path)
    .update('\0')
    .update(before.slice(-KEY_BEFORE_CHARS))
    .update('\0')
    .update(after.slice(0, KEY_AFTER_CHARS))
    .digest('base64');
}
