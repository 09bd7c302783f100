import { createHash } from 'crypto';
import * as fs from 'fs';
import { LRUCache } from 'lru-cache';

/**
 * Characters (or bytes) of file text kept: the files a few requests show windows of, and the files most recently
 * given to the index (an editor's unsaved buffer among them). A few megabytes, whatever the repository's size: the
 * index keeps no file's text otherwise.
 */
const KEPT_CHARS = 8_000_000;
/** A file larger than this is not read to show a window of it (the indexer reads nothing larger by default). */
const MAX_READ_BYTES = 1024 * 1024;
const NEWLINE = 10;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A file's text as indexed, cut into lines only where asked: no string a line is made for the whole file. */
export class IndexedText {
  /** Where each line starts, and one past the end of the text (as if it ended with a newline). */
  private offsets: Int32Array | undefined;

  constructor(private readonly text: string | Buffer) {}

  get size(): number {
    return this.text.length;
  }

  get lineCount(): number {
    return this.lineOffsets().length - 1;
  }

  /** Lines `start` to `end` (exclusive), joined by newlines. */
  lines(start: number, end: number): string {
    const offsets = this.lineOffsets();
    const from = offsets[Math.max(0, start)];
    const to = offsets[Math.min(end, offsets.length - 1)] - 1;
    if (to <= from) return '';
    return typeof this.text === 'string' ? this.text.slice(from, to) : this.text.toString('utf8', from, to);
  }

  private lineOffsets(): Int32Array {
    if (!this.offsets) {
      const starts = [0];
      const text = this.text;
      const next =
        typeof text === 'string'
          ? (from: number) => text.indexOf('\n', from)
          : (from: number) => text.indexOf(NEWLINE, from);
      for (let i = next(0); i !== -1; i = next(i + 1)) starts.push(i + 1);
      starts.push(text.length + 1);
      this.offsets = Int32Array.from(starts);
    }
    return this.offsets;
  }
}

interface Entry {
  hash: string;
  /** Null when the disk holds another text than the indexed one: nothing can be shown until the index catches up. */
  text: IndexedText | null;
}

/**
 * The text of indexed files exactly as indexed: what a window found by its token ids is shown with. The texts the
 * index was given most recently are kept; any other file is read from disk when a window of it is shown and used
 * only when its content hash is the indexed one (a file changed on disk is shown again once the index has it).
 */
export class SourceLines {
  private readonly kept = new LRUCache<string, Entry>({
    maxSize: KEPT_CHARS,
    sizeCalculation: (entry) => 1 + (entry.text?.size ?? 0),
  });

  /** `locate` gives the file a path names, undefined when it lies in no folder. */
  constructor(private readonly locate: (relPath: string) => string | undefined) {}

  /** A text's content hash: what an index records of each file, and what a text read here must match. */
  static hash(text: string | Uint8Array): string {
    return createHash('sha1').update(text).digest('hex');
  }

  /** The index was given this text for `relPath`. */
  remember(relPath: string, hash: string, text: string): void {
    this.kept.set(relPath, { hash, text: new IndexedText(text) });
  }

  forget(relPath: string): void {
    this.kept.delete(relPath);
  }

  /** The file's text when it is the one indexed under `hash`, else undefined. */
  text(relPath: string, hash: string): IndexedText | undefined {
    let entry = this.kept.get(relPath);
    if (entry?.hash !== hash) {
      const bytes = this.read(relPath, hash);
      entry = { hash, text: bytes ? new IndexedText(bytes) : null };
      this.kept.set(relPath, entry);
    }
    return entry.text ?? undefined;
  }

  /**
   * The file's bytes when they are the indexed text (UTF-8, a byte-order mark dropped as the indexer drops it);
   * undefined when the file is gone, too large or holds another text. A file the indexer decoded with replacement
   * characters (invalid UTF-8) never matches, so none of its windows is shown.
   */
  private read(relPath: string, hash: string): Buffer | undefined {
    try {
      const file = this.locate(relPath);
      if (file === undefined) return undefined;
      if (fs.statSync(file).size > MAX_READ_BYTES) return undefined;
      const bytes = fs.readFileSync(file);
      const text = bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes;
      return SourceLines.hash(text) === hash ? text : undefined;
    } catch {
      return undefined;
    }
  }
}
