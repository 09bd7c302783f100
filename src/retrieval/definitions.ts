import { BUILTIN_TYPES } from '../index/builtins';
import type { RepoIndex, ResolvedImport, SymbolRef } from '../index/repoIndex';
import { isNonProductPath } from '../index/productPath';
import { baseName, dirOf } from '../index/relPath';
import type { Chunk, FileFacts, SymbolInfo, TypeAnnotation } from '../index/types';
import { snippetOf } from './chunkWindows';
import type { Anchor, RetrievalQuery } from './query';
import type { Retriever } from './retriever';

/** A definition candidate before fusion. */
export interface DefinitionHit {
  chunk: Chunk;
  score: number;
  why: string;
}

const TYPE_KINDS = new Set(['class', 'interface', 'enum', 'type', 'namespace', 'module']);
const SELF = new Set(['this', 'self', 'super']);
/** Python also names the class itself, in a classmethod, by convention `cls`. */
const PYTHON_SELF = new Set([...SELF, 'cls']);
/** Rust names the value `self` and its type `Self`; its `super` is a module. */
const RUST_SELF = new Set(['self', 'Self']);
/** Impl blocks of a Rust type offered with it, inherent ones first: a type with dozens of trait impls is common. */
const MAX_IMPL_BLOCKS = 4;
/** Re-export chains (`export * from`) are followed this deep. */
const MAX_REEXPORT_HOPS = 4;
/** Names that resolve to too many places are not definitions of anything in particular. */
const MAX_GLOBAL_REFS = 4;
const NO_FILES: ReadonlySet<string> = new Set();
/** Embedded types followed for a member (Go): a type embedding one that embeds another is as deep as code goes. */
const MAX_EMBEDDING_DEPTH = 2;
/** Python bases followed for a member: a mixin of a base of a base is common, a longer line of them rare. */
const MAX_BASE_DEPTH = 4;
/** Types named in a packed outline's signatures are followed one more hop, at this share of its score. */
const SECOND_HOP = 0.5;
/** Definitions handed to fusion: about four times the snippets a 2,000-character budget holds, so packing chooses. */
const MAX_HITS = 24;
/** Score kept per link of a member chain (`a.b.c`): each link's type is a guess built on the one before. */
const CHAIN_DECAY = 0.85;
/** What the file imports but does not name nearby weighs as a name 12 lines from the cursor does (query.ts decay). */
const IMPORT_WEIGHT = 0.25;
/** A module outline's line is cut after this many characters: a long signature does not take the next exports' room. */
const MAX_MODULE_LINE = 90;
/** Ambient globals, which no nearby name leads to, weigh as a name 5 lines from the cursor does (query.ts decay). */
const AMBIENT_WEIGHT = 0.45;
/** A file's ambient declarations weigh in proportion to their count, in full from this many: a file of globals. */
const AMBIENT_FULL_AT = 4;
/** `this.`/`super.` inside a class reaches its supertypes' members: at least this weight, even before it is typed. */
const MIN_SELF_WEIGHT = 0.3;
/** A supertype's outline weighs a little under the class's own anchor: the class's own members come first. */
const SUPERTYPE_SHARE = 0.9;
/** First-hop definitions whose signatures are followed to the types they name: the best few, to bound the work. */
const SECOND_HOP_SOURCES = 6;
/** Top-level types a namespace import offers: a module's main types, not every one of a large module. */
const MAX_MODULE_TYPES = 8;
/**
 * Characters around the cursor read for local declarations: the function being written and its neighbours, not the
 * rest of a 5,000-line file (whose locals of the same name are other variables).
 */
const LOCALS_BEFORE = 12_000;
const LOCALS_AFTER = 3_000;

/**
 * A definition scored at least this is a type (or an imported definition) named on the cursor's own line: the
 * line is most likely to use its members, so it is never crowded out.
 */
export const STRONG_DEFINITION = 0.95;

export const definitionRetriever: Retriever = {
  name: 'definition',
  costMs: 3,
  retrieve({ index, facts, request, query, offset: at }) {
    const near = request.text.slice(Math.max(0, at - LOCALS_BEFORE), at + LOCALS_AFTER);
    return DefinitionRetriever.retrieve(index, facts, near, query).map(({ chunk, score, why }) => ({
      key: chunk.id,
      snippet: { ...snippetOf(chunk), retriever: 'definition' as const, why, score },
      strong: score >= STRONG_DEFINITION,
    }));
  },
};

/**
 * Symbol-driven retrieval: resolves the identifiers around the cursor through the file's imports (with
 * re-exports), declared types of fields, parameters and variables, the enclosing class's supertypes, and the
 * repository's symbol table, and returns the defining chunks — outlines for types, so that every member the
 * next line may use is listed.
 */
export class DefinitionRetriever {
  private readonly hits = new Map<string, DefinitionHit>();
  private readonly local: LocalDeclarations;
  /** Names resolve the same way many times in one retrieval (every anchor, every hop). */
  private readonly resolved = new Map<string, SymbolRef[]>();
  /** Per file, the names it binds to whole modules and those modules (see `moduleBindings`). */
  private readonly moduleBound = new Map<string, Map<string, string[]>>();
  /** Per Go folder, package clause and test-ness, the paths of the package's files (see `packageOf`). */
  private readonly packages = new Map<string, ReadonlySet<string>>();
  /** The names a method's body calls its own object (or class) by. */
  private readonly selfNames: ReadonlySet<string>;

  private constructor(
    private readonly index: RepoIndex,
    private readonly facts: FileFacts,
    text: string,
  ) {
    this.local = scanLocalDeclarations(text, facts.language);
    this.selfNames = facts.language === 'python' ? PYTHON_SELF : facts.language === 'rust' ? RUST_SELF : SELF;
  }

  static retrieve(index: RepoIndex, facts: FileFacts, text: string, query: RetrievalQuery): DefinitionHit[] {
    const retriever = new DefinitionRetriever(index, facts, text);
    retriever.run(query);
    return [...retriever.hits.values()].sort((a, b) => b.score - a.score).slice(0, MAX_HITS);
  }

  private run(query: RetrievalQuery): void {
    const enclosing = this.enclosingClass(query.line);
    const firstHop: DefinitionHit[] = [];
    for (const anchor of query.anchors) {
      for (const [ref, why, depth] of this.resolveAnchor(anchor, enclosing)) {
        // The deeper a link of a member chain, the less certain its type is what the next line needs.
        const hit = this.offer(ref, anchor.weight * CHAIN_DECAY ** depth, why);
        if (hit) firstHop.push(hit);
      }
    }
    // What a file imports it uses, wherever the use is: its imported types stay candidates at a floor weight.
    const anchorWeight = new Map(query.anchors.map((a) => [a.name, a.weight]));
    for (const { binding } of this.index.imports(this.facts.path)) {
      binding.names.forEach((name, i) => {
        if (name === '*' || BUILTIN_TYPES.has(name)) return;
        const weight = Math.max(IMPORT_WEIGHT, anchorWeight.get(name) ?? 0);
        const modules = this.moduleBindings(this.facts.path).get(name);
        if (modules) {
          // `ns.member`: the module's exports are what the next line may name. Of a package of many files (Go),
          // those declaring the members used near the cursor keep the weight; the others stay at the floor.
          const used = new Set(
            query.anchors.filter((a) => a.chain.length === 2 && a.chain[0] === name).map((a) => a.name),
          );
          const header = importLine(this.facts.language, binding.specifier, name, binding.imported[i]);
          const declaring = modules.filter(
            (target) => modules.length === 1 || this.index.facts(target)?.symbols.some((s) => used.has(s.name)),
          );
          // The import floor is the package's, shared by its other files: being imported, a package of twenty files
          // earns no more than a one-file module does, and its outlines do not crowd out the names the line uses.
          const floor = IMPORT_WEIGHT / Math.max(1, modules.length - declaring.length);
          for (const target of modules) this.offerModule(target, header, declaring.includes(target) ? weight : floor);
        } else {
          for (const ref of this.resolveName(name, this.facts.path)) this.offer(ref, IMPORT_WEIGHT, `imported ${name}`);
          // An imported instance (an application object) is used through its type's members.
          for (const ref of this.importedInstanceTypes(name))
            this.offer(ref, IMPORT_WEIGHT, `type of imported ${name}`);
        }
      });
    }
    if (enclosing) {
      // `this.` and `super.` reach inherited members: the supertypes' outlines matter even before they are typed.
      const selfWeight = Math.max(
        MIN_SELF_WEIGHT,
        ...query.anchors.filter((a) => this.selfNames.has(a.name)).map((a) => a.weight),
      );
      for (const superName of supertypes(enclosing.signature)) {
        for (const ref of this.resolveName(superName, this.facts.path))
          this.offer(ref, selfWeight * SUPERTYPE_SHARE, `supertype of ${enclosing.name}`);
      }
    }
    if (this.facts.language !== 'text') {
      // Repository-wide globals are used without an import anywhere, so no anchor leads to them; another repository's
      // (a vendored TypeScript's lib.dom.d.ts) are not this one's (R29).
      const byFile = new Map<string, SymbolRef[]>();
      const scope = this.index.searchScope(this.facts.path);
      for (const ref of this.index.ambientSymbols()) {
        if (ref.path.startsWith(scope)) byFile.set(ref.path, [...(byFile.get(ref.path) ?? []), ref]);
      }
      for (const refs of byFile.values()) {
        // One compact snippet a file: the declarations alone, not the statements around them.
        const first = refs[0];
        const chunk: Chunk = {
          ...signatureChunk(first),
          id: `${first.path}#ambient`,
          text: refs.map((r) => r.symbol.signature).join('\n'),
          symbols: refs.map((r) => r.symbol.name),
        };
        const weight = AMBIENT_WEIGHT * Math.min(1, refs.length / AMBIENT_FULL_AT);
        this.offer(first, weight, 'repository-wide ambient declarations', chunk);
      }
    }
    for (const hit of firstHop.sort((a, b) => b.score - a.score).slice(0, SECOND_HOP_SOURCES)) {
      if (hit.chunk.kind !== 'outline' && hit.chunk.kind !== 'function' && hit.chunk.kind !== 'method') continue;
      for (const typeName of typeNamesOf(hit.chunk.text)) {
        for (const ref of this.resolveName(typeName, hit.chunk.path)) {
          this.offer(ref, hit.score * SECOND_HOP, `type ${typeName} used by ${hit.chunk.symbols[0] ?? hit.chunk.path}`);
        }
      }
    }
  }

  private enclosingClass(line: number): SymbolInfo | undefined {
    let best: SymbolInfo | undefined;
    for (const symbol of this.facts.symbols) {
      if (symbol.kind !== 'class' || symbol.range.start > line || symbol.range.end <= line) continue;
      if (!best || symbol.range.start >= best.range.start) best = symbol;
    }
    return best;
  }

  /**
   * What an identifier near the cursor leads to: its import or a global symbol, and — walking its member
   * chain (`this.repo.find`, `ctx.app().config`) through declared field types and method return types —
   * the type of every link, so that the outline listing the next member is found.
   */
  private resolveAnchor(anchor: Anchor, enclosing: SymbolInfo | undefined): [SymbolRef, string, number][] {
    const { name, chain } = anchor;
    if (this.selfNames.has(name) || BUILTIN_TYPES.has(name)) return [];
    const out: [SymbolRef, string, number][] = [];
    let types: SymbolRef[] = this.typesOfHead(chain[0], enclosing);
    for (const ref of types) out.push([ref, `type of ${chain[0]}`, 0]);
    for (let i = 1; i < chain.length && types.length; i++) {
      const next: SymbolRef[] = [];
      for (const owner of types) {
        const found = this.findMember(owner, chain[i]);
        if (!found) continue;
        // A member the type's own outline does not list (a Go method of another file, an embedded type's) is
        // offered itself.
        if (found.symbol && !found.own)
          out.push([{ path: found.path, symbol: found.symbol }, `${chain[i]}, member of ${owner.symbol.name}`, i]);
        next.push(...this.typesOfMember(found));
      }
      types = next;
      for (const ref of types) out.push([ref, `type of ${chain.slice(0, i + 1).join('.')}`, i]);
    }
    // Java: a bare name inside a class may be a member it inherits (an implicit `this.`).
    if (chain.length === 1 && enclosing && this.facts.language === 'java' && !this.local.declared.has(name)) {
      const found = this.findMember({ path: this.facts.path, symbol: enclosing }, name);
      if (found?.symbol && !found.own)
        out.push([{ path: found.path, symbol: found.symbol }, `${name}, member of ${enclosing.name}`, 0]);
    }
    // A namespace is offered as its module's outline (run's import loop), not as a few of its types.
    if (chain.length === 1 && !this.moduleBindings(this.facts.path).has(name))
      for (const ref of this.resolveName(name, this.facts.path)) out.push([ref, `definition of ${name}`, 0]);
    return out;
  }

  /**
   * The names `file` binds to whole modules, with those modules: `import * as ns`, Go packages, Python `import m`
   * and `from p import m` (a submodule), a named import of an `export * as` re-export. The first binding of a name
   * counts, as in `resolveNameOnce`.
   */
  private moduleBindings(file: string): Map<string, string[]> {
    let bound = this.moduleBound.get(file);
    if (!bound) {
      bound = new Map();
      for (const { binding, targets } of this.index.imports(file))
        binding.names.forEach((name, i) => {
          if (bound!.has(name)) return;
          const imported = binding.imported[i];
          const modules = imported === '*' ? targets : this.submodules(targets, imported);
          if (modules.length) bound!.set(name, modules);
        });
      this.moduleBound.set(file, bound);
    }
    return bound;
  }

  /** The types a chain's first identifier has: `this`'s class, a declared or constructed type, a call's result. */
  private typesOfHead(head: string, enclosing: SymbolInfo | undefined, depth = 0): SymbolRef[] {
    if (this.selfNames.has(head)) {
      return enclosing ? [{ path: this.facts.path, symbol: enclosing }] : [];
    }
    const refs: SymbolRef[] = [];
    for (const typeName of this.declaredTypes(head)) refs.push(...this.resolveName(typeName, this.facts.path));
    if (refs.length === 0) refs.push(...this.importedInstanceTypes(head));
    const callee = this.local.calls.get(head);
    if (refs.length === 0 && depth < 2 && callee) {
      // `const x = a.b.c(...)`: x has the return type of the call.
      if (callee !== head) {
        const links = callee.split('.');
        const modules = links.length > 1 ? this.moduleBindings(this.facts.path).get(links[0]) : undefined;
        // `pkg.New()`, `ns.create()`: the result of the function the module exports.
        let types = modules
          ? modules.flatMap((m) => this.exportedFrom(m, links[1], 0)).flatMap((ref) => this.callResult(ref))
          : links.length > 1
            ? this.typesOfHead(links[0], enclosing, depth + 1)
            : this.functionResult(links[0]);
        for (let i = modules ? 2 : 1; i < links.length && types.length; i++)
          types = types.flatMap((owner) => this.memberTypes(owner, links[i]));
        refs.push(...types);
      }
    }
    return refs.slice(0, 4);
  }

  /** An imported module-level instance (`from proj.celery import app`, there `app = Celery()`): the type given it there. */
  private importedInstanceTypes(name: string): SymbolRef[] {
    return this.resolveName(name, this.facts.path)
      .filter((ref) => ref.path !== this.facts.path && ref.symbol.kind === 'variable')
      .flatMap((ref) =>
        (this.index.facts(ref.path)?.types ?? [])
          .filter((t) => t.name === ref.symbol.name && t.container === undefined)
          .flatMap((t) => t.typeNames.filter((n) => !BUILTIN_TYPES.has(n)))
          .flatMap((typeName) => this.resolveName(typeName, ref.path)),
      );
  }

  /** The result type of a function imported into this file (`const x = makeThing()`). */
  private functionResult(name: string): SymbolRef[] {
    return this.resolveName(name, this.facts.path).flatMap((ref) => this.callResult(ref));
  }

  /** What calling `ref` yields: a class called is constructed (Python's `x = Pool()`), a function its result. */
  private callResult(ref: SymbolRef): SymbolRef[] {
    return ref.symbol.kind === 'class' ? [ref] : this.resultTypes(ref);
  }

  /** The types a function's or method's signature states as its result. */
  private resultTypes(ref: SymbolRef): SymbolRef[] {
    return this.typesInSignature(ref, resultText(ref.symbol.signature, ref.path.endsWith('.go')));
  }

  /** The type of member `member` of the type `owner`: its declared field type or its method's return type. */
  private memberTypes(owner: SymbolRef, member: string): SymbolRef[] {
    const found = this.findMember(owner, member);
    return found ? this.typesOfMember(found) : [];
  }

  private typesOfMember({ path, types, symbol }: FoundMember): SymbolRef[] {
    if (types.length) {
      return types.flatMap((t) =>
        t.typeNames.filter((n) => !BUILTIN_TYPES.has(n)).flatMap((n) => this.resolveName(n, path)),
      );
    }
    return symbol ? this.resultTypes({ path, symbol }) : [];
  }

  /**
   * Where member `member` of the type `owner` is declared: in the type's file, in another file of its Go package
   * (a method is declared in any of them), in a type it embeds (Go promotes the embedded type's members), or in a
   * Python base class or mixin, in the order of the bases as written (depth first, as the MRO of a simple hierarchy).
   */
  private findMember(owner: SymbolRef, member: string, depth = 0): FoundMember | undefined {
    const facts = owner.path === this.facts.path ? this.facts : this.index.facts(owner.path);
    if (!facts) return undefined;
    const key = `${owner.symbol.name}\0${member}`;
    const members = membersOf(facts);
    const types = members.types.get(key) ?? [];
    const symbol = members.symbols.get(key);
    if (types.length || symbol) return { path: owner.path, types, symbol, own: depth === 0 };
    // Found through the symbol table, not file by file: a package may have a hundred files.
    const pkg = this.packageOf(owner.path, facts);
    const method = pkg.size
      ? this.index
          .symbols(member)
          .find((r) => r.symbol.container === owner.symbol.name && r.path !== owner.path && pkg.has(r.path))
      : undefined;
    if (method) return { path: method.path, types: [], symbol: method.symbol, own: false };
    if (facts.language === 'rust') {
      // A Rust type's fields and methods are declared in its struct and its impl blocks, in any file of its crate.
      const crate = rustCrateOf(owner.path);
      const declared = this.index
        .symbols(member)
        .find(
          (r) =>
            r.symbol.container === owner.symbol.name &&
            r.path !== owner.path &&
            r.path.endsWith('.rs') &&
            rustCrateOf(r.path) === crate,
        );
      if (declared) {
        const declaring = this.index.facts(declared.path);
        const declaredTypes = declaring ? (membersOf(declaring).types.get(key) ?? []) : [];
        return { path: declared.path, types: declaredTypes, symbol: declared.symbol, own: false };
      }
    }
    const hierarchy = facts.language === 'python' || facts.language === 'java' || facts.language === 'rust';
    if (depth >= (hierarchy ? MAX_BASE_DEPTH : MAX_EMBEDDING_DEPTH)) return undefined;
    const inherited =
      facts.language === 'rust'
        ? this.rustTraitsOf(owner)
        : hierarchy
          ? supertypes(owner.symbol.signature).map((name) => ({ name, from: owner.path }))
          : (members.embedded.get(owner.symbol.name) ?? []).map((name) => ({ name, from: owner.path }));
    for (const base of inherited) {
      for (const ref of this.resolveName(base.name, base.from)) {
        if (ref.symbol === owner.symbol) continue;
        const found = this.findMember(ref, member, depth + 1);
        if (found) return { ...found, own: false };
      }
    }
    return undefined;
  }

  /**
   * The traits a Rust type implements (`impl Trait for Type`, in any file of its crate) and, of a trait, its
   * supertraits, each with the file whose imports name it: their provided methods are the type's too.
   */
  private rustTraitsOf(owner: SymbolRef): { name: string; from: string }[] {
    const crate = rustCrateOf(owner.path);
    const found = supertypes(owner.symbol.signature).map((name) => ({ name, from: owner.path }));
    for (const impl of this.rustImpls(owner.symbol.name, crate))
      for (const name of supertypes(impl.symbol.signature)) found.push({ name, from: impl.path });
    return found;
  }

  /** The impl blocks of the Rust type `name` in the crate `crate`: inherent impls first, then trait impls. */
  private rustImpls(name: string, crate: string): SymbolRef[] {
    const impls = this.index
      .topLevelSymbols(name)
      .filter((r) => r.path.endsWith('.rs') && rustCrateOf(r.path) === crate && isRustImpl(r.symbol));
    return [
      ...impls.filter((r) => !supertypes(r.symbol.signature).length),
      ...impls.filter((r) => supertypes(r.symbol.signature).length),
    ];
  }

  private typesInSignature(ref: SymbolRef, text: string): SymbolRef[] {
    return typeNamesOf(text)
      .flatMap((typeName) => this.resolveName(typeName, ref.path))
      .slice(0, 4);
  }

  /** Types written for a name in this file: annotations and constructions, plus `name: Type` in the text. */
  private declaredTypes(name: string): string[] {
    const names: string[] = [];
    for (const t of this.facts.types) {
      if (t.name !== name) continue;
      for (const typeName of t.typeNames)
        if (!BUILTIN_TYPES.has(typeName) && !names.includes(typeName)) names.push(typeName);
    }
    // Locals inside function bodies are not in the index; their annotations are found textually.
    if (names.length === 0)
      for (const typeName of this.local.types.get(name) ?? []) if (!BUILTIN_TYPES.has(typeName)) names.push(typeName);
    return names;
  }

  /** Resolves a name as seen from `fromPath`: its import there (following re-exports), else the symbol table. */
  private resolveName(name: string, fromPath: string): SymbolRef[] {
    const key = `${fromPath}\0${name}`;
    let refs = this.resolved.get(key);
    if (!refs) {
      refs = this.resolveNameOnce(name, fromPath);
      this.resolved.set(key, refs);
    }
    return refs;
  }

  private resolveNameOnce(name: string, fromPath: string): SymbolRef[] {
    const fromFacts = fromPath === this.facts.path ? this.facts : this.index.facts(fromPath);
    if (!fromFacts) return [];
    // The current file's own declarations are not offered (`offer`), but a member chain is typed through them.
    const declaredHere = topLevel(fromFacts, name);
    if (declaredHere.length) return declaredHere.map((symbol) => ({ path: fromPath, symbol }));
    for (const { binding, targets, at } of importsOf(this.index.imports(fromPath)).named.get(name) ?? []) {
      const imported = binding.imported[at];
      const refs: SymbolRef[] = [];
      const modules = this.moduleBindings(fromPath).get(name);
      if (modules) for (const target of modules) refs.push(...this.moduleRefs(target));
      else
        for (const target of targets)
          refs.push(...this.exportedFrom(target, imported === 'default' ? name : imported, 0));
      if (refs.length || targets.length) return refs;
    }
    // Not imported: a global of the repository (ambient declarations, Go/Java packages), but not a local of
    // the file that merely shares a name with some top-level symbol elsewhere.
    if (fromFacts === this.facts && this.local.declared.has(name)) return [];
    // Rust's `use m::*` and Java's `import p.*` bind every name their module declares.
    if (fromFacts.language === 'rust' || fromFacts.language === 'java') {
      for (const { targets } of importsOf(this.index.imports(fromPath)).stars) {
        const refs = targets.flatMap((t) => this.exportedFrom(t, name, 0));
        if (refs.length) return refs;
      }
    }
    // Go: a declaration in another file of the package is the name's, however many packages declare it too.
    const pkg = this.packageOf(fromPath, fromFacts);
    const inPackage = pkg.size
      ? this.index.topLevelSymbols(name).filter((r) => r.path !== fromPath && pkg.has(r.path))
      : [];
    if (inPackage.length) return inPackage;
    // Past MAX_GLOBAL_REFS the name means nothing in particular: a common name's long list is not read to its end.
    // Only the file's search scope counts: a repository beside it declaring the name too is not what it means.
    const global: SymbolRef[] = [];
    const scope = this.index.searchScope(this.facts.path);
    for (const r of this.index.topLevelSymbols(name)) {
      if (r.path === this.facts.path || !r.path.startsWith(scope)) continue;
      if (!(r.symbol.exported || r.path.endsWith('.d.ts'))) continue;
      global.push(r);
      if (global.length > MAX_GLOBAL_REFS) return [];
    }
    return global;
  }

  /**
   * Go: the other files of `file`'s package, those of its folder under the same package clause (unknown for a file
   * not indexed yet: then the folder decides); they share one scope without an import. A `_test.go` file is seen
   * from test files only: only `go test` compiles it.
   */
  private packageOf(file: string, facts: FileFacts): ReadonlySet<string> {
    if (facts.language === 'java') return this.javaPackageOf(file);
    if (facts.language !== 'go') return NO_FILES;
    const fromTest = file.endsWith('_test.go');
    const key = `${dirOf(file)}\0${facts.package ?? ''}\0${fromTest}`;
    let files = this.packages.get(key);
    if (!files) {
      files = new Set(
        this.index.filesIn(dirOf(file)).filter((path) => {
          const other = fromTest || !path.endsWith('_test.go') ? this.index.facts(path) : undefined;
          return other?.language === 'go' && (facts.package === undefined || other.package === facts.package);
        }),
      );
      this.packages.set(key, files);
    }
    return files;
  }

  /** Java: the other files of `file`'s folder, its package by the convention every build tool follows. */
  private javaPackageOf(file: string): ReadonlySet<string> {
    const key = `${dirOf(file)}\0java`;
    let files = this.packages.get(key);
    if (!files) {
      files = new Set(this.index.filesIn(dirOf(file)).filter((path) => path.endsWith('.java')));
      this.packages.set(key, files);
    }
    return files;
  }

  /**
   * A symbol exported by `file`, directly or through `export … from` chains. Where a chain through barrel files
   * ends is kept with the names it looked up in which files, and forgotten when one of those files gains or loses
   * such a name or changes its imports (`RepoIndex.exportChangesSince`); the symbols are read from the end file's
   * current facts.
   */
  private exportedFrom(file: string, name: string, hops: number): SymbolRef[] {
    if (hops > 0) return this.followExports(file, name, hops);
    const cache = exportCacheOf(this.index);
    const key = `${file}\0${name}`;
    let end = cache.ends.get(key);
    if (end === undefined) {
      const read: [string, string][] = [];
      const refs = this.followExports(file, name, 0, read);
      end = refs.length ? { path: refs[0].path, name: refs[0].symbol.name } : null;
      if (cache.ends.size >= MAX_CACHED_EXPORTS) {
        cache.ends.clear();
        cache.readers.clear();
      }
      cache.ends.set(key, end);
      for (const [f, n] of read) {
        let byName = cache.readers.get(f);
        if (!byName) cache.readers.set(f, (byName = new Map()));
        const keys = byName.get(n);
        if (keys) keys.add(key);
        else byName.set(n, new Set([key]));
      }
      return refs;
    }
    const facts = end && this.index.facts(end.path);
    return end && facts ? exported(facts, end.name).map((symbol) => ({ path: end.path, symbol })) : [];
  }

  /** Follows `export … from` links from `file` to where `name` is declared; each file and name looked up go to `read`. */
  private followExports(file: string, name: string, hops: number, read?: [string, string][]): SymbolRef[] {
    read?.push([file, name]);
    const facts = this.index.facts(file);
    if (!facts) return [];
    const own = exported(facts, name);
    if (own.length) return own.map((symbol) => ({ path: file, symbol }));
    if (hops >= MAX_REEXPORT_HOPS) return [];
    for (const { binding, targets, at } of namedOrStar(importsOf(this.index.imports(file)), name)) {
      const inner =
        at >= 0 && binding.imported[at] !== '*' && binding.imported[at] !== 'default' ? binding.imported[at] : name;
      for (const target of targets) {
        const refs = this.followExports(target, inner, hops + 1, read);
        if (refs.length) return refs;
      }
    }
    return [];
  }

  /**
   * The targets of `from package import name` that are the submodule `name` itself (`from scrapy import
   * signals`), when no target declares `name`: the binding is then a namespace import of that module.
   */
  private submodules(targets: readonly string[], imported: string): string[] {
    // Only Python imports a submodule by name; elsewhere a file named for its main export is no module import.
    const named =
      this.facts.language === 'python' || this.facts.language === 'rust'
        ? targets.filter((t) => moduleName(t) === imported)
        : [];
    const modules = named.length ? named : targets.flatMap((t) => this.reExportedNamespace(t, imported, 0));
    // Checked last: most bindings name no module, and for them this lookup is the costly part.
    if (modules.length === 0 || targets.some((t) => this.exportedFrom(t, imported, 0).length)) return [];
    return modules;
  }

  /**
   * The module `file` re-exports as `name` (`export * as name from`), through named `export { … } from` links
   * (not `export *`: followed for every imported name, those chains cost more than this rare form is worth).
   */
  private reExportedNamespace(file: string, name: string, hops: number): string[] {
    if (hops >= MAX_REEXPORT_HOPS) return [];
    for (const { binding, targets, at } of importsOf(this.index.imports(file)).named.get(name) ?? []) {
      const imported = binding.imported[at];
      if (imported === '*') return targets;
      if (imported === 'default') return [];
      return targets.flatMap((t) => this.reExportedNamespace(t, imported, hops + 1));
    }
    return [];
  }

  /** A namespace import (`import * as ns`, Go packages, Python modules): the module's top-level types. */
  private moduleRefs(file: string): SymbolRef[] {
    const facts = this.index.facts(file);
    if (!facts) return [];
    return facts.symbols
      .filter((s) => !s.container && s.exported && TYPE_KINDS.has(s.kind))
      .slice(0, MAX_MODULE_TYPES)
      .map((symbol) => ({ path: file, symbol }));
  }

  /** A module's outline: one line a top-level export, under the line that imports it as a namespace. */
  private offerModule(file: string, header: string, weight: number): void {
    const facts = this.index.facts(file);
    const exported = facts?.symbols.filter((s) => !s.container && s.exported) ?? [];
    if (!facts || exported.length === 0 || file === this.facts.path) return;
    const lines = exported.map((s) => {
      const sig = s.signature.replace(/\s*\n\s*/g, ' ');
      return sig.length > MAX_MODULE_LINE ? `${sig.slice(0, MAX_MODULE_LINE)}…` : sig;
    });
    const chunk: Chunk = {
      id: `${file}#module`,
      path: file,
      kind: 'outline',
      range: { start: 0, end: facts.symbols.reduce((end, s) => Math.max(end, s.range.end), 0) },
      text: [header, ...lines].join('\n'),
      symbols: [header, ...exported.map((s) => s.name)],
    };
    const known = this.hits.get(chunk.id);
    if (!known || known.score < weight)
      this.hits.set(chunk.id, { chunk, score: weight, why: `exports of a namespace import (${header})` });
  }

  private offer(ref: SymbolRef, weight: number, why: string, given?: Chunk, baseDepth = 0): DefinitionHit | undefined {
    if (ref.path === this.facts.path) return undefined;
    // A Rust impl block beside its type is presented by the type's outline, which lists its methods (extract.ts).
    if (!given && ref.path.endsWith('.rs') && isRustImpl(ref.symbol)) {
      const facts = this.index.facts(ref.path);
      const type = facts && topLevel(facts, ref.symbol.name).find((s) => !isRustImpl(s) && TYPE_KINDS.has(s.kind));
      if (type) ref = { path: ref.path, symbol: type };
    }
    const isType = TYPE_KINDS.has(ref.symbol.kind);
    // A type's outline lists the members the next line may name; of a function or variable the line needs
    // its signature (parameters, result), not its body.
    const chunk = given ?? (isType ? chunkFor(this.index, ref) : signatureChunk(ref));
    if (!chunk) return undefined;
    // Tests define look-alike symbols that production code never uses.
    const testPenalty = isNonProductPath(ref.path) && !isNonProductPath(this.facts.path) ? 0.4 : 1;
    const score = weight * (isType || given ? 1 : 0.6) * testPenalty;
    const known = this.hits.get(chunk.id);
    if (known && known.score >= score) return known;
    const hit = { chunk, score, why };
    this.hits.set(chunk.id, hit);
    // A Python or Java class's outline lists its own members only; what it inherits its bases' outlines list.
    if (!given && ref.symbol.kind === 'class' && /\.(pyi?|java)$/.test(ref.path) && baseDepth < MAX_BASE_DEPTH)
      for (const base of supertypes(ref.symbol.signature))
        for (const baseRef of this.resolveName(base, ref.path))
          this.offer(baseRef, weight * SUPERTYPE_SHARE, `base ${base} of ${ref.symbol.name}`, undefined, baseDepth + 1);
    // A Rust struct's or enum's methods are in its impl blocks, which may be in other files of its crate (those of
    // its own file its outline lists).
    if (
      !given &&
      baseDepth === 0 &&
      ref.path.endsWith('.rs') &&
      (ref.symbol.kind === 'class' || ref.symbol.kind === 'enum')
    )
      for (const impl of this.rustImpls(ref.symbol.name, rustCrateOf(ref.path))
        .filter((other) => other.path !== ref.path)
        .slice(0, MAX_IMPL_BLOCKS))
        this.offer(impl, weight * SUPERTYPE_SHARE, `impl block of ${ref.symbol.name}`, undefined, baseDepth + 1);
    return hit;
  }
}

/** Where a member of a type is declared, with its written types; `own` when the type's own outline lists it. */
interface FoundMember {
  path: string;
  types: TypeAnnotation[];
  symbol?: SymbolInfo;
  own: boolean;
}

/** Where export chains from `file\0name` end (null: nowhere), and per file and name the chains that looked it up. */
interface ExportCache {
  version: number;
  ends: Map<string, { path: string; name: string } | null>;
  readers: Map<string, Map<string, Set<string>>>;
}
const exportCache = new WeakMap<RepoIndex, ExportCache>();

/** The index's export cache, less the chains that looked up a name whose declaration or import changed since. */
function exportCacheOf(index: RepoIndex): ExportCache {
  let cache = exportCache.get(index);
  if (cache && cache.version !== index.exportsVersion) {
    const changes = index.exportChangesSince(cache.version);
    if (changes) {
      for (const { path, names } of changes) forgetReaders(cache, path, names);
      cache.version = index.exportsVersion;
    } else cache = undefined;
  }
  if (!cache) {
    cache = { version: index.exportsVersion, ends: new Map(), readers: new Map() };
    exportCache.set(index, cache);
  }
  return cache;
}
/** Answers kept per index at most: a repository's imported names, with room; past it the cache starts over. */
const MAX_CACHED_EXPORTS = 50_000;

/** Drops the chains that looked up `names` (every name without it) in `file`. */
function forgetReaders(cache: ExportCache, file: string, names: ReadonlySet<string> | undefined): void {
  const byName = cache.readers.get(file);
  if (!byName) return;
  for (const [name, keys] of byName) {
    if (names && !names.has(name)) continue;
    for (const key of keys) cache.ends.delete(key);
    byName.delete(name);
  }
}

/** A function's or variable's declaration without its body. */
function signatureChunk(ref: SymbolRef): Chunk {
  const { symbol } = ref;
  const lines = symbol.signature.split('\n').length;
  return {
    id: `${ref.path}#${symbol.range.start}-${symbol.range.start + lines}:signature`,
    path: ref.path,
    kind: symbol.kind === 'method' ? 'method' : 'function',
    range: { start: symbol.range.start, end: symbol.range.start + lines },
    text: symbol.signature,
    symbols: [symbol.name],
  };
}

/** The chunk that best presents a symbol: a type's outline, a function's own chunk, or its statement group. */
export function chunkFor(index: RepoIndex, ref: SymbolRef): Chunk | undefined {
  const facts = index.facts(ref.path);
  if (!facts) return undefined;
  const { start, end } = ref.symbol.range;
  let best: Chunk | undefined;
  for (const chunk of facts.chunks) {
    if (chunk.range.start > start || chunk.range.end < end) continue;
    if (!best || chunk.range.end - chunk.range.start < best.range.end - best.range.start) best = chunk;
  }
  return best;
}

/** A module's name as imported: its file name less the extension, or its package folder's for `__init__`. */
function moduleName(file: string): string {
  const name = baseName(file).replace(/\.[^.]*$/, '');
  return name === '__init__' || (name === 'mod' && file.endsWith('.rs')) ? baseName(dirOf(file)) : name;
}

/** Attributes before a Rust item (`#[derive(Debug)]`), which its signature keeps. */
const RUST_ATTRIBUTES = /^(?:\s*#!?\[[^\]]*\]\s*)+/;

/** Whether a Rust symbol is an impl block (indexed under its type's name). */
function isRustImpl(symbol: SymbolInfo): boolean {
  return /^\s*(?:unsafe\s+)?impl\b/.test(symbol.signature);
}

/** A Rust file's crate: the path up to its last `src/` folder (a workspace's crates each have one). */
function rustCrateOf(file: string): string {
  const at = file.lastIndexOf('/src/');
  return at >= 0 ? file.slice(0, at) : file.startsWith('src/') ? '' : dirOf(file);
}

/** How the header of a module outline shows the import that binds it. */
function importLine(language: string, specifier: string, local: string, imported: string): string {
  if (language === 'go') return `import ${local} "${specifier}"`;
  if (language === 'python') {
    // `import a.b` binds `a`; `from p import m` binds `m`.
    const bare = imported === '*' ? specifier.split('.')[0] : imported;
    const as = local === bare ? '' : ` as ${local}`;
    return imported === '*' ? `import ${specifier}${as}` : `from ${specifier} import ${imported}${as}`;
  }
  return `import * as ${local} from '${specifier}'`;
}

/** An import that binds a name: where it stands among the file's imports, and among the binding's names. */
interface NamedImport extends ResolvedImport {
  order: number;
  /** Index of the name in `binding.names`; -1 for an `export * from` binding met for another name. */
  at: number;
}

/** A file's imports by the names they bind, and its `export * from` bindings, each in import order. */
interface ImportsByName {
  named: Map<string, NamedImport[]>;
  stars: NamedImport[];
  /** `namedOrStar`'s answers, by name. */
  followed: Map<string, NamedImport[]>;
}

/** Per resolved import list (the index keeps one a file until the file set changes), the lookup by name. */
const importsByName = new WeakMap<readonly ResolvedImport[], ImportsByName>();

/** Resolution asks a file's imports for one name at a time, many times a request: a map, not a scan of them all. */
function importsOf(imports: readonly ResolvedImport[]): ImportsByName {
  let lookup = importsByName.get(imports);
  if (!lookup) {
    const named = new Map<string, NamedImport[]>();
    const stars: NamedImport[] = [];
    for (const [order, entry] of imports.entries()) {
      const { names, imported } = entry.binding;
      // The first binding of a name in a statement is the one `indexOf` finds.
      const seen = new Set<string>();
      names.forEach((name, at) => {
        if (seen.has(name)) return;
        seen.add(name);
        const hit = { ...entry, order, at };
        const list = named.get(name);
        if (list) list.push(hit);
        else named.set(name, [hit]);
      });
      if (names.length === 1 && names[0] === '*' && imported.includes('*')) stars.push({ ...entry, order, at: -1 });
    }
    lookup = { named, stars, followed: new Map() };
    importsByName.set(imports, lookup);
  }
  return lookup;
}

/** The imports that bind `name` and the `export *` ones, in import order: what a re-export chain follows. */
function namedOrStar({ named, stars, followed }: ImportsByName, name: string): NamedImport[] {
  const own = named.get(name) ?? [];
  if (stars.length === 0) return own;
  let all = followed.get(name);
  if (!all) {
    const seen = new Set(own.map((hit) => hit.order));
    all = [...own, ...stars.filter((star) => !seen.has(star.order))].sort((a, b) => a.order - b.order);
    followed.set(name, all);
  }
  return all;
}

/** Per file's facts (replaced whenever the file changes), its top-level symbols by name. */
const topLevelByName = new WeakMap<FileFacts, Map<string, SymbolInfo[]>>();

/** The symbols `facts` declares at top level under `name`, in declaration order. */
function topLevel(facts: FileFacts, name: string): SymbolInfo[] {
  let byName = topLevelByName.get(facts);
  if (!byName) {
    byName = new Map();
    for (const symbol of facts.symbols) {
      if (symbol.container) continue;
      const list = byName.get(symbol.name);
      if (list) list.push(symbol);
      else byName.set(symbol.name, [symbol]);
    }
    topLevelByName.set(facts, byName);
  }
  return byName.get(name) ?? [];
}

/**
 * What a file offers an import of `name`: its top-level declarations, or in Java a nested type or a static member
 * of its class (`import a.Outer.Inner`, `import static a.B.f`).
 */
function exported(facts: FileFacts, name: string): SymbolInfo[] {
  const own = topLevel(facts, name);
  if (own.length || facts.language !== 'java') return own;
  const member = facts.symbols.find((s) => s.name === name && s.container !== undefined);
  return member ? [member] : [];
}

/** A file's member declarations by container and name: member chains ask for one at a time, many a request. */
interface MembersByName {
  /** Annotated members (`container\0name`), in declaration order. */
  types: Map<string, TypeAnnotation[]>;
  /** The first symbol declared under each `container\0name`. */
  symbols: Map<string, SymbolInfo>;
  /** The embedded fields of each container (Go), by name. */
  embedded: Map<string, string[]>;
}

/** Per file's facts (replaced whenever the file changes), its members by container and name. */
const membersByName = new WeakMap<FileFacts, MembersByName>();

function membersOf(facts: FileFacts): MembersByName {
  let members = membersByName.get(facts);
  if (!members) {
    members = { types: new Map(), symbols: new Map(), embedded: new Map() };
    for (const t of facts.types) {
      if (t.container === undefined) continue;
      const key = `${t.container}\0${t.name}`;
      const list = members.types.get(key);
      if (list) list.push(t);
      else members.types.set(key, [t]);
    }
    for (const symbol of facts.symbols) {
      const key = `${symbol.container}\0${symbol.name}`;
      if (symbol.container !== undefined && !members.symbols.has(key)) members.symbols.set(key, symbol);
      if (symbol.embedded && symbol.container !== undefined)
        members.embedded.set(symbol.container, [...(members.embedded.get(symbol.container) ?? []), symbol.name]);
    }
    membersByName.set(facts, members);
  }
  return members;
}

/** Names after `extends` / `implements` / Python bases / Rust `impl X for`. */
export function supertypes(signature: string): string[] {
  const names: string[] = [];
  const heritage = /\b(?:extends|implements)\s+([^{]+)/g;
  for (const m of signature.matchAll(heritage)) {
    for (const part of m[1].split(/,|\bimplements\b/)) {
      const head = /^\s*([A-Za-z_$][\w$.]*)/.exec(part);
      if (head) names.push(head[1].split('.').pop()!);
    }
  }
  const pythonBases = /^\s*class\s+\w+\s*\(([^)]*)\)/.exec(signature);
  if (pythonBases) for (const base of pythonBases[1].split(',')) names.push(base.trim().split('.').pop()!);
  // Rust: `impl<T> Trait<T> for Type`, and the supertraits of `trait A: B + C`.
  if (/^\s*(?:#|pub|unsafe|impl|trait)/.test(signature)) {
    let plain = signature.replace(RUST_ATTRIBUTES, '');
    while (/<[^<>]*>/.test(plain)) plain = plain.replace(/<[^<>]*>/g, '');
    const implemented = /^\s*(?:unsafe\s+)?impl\s+!?([\w:]+)\s+for\s/.exec(plain);
    if (implemented) names.push(implemented[1].split('::').pop()!);
    const bounds = /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+\w+\s*:([^{]+?)(?:\bwhere\b|$)/.exec(plain);
    if (bounds)
      for (const bound of bounds[1].split('+')) {
        const head = /^\s*([\w:]+)/.exec(bound.replace(/^\s*\?/, ''));
        if (head) names.push(head[1].split('::').pop()!);
      }
  }
  return names.filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && !BUILTIN_TYPES.has(n));
}

/** Capitalised identifiers in a chunk: the types its signatures mention. */
function typeNamesOf(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/\b[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*\b/g))
    if (!BUILTIN_TYPES.has(m[0])) names.add(m[0]);
  return [...names].slice(0, 12);
}

/** What the current file's text declares where the index does not look (inside function bodies). */
interface LocalDeclarations {
  /** `x: Foo`, `x = new Foo(`, `x as Foo` → x → [Foo]. */
  types: Map<string, string[]>;
  /** `x = a.b.c(` → x → 'a.b.c'. */
  calls: Map<string, string>;
  /** Names declared by `const`/`let`/`var`/`function`/`class` or as parameters. */
  declared: Set<string>;
}

// Each starts only where a name starts (after a character no name holds, or at the start): tried inside a name, a
// pattern fails after re-reading the rest of it. The name is matched atomically (`(?=(…))\1`): what follows it never
// starts with a name's character, so giving characters of it back cannot match. Consuming the character before the
// name, rather than looking behind, lets the engine skip most positions at once (a third of the scan on 2,000-line
// files); the call's `(` is looked ahead at, so a call nested in the arguments (`a = f(b = g(`) still starts a match.
const LOCAL_TYPE =
  /(?:^|[^\w$#])(?=(#?[A-Za-z_$][\w$]*))\1\??\s*(?::\s*|=\s*new\s+|=\s*await\s+new\s+|\sas\s+)([A-Z][\w$]*)/g;
const LOCAL_CALL = /(?:^|[^\w$#])(?=(#?[A-Za-z_$][\w$]*))\1\s*=\s*(?:await\s+)?([A-Za-z_$][\w$.]*)(?=\s*[(<])/g;
const LOCAL_DECLARATION = /\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)|[(,]\s*([A-Za-z_$][\w$]*)\s*[:,)=]/g;

/** Go: `x := &pkg.T{`, `x := T{` (a composite literal, of any type's case) and `var x *pkg.T`. */
const GO_LOCAL_TYPE =
  /(?:^|[^\w])(?=([A-Za-z_]\w*))\1\s*:=\s*&?(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*\{|\bvar\s+([A-Za-z_]\w*)\s+\*?(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)/g;
/** Go: `x := f(`, `x, err := pkg.New(` (the first name has the call's first result). */
const GO_LOCAL_CALL = /(?:^|[^\w])(?=([A-Za-z_]\w*))\1(?:\s*,\s*[A-Za-z_]\w*)*\s*:?=\s*([A-Za-z_][\w.]*)(?=\s*\()/g;

/**
 * Rust: `let x = Type::new(` and `let x = Type {`: an associated function of a type called by its path is by
 * convention its constructor (`new`, `with_capacity`, `from_str`), a struct expression builds one.
 */
const RUST_LOCAL_TYPE =
  /\blet\s+(?:mut\s+)?([a-z_]\w*)\s*=\s*&?(?:mut\s+)?(?:[a-z_]\w*::)*([A-Z]\w*)\s*(?:::\s*[a-z_]\w*\s*(?:::<[^>]*>\s*)?\(|\{)/g;
/** Java: `Type<…>[] name =`, `Type name;`, `(Type name,` and `for (Type name :`: the type is written first. */
const JAVA_LOCAL_TYPE = /(?:^|[^\w$.])([A-Z][\w$]*)(?:<[^;(){}=]*>)?(?:\[\])*\s+([a-z_$][\w$]*)\s*(?=[=;:,)])/g;

/** One pass of each pattern over the file, instead of one per identifier (Go's, Rust's and Java's own patterns too). */
function scanLocalDeclarations(text: string, language: string): LocalDeclarations {
  const go = language === 'go';
  const types = new Map<string, string[]>();
  const addType = (name: string, typeName: string): void => {
    const known = types.get(name);
    if (!known) types.set(name, [typeName]);
    else if (!known.includes(typeName)) known.push(typeName);
  };
  for (const [, name, typeName] of text.matchAll(LOCAL_TYPE)) addType(name, typeName);
  if (go) for (const m of text.matchAll(GO_LOCAL_TYPE)) addType(m[1] ?? m[3], m[2] ?? m[4]);
  if (language === 'rust') for (const [, name, typeName] of text.matchAll(RUST_LOCAL_TYPE)) addType(name, typeName);
  const javaLocals = language === 'java' ? [...text.matchAll(JAVA_LOCAL_TYPE)] : [];
  for (const [, typeName, name] of javaLocals) addType(name, typeName);
  const calls = new Map<string, string>();
  for (const [, name, callee] of text.matchAll(go ? GO_LOCAL_CALL : LOCAL_CALL))
    if (!calls.has(name)) calls.set(name, callee);
  const declared = new Set<string>();
  for (const m of text.matchAll(LOCAL_DECLARATION)) declared.add(m[1] ?? m[2]);
  // A Java local or parameter is declared by its type: `User u`.
  for (const [, , name] of javaLocals) declared.add(name);
  return { types, calls, declared };
}

/**
 * The part of a signature that states a result: after the parameters' closing parenthesis, or after `:`. Go writes
 * it after the parameters without a marker: `func (r *R) Find(p string) (*Route, error)`.
 */
function resultText(signature: string, go: boolean): string {
  if (go) return afterGroups(signature, /^func\s*\(/.test(signature) ? 2 : 1);
  const close = signature.lastIndexOf(')');
  const tail = close >= 0 ? signature.slice(close + 1) : signature.slice(signature.indexOf(':') + 1);
  return /[:>]/.test(tail) ? tail : '';
}

/** The text after the first `groups` top-level parenthesized groups (a Go receiver, the parameters). */
function afterGroups(text: string, groups: number): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0 && --groups === 0) return text.slice(i + 1);
  }
  return '';
}
