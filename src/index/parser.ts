import * as fs from 'fs';
import * as path from 'path';
import { Language, Parser, type Edit, type Point, type Tree } from 'web-tree-sitter';
import { LRUCache } from 'lru-cache';
import type { LanguageSpec } from './languages';

/**
 * Where the wasm files live: next to the bundle when packaged (dist/grammars), else in node_modules.
 * The runtime's own tree-sitter.wasm and the grammars may sit in different folders during development.
 */
export interface WasmLocation {
  runtimeDir: string;
  grammarDir: string;
}

export function defaultWasmLocation(): WasmLocation {
  const bundled = path.join(__dirname, 'grammars');
  if (fs.existsSync(path.join(bundled, 'tree-sitter.wasm'))) return { runtimeDir: bundled, grammarDir: bundled };
  return {
    runtimeDir: path.dirname(require.resolve('web-tree-sitter')),
    grammarDir: path.join(path.dirname(require.resolve('tree-sitter-wasms/package.json')), 'out'),
  };
}

let runtimeReady: Promise<void> | undefined;

function initRuntime(location: WasmLocation): Promise<void> {
  runtimeReady ??= Parser.init({ locateFile: (file: string) => path.join(location.runtimeDir, file) });
  return runtimeReady;
}

interface CachedTree {
  text: string;
  tree: Tree;
}

/** The edit that turns `before` into `after`, found by their common prefix and suffix. */
export function diffEdit(before: string, after: string): Edit | undefined {
  if (before === after) return undefined;
  let start = 0;
  const minLength = Math.min(before.length, after.length);
  while (start < minLength && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let tail = 0;
  while (
    tail < minLength - start &&
    before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)
  ) {
    tail++;
  }
  return {
    startIndex: start,
    oldEndIndex: before.length - tail,
    newEndIndex: after.length - tail,
    startPosition: pointAt(before, start),
    oldEndPosition: pointAt(before, before.length - tail),
    newEndPosition: pointAt(after, after.length - tail),
  } as Edit;
}

function pointAt(text: string, index: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: index - lineStart };
}

/**
 * Parses files with tree-sitter, keeping the last trees of recently changed files so that an edit
 * reparses incrementally. Trees live in wasm memory, so they are freed explicitly on eviction.
 */
export class SourceParser {
  private readonly languages = new Map<string, Promise<Language>>();
  private readonly parser = new Map<string, Parser>();
  private readonly trees: LRUCache<string, CachedTree>;

  constructor(
    private readonly location: WasmLocation = defaultWasmLocation(),
    keptTrees = 32,
  ) {
    this.trees = new LRUCache<string, CachedTree>({
      max: keptTrees,
      dispose: (entry) => entry.tree.delete(),
    });
  }

  private async parserFor(spec: LanguageSpec): Promise<Parser> {
    const wasm = spec.wasm!;
    const existing = this.parser.get(wasm);
    if (existing) return existing;
    await initRuntime(this.location);
    let language = this.languages.get(wasm);
    if (!language) {
      language = Language.load(path.join(this.location.grammarDir, wasm));
      this.languages.set(wasm, language);
    }
    const parser = new Parser();
    parser.setLanguage(await language);
    this.parser.set(wasm, parser);
    return parser;
  }

  /**
   * Parses `text` as the new content of `filePath`. The returned tree stays owned by the parser's
   * cache (do not delete it); it is valid until the next parse of the same path or its eviction.
   */
  async parse(filePath: string, spec: LanguageSpec, text: string): Promise<Tree> {
    return this.parseWith(filePath, spec, text, (tree) => tree);
  }

  /**
   * Parses and hands the tree to `use` in the same synchronous step. Between `parse` resolving and its caller
   * resuming, another parse of the same path can replace the tree in the cache, which deletes it: two updates of
   * one file at once (the editor's text and the file watcher's) then read a deleted tree.
   */
  async parseWith<T>(filePath: string, spec: LanguageSpec, text: string, use: (tree: Tree) => T): Promise<T> {
    const parser = await this.parserFor(spec);
    return use(this.parseNow(parser, filePath, text));
  }

  private parseNow(parser: Parser, filePath: string, text: string): Tree {
    const previous = this.trees.get(filePath);
    let oldTree: Tree | undefined;
    if (previous) {
      const edit = diffEdit(previous.text, text);
      if (!edit) return previous.tree;
      oldTree = previous.tree.copy();
      oldTree.edit(edit);
    }
    const tree = parser.parse(text, oldTree);
    oldTree?.delete();
    if (!tree) throw new Error(`tree-sitter could not parse ${filePath}`);
    this.trees.set(filePath, { text, tree });
    return tree;
  }

  /** Forget a file's tree (deleted, renamed, or indexed once and not expected to change soon). */
  forget(filePath: string): void {
    this.trees.delete(filePath);
  }

  dispose(): void {
    this.trees.clear();
    for (const parser of this.parser.values()) parser.delete();
    this.parser.clear();
  }
}
