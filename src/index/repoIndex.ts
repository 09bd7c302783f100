import type { ByteSource } from './byteSource';
import { ChunkTexts } from './chunkTexts';
import { ByteWriter } from './varint';
import { ownString } from './ownStrings';
import { dataFileReason } from './dataFile';
import { extractFacts, textFacts } from './extract';
import { languageForPath } from './languages';
import { LexicalIndex, type LexicalHit } from './lexical';
import { SourceParser } from './parser';
import { ScopeStats, type ScopeFigures } from './scopeStats';
import type { ProjectRoots } from './projects';
import { identifiers } from './tokenize';
import { dirOf } from './relPath';
import { loadProjectLayout, resolveImport, type ProjectLayout } from './resolve';
import { WorkspaceRoots, type IndexRoot } from './roots';
import { chunkId, type Chunk, type FileFacts, type ImportBinding, type SymbolInfo } from './types';
import { sameStrings, shareStrings } from './sharedStrings';
import { SkipMemory } from './skipMemory';
import { SourceLines, type IndexedText } from './sourceLines';
import { compareText, Vocabulary, WindowIndex, WindowQuery, type StoredWindow, type WindowHit } from './windowIndex';
import { chunkWindows, encodeWindowLists, fileAndChunkWindows } from './windows';

/** A file's modification time and size in bytes on disk: a warm start trusts a record whose file still has them. */
export interface FileStat {
  mtimeMs: number;
  size: number;
}

export interface FileRecord extends FileStat {
  facts: FileFacts;
  /** Content hash: an update with the same text is a no-op, and a warm start checks it. */
  hash: string;
  /** Why the file is data, not code (a literal table, minified, generated): it then has no windows and no BM25. */
  data?: string;
}

/** A chunk as a cache holds it: its text apart, its path the record's, its id made again (`chunkId`). */
export type TextlessChunk = Omit<Chunk, 'text' | 'id' | 'path'>;

/** A record as a cache holds it: its chunks' texts apart (`RepoIndex.restore`). */
export type TextlessRecord = Omit<FileRecord, 'facts'> & {
  facts: Omit<FileFacts, 'chunks'> & { chunks: TextlessChunk[] };
};

/** A file's windows and each chunk's where known (`fileAndChunkWindows`, or a cache's). */
export interface PutWindows {
  file: readonly StoredWindow[];
  chunks?: readonly (readonly StoredWindow[] | undefined)[];
}

interface PutOptions {
  /** Whether the chunks go into BM25 (a cache's come with its own, `restoreLexical`). */
  lexical: boolean;
  /** None: the chunks' are made here. 'later': a restored record's, added by `restoreWindows`. */
  windows?: PutWindows | 'later';
  restored?: boolean;
}

export interface SymbolRef {
  path: string;
  symbol: SymbolInfo;
}

export interface ResolvedImport {
  binding: ImportBinding;
  /** Indexed files the specifier resolves to (several for Go packages); empty when external. */
  targets: string[];
}

export interface IndexStats {
  files: number;
  symbols: number;
  chunks: number;
}

/** One file's change of what resolves through it: the top-level names it gained or lost; all of it without `names`. */
export interface ExportChange {
  path: string;
  names?: ReadonlySet<string>;
}

/**
 * The in-memory symbol index of one workspace: per-file facts, a symbol table, a BM25 index over chunks, the token
 * sets of each chunk's 20-line windows (rebuilt from the facts on a warm start), an inverted index over each file's
 * RepoCoder windows (persisted with the facts), and import resolution. Every mutation is per file; nothing here
 * reads the disk but the project layout and, to show a similar window, the file it lies in (`fileText`).
 */
/** Search scopes whose statistics are kept (`ScopeStats`): an editor asks from one or two projects at a time. */
const SCOPES_KEPT = 4;

export class RepoIndex {
  readonly files = new Map<string, FileRecord>();
  /** Files left out for what they hold, which a start need not read again while their stat stays (M19). */
  readonly skipped = new SkipMemory();
  private readonly symbolTable = new Map<string, SymbolRef[]>();
  /** The same for top-level symbols only: a common name's members (thousands of `name`s) are not walked past. */
  private readonly topLevelTable = new Map<string, SymbolRef[]>();
  private readonly chunkTable = new Map<string, Chunk>();
  private readonly dirFiles = new Map<string, Set<string>>();
  private readonly resolved = new Map<string, string[]>();
  private readonly resolvedImports = new Map<string, ResolvedImport[]>();
  /** Changes whenever a file is added or removed: lets callers cache what they derive from the file set. */
  fileSetVersion = 0;
  /** Changes whenever a record is put or removed: a save tells a still index from one that changed meanwhile. */
  recordsVersion = 0;
  /**
   * Changes whenever the file set, any file's set of top-level names or its imports change, not when only a body
   * does:
   * lets callers cache how names resolve through re-exports while a file is being typed in.
   */
  exportsVersion = 0;
  /** The change that made each `exportsVersion` after `exportLogBase` (see `exportChangesSince`). */
  private exportLog: ExportChange[] = [];
  private exportLogBase = 0;
  private lexical = new LexicalIndex();
  /** The chunks' texts, on disk (`ChunkTexts`). */
  private readonly texts = new ChunkTexts();
  private textsCompactDue = false;
  /** One vocabulary for both window stores, so that one query's ids serve both. */
  private readonly vocabulary = new Vocabulary();
  /** Each non-outline chunk's windows, scored per chunk (`bestWindow`): no postings. */
  private readonly chunkWindows = new WindowIndex<Chunk>(this.vocabulary);
  /** Each code file's windows, searched anywhere (`similarWindows`). */
  private readonly fileWindows = new WindowIndex<string>(this.vocabulary, {
    search: { order: (a, aStart, b, bStart) => compareText(a, b) || aStart - bStart },
  });
  private readonly sourceLines: SourceLines;
  private layout: ProjectLayout | undefined;
  private ambient: SymbolRef[] | undefined;
  private symbolCount = 0;
  /** The layout's project directories as a set, for `searchScope`. */
  private projectDirSet: { dirs: readonly string[]; set: ReadonlySet<string> } | undefined;
  /** In how many files each identifier occurs: how commonly a member is used across the repository. */
  private readonly fileFrequency = new Map<string, number>();
  /** The same, and the file count, of the few search scopes last asked about (`frequency`, `fileCount`). */
  private readonly scopeStats = new ScopeStats(SCOPES_KEPT);

  /** The folders the files lie in; their paths are keys under these roots (roots.ts). */
  private currentRoots: WorkspaceRoots;

  constructor(
    root: IndexRoot,
    private readonly parser = new SourceParser(),
  ) {
    this.currentRoots = new WorkspaceRoots(root);
    this.sourceLines = new SourceLines((key) => this.currentRoots.absolute(key));
  }

  get roots(): WorkspaceRoots {
    return this.currentRoots;
  }

  /**
   * Moves the index to other folders that keep every key it may hold (`WorkspaceRoots.keepsKeysOf`): a build then
   * drops the files of a folder gone and adds those of a folder added, the others' as they were.
   */
  moveTo(roots: WorkspaceRoots): void {
    if (!this.currentRoots.keepsKeysOf(roots)) throw new Error('the new folders do not keep the index paths');
    this.currentRoots = roots;
  }

  /** Where the index's projects start, as the layout last read knows them (projects.ts). */
  get projectRoots(): ProjectRoots {
    return { dirs: this.layout?.projectDirs ?? [], multiRoot: this.currentRoots.multiple };
  }

  /**
   * The part of the workspace that similar-code and BM25 searches for `filePath` look in, as a key prefix: the
   * outermost project below the root that holds the file, since repositories side by side in one folder are unrelated
   * code (their hits diluted each one's recall, issue 41); everything ('') when the root is itself a project, the
   * file is in none, or the workspace has several folders (their user put them together). Definitions follow
   * imports wherever they lead.
   */
  searchScope(filePath: string): string {
    const dirs = this.layout?.projectDirs ?? [];
    if (this.currentRoots.multiple || dirs.includes('')) return '';
    // A few calls a retrieval, over a monorepo's thousands of projects: each ancestor is looked up, outermost first.
    if (this.projectDirSet?.dirs !== dirs) this.projectDirSet = { dirs, set: new Set(dirs) };
    for (let end = filePath.indexOf('/'); end > 0; end = filePath.indexOf('/', end + 1)) {
      if (this.projectDirSet.set.has(filePath.slice(0, end))) return filePath.slice(0, end + 1);
    }
    return '';
  }

  /** Re-reads package.json / tsconfig / go.mod layout; call after a full scan or a config file change. */
  async reloadLayout(): Promise<void> {
    this.layout = await loadProjectLayout(this.currentRoots, this.files.keys());
    this.forgetResolutions();
  }

  /**
   * Parses and indexes one file's new text (`keepTree` false: part of a bulk index, which keeps no syntax tree and no
   * text); `stat` is the file's on disk, which the next warm start compares; `known`: what a build already has of
   * the text, its hash (`SourceLines.hash`) and its facts when the parser thread gave them. Returns false when the
   * content is the indexed one: then only `stat` is recorded.
   */
  async update(
    filePath: string,
    text: string,
    stat: FileStat = { mtimeMs: Date.now(), size: text.length },
    keepTree = true,
    known: { hash?: string; facts?: FileFacts } = {},
  ): Promise<boolean> {
    const spec = languageForPath(filePath);
    if (!spec) return false;
    const hash = known.hash ?? SourceLines.hash(text);
    // An editor's text may not be on disk yet; a bulk index reads from disk, where its texts are found again.
    if (keepTree) this.sourceLines.remember(filePath, hash, text);
    if (this.confirm(filePath, hash, stat)) return false;
    let facts: FileFacts;
    if (known.facts) {
      facts = known.facts;
    } else if (spec.wasm) {
      facts = await this.parser.parseWith(filePath, spec, text, (tree) => extractFacts(filePath, spec, text, tree));
      // A bulk index parses each file once; keeping every tree would only cost wasm memory.
      if (!keepTree) this.parser.forget(filePath);
    } else {
      facts = textFacts(filePath, text);
    }
    const data = dataFileReason(text);
    const record: FileRecord = { facts, hash, mtimeMs: stat.mtimeMs, size: stat.size };
    if (data) this.put({ ...record, data }, { lexical: true });
    else {
      const windows = fileAndChunkWindows(text, facts.chunks, this.vocabulary);
      this.put(record, { lexical: true, windows });
    }
    return true;
  }

  /** Takes `stat` as the file's when its record's content hash is `hash` (read again, unchanged); false otherwise. */
  confirm(filePath: string, hash: string, stat: FileStat): boolean {
    const record = this.files.get(filePath);
    if (record?.hash !== hash) return false;
    record.mtimeMs = stat.mtimeMs;
    record.size = stat.size;
    return true;
  }

  /**
   * Adds a record of the persisted cache, its chunks without their texts: those lie at `textsAt` in the texts' file,
   * `textBytes[i]` bytes each (`reserveTexts`, `writeTexts`), and its names are counted by `restoreFrequencies`,
   * its chunks by `restoreLexical`. With the file's windows (none for a data file) and each chunk's, or 'later':
   * `restoreWindows` adds them all at once.
   */
  restore(record: TextlessRecord, textBytes: readonly number[], textsAt: number, windows: PutWindows | 'later'): void {
    const { chunks, path } = record.facts;
    if (textBytes.length !== chunks.length) throw new Error(`${chunks.length} chunks, ${textBytes.length} texts`);
    let at = textsAt;
    const stored = chunks.map(({ kind, range, symbols }, i) => {
      const chunk = { id: chunkId(path, range, kind), path, kind, range, symbols };
      const attached = this.texts.attach(chunk, at, textBytes[i]);
      at += textBytes[i];
      return attached;
    });
    this.put({ ...record, facts: { ...record.facts, chunks: stored } }, { lexical: false, windows, restored: true });
  }

  /**
   * Sets `bytes` bytes aside in the texts' file for a cache's texts, written by `writeTexts`; until `endRestore`
   * the file is not compacted. Undefined when the file cannot be written.
   */
  reserveTexts(bytes: number): number | undefined {
    return this.texts.reserve(bytes);
  }

  writeTexts(at: number, bytes: Uint8Array): boolean {
    return this.texts.writeAt(at, bytes);
  }

  /** Ends a restore begun by `reserveTexts`: what it did not attach is dropped by the next compaction. */
  endRestore(): void {
    this.texts.unreserve();
    this.compactTexts();
  }

  /**
   * Copies each symbol table's lists at their length: one grown by appending keeps room for 16 more refs or half its
   * length, 25 MB at 100,000 files. Called once a build has put its records.
   */
  trimTables(): void {
    for (const table of [this.symbolTable, this.topLevelTable])
      for (const [name, refs] of table) table.set(name, refs.slice());
  }

  /** Chunks' texts as UTF-8 (read from the texts' file undecoded): what the cache persists. */
  textBytes(chunks: readonly Chunk[]): Buffer[] {
    return this.texts.bytesOfAll(chunks);
  }

  /**
   * Both window stores in their persisted form (`restoreWindows`), in pieces: the file windows' byte count as a
   * varint, their pieces, then the chunk windows'.
   */
  windowsBinary(): Uint8Array[] {
    const files = [...this.fileWindows.writeBinary()];
    const head = new ByteWriter(8);
    head.varint(files.reduce((sum, piece) => sum + piece.length, 0));
    return [head.finish(), ...files, ...this.chunkWindows.writeBinary()];
  }

  /**
   * Adds the windows of the records restored without theirs (`restore` with 'later'), from `windowsBinary`'s bytes
   * saved with them under the vocabulary `restoreVocabulary` interned (its `remap` when the ids differ); a file or
   * chunk no longer indexed gets none.
   */
  restoreWindows(source: ByteSource, remap?: Int32Array): void {
    const fileBytes = source.varint();
    if (fileBytes > source.remaining) throw new Error('window index: truncated');
    this.fileWindows.restoreBinary(
      source,
      fileBytes,
      (key) => {
        const record = this.files.get(key);
        return record && !record.data ? { key: record.facts.path, owner: record.facts.path } : undefined;
      },
      remap,
    );
    this.chunkWindows.restoreBinary(
      source,
      source.remaining,
      (key) => {
        const chunk = this.chunkTable.get(key);
        return chunk ? { key: chunk.id, owner: chunk } : undefined;
      },
      remap,
    );
  }

  /** In how many files each identifier occurs: persisted, so that a warm start need not read every text. */
  frequencies(): Iterable<[string, number]> {
    return this.fileFrequency.entries();
  }

  /**
   * Adds a cache's identifier frequencies, before its records are restored (`restore` counts none): a file an
   * editor replaces meanwhile is then counted off as any other.
   */
  restoreFrequencies(entries: Iterable<[string, number]>): void {
    this.scopeStats.clear();
    for (const [name, count] of entries) {
      const known = this.fileFrequency.get(name);
      this.fileFrequency.set(known === undefined ? this.ownName(name) : name, (known ?? 0) + count);
    }
  }

  /** Counts the identifier frequencies anew from every record's texts: a cache's were of other records. */
  recountFrequencies(): void {
    this.fileFrequency.clear();
    this.scopeStats.clear();
    for (const record of this.files.values()) this.countNames(identifiersOf(record));
  }

  /** One more file uses each of `names`. */
  private countNames(names: Iterable<string>): void {
    for (const name of names) {
      const count = this.fileFrequency.get(name);
      this.fileFrequency.set(count === undefined ? this.ownName(name) : name, (count ?? 0) + 1);
    }
  }

  /**
   * `name` as the index holds it: the vocabulary's copy when it has one (a cache's line or a chunk's text brings a
   * copy of its own), else a flat copy, since a slice would keep the text it was read from alive.
   */
  private ownName(name: string): string {
    return this.vocabulary.canonical(name) ?? ownString(name);
  }

  /**
   * Adds a record whose facts are known, with the file's windows (none for a data file) and each chunk's windows
   * where known (`fileAndChunkWindows`, or a cache's); others are made here. A `restored` record's chunks are in the
   * texts' file already and its names counted by the caller (`restore`).
   */
  private put(record: FileRecord, { lexical, windows, restored = false }: PutOptions): void {
    // A message's or a cache line's strings are copies of their own; the vocabulary holds a name once.
    shareStrings(record.facts, (word) => this.vocabulary.canonical(word));
    const filePath = record.facts.path;
    const existed = this.files.has(filePath);
    this.skipped.forget(filePath);
    this.recordsVersion++;
    // What `exportsVersion` watches is read from the record replaced, which is still in `files`.
    const change = shapeChange(filePath, this.files.get(filePath)?.facts, record.facts);
    if (change) this.exportShapeChanged(change);
    this.detach(filePath);
    this.files.set(filePath, record);
    this.resolvedImports.delete(filePath);
    if (filePath.endsWith('.d.ts')) this.ambient = undefined;
    for (const symbol of record.facts.symbols) {
      const ref = { path: filePath, symbol };
      appendRef(this.symbolTable, ref);
      if (!symbol.container) appendRef(this.topLevelTable, ref);
    }
    this.symbolCount += record.facts.symbols.length;
    if (!restored) {
      const names = identifiersOf(record);
      this.countNames(names);
      this.scopeStats.change(filePath, names, 1);
    }
    // A data file's words are not code: searching or counting them costs memory and finds nothing to imitate.
    if (!record.data && lexical) this.lexical.add(record.facts.chunks);
    const later = windows === 'later';
    const tokens = record.facts.chunks.map((c, i) =>
      record.data || c.kind === 'outline' || later
        ? undefined
        : (windows?.chunks?.[i] ?? chunkWindows(c, this.vocabulary)),
    );
    // Every reader of the texts above is done: from here they are read back from the file when asked for.
    if (!restored) record.facts.chunks = this.texts.store(record.facts.chunks);
    record.facts.chunks.forEach((chunk, i) => {
      this.chunkTable.set(chunk.id, chunk);
      if (tokens[i]) this.chunkWindows.add(chunk.id, chunk, tokens[i]);
    });
    if (!record.data && !later) this.fileWindows.add(filePath, filePath, windows?.file ?? []);
    if (!existed) {
      const dir = dirOf(filePath);
      const set = this.dirFiles.get(dir);
      if (set) set.add(filePath);
      else this.dirFiles.set(dir, new Set([filePath]));
      this.forgetResolutions();
    }
    this.compactTexts();
  }

  remove(filePath: string): boolean {
    if (!this.files.has(filePath)) return false;
    this.recordsVersion++;
    this.detach(filePath);
    this.files.delete(filePath);
    if (filePath.endsWith('.d.ts')) this.ambient = undefined;
    this.parser.forget(filePath);
    this.sourceLines.forget(filePath);
    this.dirFiles.get(dirOf(filePath))?.delete(filePath);
    this.forgetResolutions();
    this.compactTexts();
    return true;
  }

  /** Rewrites the texts' file once replaced texts outnumber the live ones (`ChunkTexts.release`). */
  private compactTexts(): void {
    if (!this.textsCompactDue || this.texts.reserved) return;
    this.textsCompactDue = false;
    this.texts.compact(this.chunkTable.values());
  }

  /** A rename keeps the facts under the new path; chunk ids embed the path, so they are rebuilt. */
  rename(from: string, to: string): boolean {
    const record = this.files.get(from);
    if (!record) return false;
    const windows = this.fileWindows.windows(from);
    // Texts are read before the removal, which may rewrite the texts' file.
    const chunks = record.facts.chunks.map((c) => ({ ...c, text: c.text, path: to, id: to + c.id.slice(from.length) }));
    this.remove(from);
    this.put(
      { ...record, facts: { ...record.facts, path: to, chunks } },
      { lexical: true, windows: { file: windows } },
    );
    return true;
  }

  private detach(filePath: string): void {
    const old = this.files.get(filePath);
    if (!old) return;
    for (const symbol of old.facts.symbols) {
      dropRefs(this.symbolTable, symbol.name, filePath);
      if (!symbol.container) dropRefs(this.topLevelTable, symbol.name, filePath);
    }
    this.symbolCount -= old.facts.symbols.length;
    for (const chunk of old.facts.chunks) this.chunkTable.delete(chunk.id);
    if (this.texts.release(old.facts.chunks)) this.textsCompactDue = true;
    const names = identifiersOf(old);
    for (const name of names) {
      const count = (this.fileFrequency.get(name) ?? 1) - 1;
      if (count > 0) this.fileFrequency.set(name, count);
      else this.fileFrequency.delete(name);
    }
    this.scopeStats.change(filePath, names, -1);
    this.lexical.remove(old.facts.chunks.map((c) => c.id));
    this.chunkWindows.remove(old.facts.chunks.map((c) => c.id));
    this.fileWindows.remove([filePath]);
  }

  /** Number of indexed files that use an identifier: under `scope` (a `searchScope`), or anywhere. */
  frequency(name: string, scope = ''): number {
    return (scope ? this.scopeFigures(scope).frequency : this.fileFrequency).get(name) ?? 0;
  }

  /** Number of indexed files under `scope` (a `searchScope`), or in all. */
  fileCount(scope = ''): number {
    return scope ? this.scopeFigures(scope).files : this.files.size;
  }

  private scopeFigures(scope: string): ScopeFigures {
    return this.scopeStats.of(scope, () => {
      const figures: ScopeFigures = { files: 0, frequency: new Map() };
      for (const [path, record] of this.files) {
        if (!path.startsWith(scope)) continue;
        figures.files++;
        for (const name of identifiersOf(record)) figures.frequency.set(name, (figures.frequency.get(name) ?? 0) + 1);
      }
      return figures;
    });
  }

  /** The indexed files directly in folder `dir` (workspace-relative paths). */
  filesIn(dir: string): string[] {
    return [...(this.dirFiles.get(dir) ?? [])];
  }

  facts(filePath: string): FileFacts | undefined {
    return this.files.get(filePath)?.facts;
  }

  symbols(name: string): SymbolRef[] {
    return this.symbolTable.get(name) ?? [];
  }

  /** The top-level symbols named `name`, in the order `symbols` lists them. */
  topLevelSymbols(name: string): SymbolRef[] {
    return this.topLevelTable.get(name) ?? [];
  }

  /** Whether a file other than `filePath` declares `name`. */
  declaredElsewhere(name: string, filePath: string): boolean {
    return this.symbols(name).some((ref) => ref.path !== filePath);
  }

  /** Globals the repository declares for itself (`declare const __DEV__: boolean` in a .d.ts file). */
  ambientSymbols(): SymbolRef[] {
    this.ambient ??= [...this.files.values()]
      .filter((r) => r.facts.path.endsWith('.d.ts'))
      .flatMap((r) =>
        r.facts.symbols
          .filter((s) => !s.container && /^declare\s+(const|let|var|function)\b/.test(s.signature))
          .map((symbol) => ({ path: r.facts.path, symbol })),
      );
    return this.ambient;
  }

  chunk(id: string): Chunk | undefined {
    return this.chunkTable.get(id);
  }

  /** BM25's best chunks for `text` among those under `scope` (a key prefix) that `filter` keeps. */
  searchChunks(text: string, limit: number, filter?: (id: string) => boolean, scope = ''): LexicalHit[] {
    return this.lexical.query(text, limit, filter, scope);
  }

  /**
   * The file windows whose identifier sets are most similar (Jaccard) to `tokens`, best first: owner is the file's
   * path, start the window's first line. `skip` leaves out files.
   */
  similarWindows(
    tokens: Iterable<string> | WindowQuery,
    limit: number,
    skip?: (filePath: string) => boolean,
  ): WindowHit<string>[] {
    const query = tokens instanceof WindowQuery ? tokens : this.vocabulary.query(tokens);
    return this.fileWindows.search(query, limit, skip);
  }

  /** `tokens` prepared once for `similarWindows` and `bestWindow`. */
  windowQuery(tokens: Iterable<string>): WindowQuery {
    return this.vocabulary.query(tokens);
  }

  /** The window of an indexed non-outline chunk most similar to `query`; undefined for any other chunk. */
  bestWindow(chunk: Chunk, query: WindowQuery): { start: number; score: number } | undefined {
    return this.chunkWindows.best(chunk.id, chunk, query);
  }

  /**
   * An indexed code file's lines exactly as indexed (what its windows were made of), to show a window found in it;
   * undefined for a data file, a file not indexed, or one whose text on disk is no longer the indexed one.
   */
  fileText(filePath: string): IndexedText | undefined {
    const record = this.files.get(filePath);
    return record && !record.data ? this.sourceLines.text(filePath, record.hash) : undefined;
  }

  /** A file's windows as the persisted cache holds them; undefined when it has none (a data file). */
  persistedWindows(filePath: string): { windows: string; chunkWindows: string } | undefined {
    const record = this.files.get(filePath);
    if (!record || record.data) return undefined;
    return {
      windows: encodeWindowLists([this.fileWindows.windows(filePath)]),
      chunkWindows: encodeWindowLists(record.facts.chunks.map((c) => this.chunkWindows.windows(c.id))),
    };
  }

  /** The window vocabulary's words by id: what persisted windows' ids index. */
  vocabularyWords(): readonly string[] {
    return this.vocabulary.words();
  }

  /** Interns a persisted vocabulary; returns, per persisted id, the id here. */
  restoreVocabulary(words: readonly string[]): Int32Array {
    return this.vocabulary.internAll(words);
  }

  /** Where each import of a file points, resolved lazily and memoised until the file set changes. */
  imports(filePath: string): ResolvedImport[] {
    let imports = this.resolvedImports.get(filePath);
    if (!imports) {
      const facts = this.facts(filePath);
      if (!facts) return [];
      imports = facts.imports.map((binding) => ({
        binding,
        targets: this.layout ? this.resolve(filePath, binding.specifier, binding.imported) : [],
      }));
      this.resolvedImports.set(filePath, imports);
    }
    return imports;
  }

  /**
   * What changed in files' top-level names and imports after `version`, in order; undefined when the file set or
   * the layout changed since (anything may resolve elsewhere) or the log no longer reaches back that far.
   */
  exportChangesSince(version: number): readonly ExportChange[] | undefined {
    if (version < this.exportLogBase || version > this.exportsVersion) return undefined;
    return this.exportLog.slice(version - this.exportLogBase);
  }

  private exportShapeChanged(change: ExportChange): void {
    this.exportsVersion++;
    this.exportLog.push(change);
    if (this.exportLog.length > EXPORT_LOG) {
      const dropped = this.exportLog.length - EXPORT_LOG / 2;
      this.exportLog = this.exportLog.slice(dropped);
      this.exportLogBase += dropped;
    }
  }

  /** The file set or the layout changed: any import may now resolve elsewhere. */
  private forgetResolutions(): void {
    this.fileSetVersion++;
    this.exportsVersion++;
    this.exportLog = [];
    this.exportLogBase = this.exportsVersion;
    this.resolved.clear();
    this.resolvedImports.clear();
  }

  resolve(fromFile: string, specifier: string, importedNames?: readonly string[]): string[] {
    const key = `${fromFile}\0${specifier}\0${importedNames?.join(',') ?? ''}`;
    let targets = this.resolved.get(key);
    if (!targets) {
      const language = this.facts(fromFile)?.language ?? 'typescript';
      targets = this.layout
        ? resolveImport(
            this.layout,
            (p) => this.files.has(p),
            (dir) => this.filesIn(dir),
            fromFile,
            specifier,
            language,
            importedNames,
          )
        : [];
      this.resolved.set(key, targets);
    }
    return targets;
  }

  stats(): IndexStats {
    return { files: this.files.size, symbols: this.symbolCount, chunks: this.chunkTable.size };
  }

  /** The lexical index in its binary form for the persisted cache, in pieces (see `LexicalIndex.writeBinary`). */
  lexicalBinary(): Iterable<Uint8Array> {
    return this.lexical.writeBinary();
  }

  /**
   * Replaces the lexical index by a persisted one that matches the records already `put` without it; it keeps the
   * chunks' own id strings, not a second copy of each.
   */
  restoreLexical(source: ByteSource): void {
    this.lexical = LexicalIndex.readBinary(source, (id) => this.chunkTable.get(id)?.id);
  }

  dispose(): void {
    this.parser.dispose();
    this.texts.close();
  }
}

/** Shape changes remembered for `exportChangesSince`: a reader further behind starts over. */
const EXPORT_LOG = 4096;

/** A file's top-level names: with its imports (`sameImports`), all that decides how a name resolves through it. */
function topLevelNames(facts: FileFacts): Set<string> {
  return new Set(facts.symbols.filter((s) => !s.container).map((s) => s.name));
}

function sameImports(a: readonly ImportBinding[], b: readonly ImportBinding[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (x, i) =>
        x.specifier === b[i].specifier && sameStrings(x.names, b[i].names) && sameStrings(x.imported, b[i].imported),
    )
  );
}

/** What differs between a file's facts: the names declared in one only, or everything when the imports differ. */
function shapeChange(path: string, before: FileFacts | undefined, after: FileFacts): ExportChange | undefined {
  if (!before || !sameImports(before.imports, after.imports)) return { path };
  const was = topLevelNames(before);
  const is = topLevelNames(after);
  const names = new Set<string>();
  for (const name of was) if (!is.has(name)) names.add(name);
  for (const name of is) if (!was.has(name)) names.add(name);
  return names.size ? { path, names } : undefined;
}

function appendRef(table: Map<string, SymbolRef[]>, ref: SymbolRef): void {
  const refs = table.get(ref.symbol.name);
  if (refs) refs.push(ref);
  else table.set(ref.symbol.name, [ref]);
}

/** Removes `filePath`'s refs named `name`, keeping the others' order. */
function dropRefs(table: Map<string, SymbolRef[]>, name: string, filePath: string): void {
  const refs = table.get(name);
  if (!refs) return;
  const kept = refs.filter((r) => r.path !== filePath);
  if (kept.length) table.set(name, kept);
  else table.delete(name);
}

/** The identifiers a file uses; none for a data file, whose words are table entries, not uses. */
function identifiersOf(record: FileRecord): Set<string> {
  const names = new Set<string>();
  if (record.data) return names;
  for (const chunk of record.facts.chunks) for (const name of identifiers(chunk.text)) names.add(name);
  return names;
}
