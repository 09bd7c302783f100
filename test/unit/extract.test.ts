import * as assert from 'assert';
import { extractFacts } from '../../src/index/extract';
import { languageForPath } from '../../src/index/languages';
import { diffEdit, SourceParser } from '../../src/index/parser';
import type { FileFacts } from '../../src/index/types';
import { readFileSync } from 'fs';
import * as path from 'path';
import { FIXTURES } from '../helpers/fixtures';

const parser = new SourceParser();

async function facts(filePath: string, text: string): Promise<FileFacts> {
  const spec = languageForPath(filePath)!;
  return extractFacts(filePath, spec, text, await parser.parse(filePath, spec, text));
}

const TS = `import { Db } from './db';
import * as util from '../util';
export * from './more';

export abstract class Svc<T> extends Base implements Runner {
  private repo: UserRepo;
  constructor(private readonly db: Db) {
    super();
    this.cache = new LruCache();
  }
  async get(id: string): Promise<User> {
    const found = await this.repo.find(id);
    return found;
  }
  abstract stop(): void;
}

export interface Runner { run(task: string): boolean; }
export const double = (n: number): number => n * 2;
export enum Color { Red, Green }
`;

describe('extract: TypeScript', () => {
  it('finds symbols with kinds, containers, signatures and export flags', async () => {
    const f = await facts('src/svc.ts', TS);
    const byName = new Map(f.symbols.map((s) => [s.name, s]));
    assert.deepStrictEqual(
      [
        byName.get('Svc')?.kind,
        byName.get('get')?.kind,
        byName.get('repo')?.kind,
        byName.get('Runner')?.kind,
        byName.get('double')?.kind,
        byName.get('Color')?.kind,
      ],
      ['class', 'method', 'field', 'interface', 'function', 'enum'],
    );
    assert.strictEqual(byName.get('get')?.container, 'Svc');
    assert.strictEqual(byName.get('get')?.signature, 'async get(id: string): Promise<User>');
    assert.strictEqual(byName.get('Svc')?.signature, 'export abstract class Svc<T> extends Base implements Runner');
    assert.strictEqual(byName.get('Svc')?.exported, true);
    assert.deepStrictEqual(byName.get('Svc')?.range, { start: 4, end: 16 });
  });

  it('makes a class outline with member signatures and no bodies', async () => {
    const f = await facts('src/svc.ts', TS);
    const outline = f.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'Svc')!;
    assert.ok(outline.text.includes('async get(id: string): Promise<User>'));
    assert.ok(outline.text.includes('\n  repo: UserRepo'), 'members without their modifiers');
    assert.ok(!outline.text.includes('this.repo.find'), 'bodies are left out');
    assert.ok(f.chunks.some((c) => c.kind === 'method' && c.text.includes('this.repo.find(id)')));
  });

  it('lists parameter properties in the outline, not in the symbol table', async () => {
    const f = await facts('src/svc.ts', TS);
    const outline = f.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'Svc')!;
    assert.ok(outline.text.split('\n').includes('  db: Db'), outline.text);
    assert.strictEqual(outline.text.split('\n').length, outline.symbols.length + 1, 'one line a member');
    assert.ok(outline.symbols.includes('db'));
    assert.ok(!f.symbols.some((s) => s.name === 'db'), 'a parameter property is no declaration of the symbol table');
    assert.ok(!outline.symbols.includes('cache'), 'TypeScript attributes are declared, not assigned');
  });

  it('records imports, re-exports and declared types', async () => {
    const f = await facts('src/svc.ts', TS);
    assert.deepStrictEqual(
      f.imports.map((i) => [i.specifier, i.names, i.imported]),
      [
        ['./db', ['Db'], ['Db']],
        ['../util', ['util'], ['*']],
        ['./more', ['*'], ['*']],
      ],
    );
    const namespace = await facts('src/index.ts', "export * as errors from './errors';\n");
    assert.deepStrictEqual(namespace.imports[0].names, ['errors'], 'one name for the whole module');
    const types = new Map(f.types.map((t) => [t.name, t.typeNames]));
    assert.deepStrictEqual(types.get('repo'), ['UserRepo']);
    assert.deepStrictEqual(types.get('db'), ['Db']);
    assert.deepStrictEqual(types.get('cache'), ['LruCache']);
  });

  it('gives every chunk a distinct id when error recovery yields the same node twice', async () => {
    // Reduced from luxon's formatter.js with a line cut out (as benchmark tasks do): error recovery gives two
    // function symbols over the same rows, and the lexical index rejected the duplicate id.
    const text =
      '    const tokenToField = (token) => {\n        switch (token[0]) {\n        }\n      },\n      tokenToString = (lildur, info) => (token) => {\n}';
    for (const file of ['src/formatter.js', 'src/formatter.ts']) {
      const ids = (await facts(file, text)).chunks.map((c) => c.id);
      assert.deepStrictEqual(ids, [...new Set(ids)], file);
    }
  });

  it('still indexes what parses in a file with syntax errors', async () => {
    const f = await facts(
      'src/broken.ts',
      'export class A {\n  bad( { return\n}\nexport function fine(): number {\n  return 1;\n}\n',
    );
    assert.strictEqual(f.hasErrors, true);
    assert.ok(f.symbols.some((s) => s.name === 'fine'));
  });
});

describe('extract: other languages', () => {
  it('Python classes, methods, relative imports and attribute types', async () => {
    const f = await facts(
      'app/service.py',
      'from .models import Order as O\n\nclass Checkout(Base):\n    def __init__(self, db: Db) -> None:\n        self.order = Order("1")\n\n    def finish(self) -> float:\n        return self.order.total\n',
    );
    assert.deepStrictEqual(
      f.symbols.map((s) => [s.name, s.kind, s.container ?? '']),
      [
        ['Checkout', 'class', ''],
        ['__init__', 'method', 'Checkout'],
        ['finish', 'method', 'Checkout'],
      ],
    );
    assert.deepStrictEqual(f.imports[0], { specifier: '.models', names: ['O'], imported: ['Order'], line: 0 });
    assert.ok(f.types.some((t) => t.name === 'order' && t.typeNames[0] === 'Order'));
  });

  it('Python and JavaScript outlines list the attributes methods assign, once, after the members', async () => {
    const py = await facts(
      'app/crawler.py',
      'class Crawler:\n    limit: int = 3\n\n    def __init__(self, settings):\n        self.settings: Settings = settings.copy()\n        self.limit = 4\n        other.name = 1\n\n    def start(self):\n        self.engine = self._create_engine()\n        self.settings = None\n',
    );
    const outline = py.chunks.find((c) => c.kind === 'outline')!;
    assert.deepStrictEqual(outline.symbols, ['Crawler', 'limit', '__init__', 'start', 'settings', 'engine']);
    assert.deepStrictEqual(outline.text.split('\n').slice(-2), [
      '    self.settings: Settings = settings.copy()',
      '    self.engine = self._create_engine()',
    ]);
    assert.ok(
      !py.symbols.some((s) => s.name === 'settings' || s.name === 'engine'),
      'the symbol table keeps declarations',
    );
    const js = await facts(
      'lib/linter.js',
      'class Linter {\n  constructor(options) {\n    this.options = options;\n    this.#rules = new Map();\n  }\n  verify(text) {\n    return this.options;\n  }\n}\n',
    );
    const jsOutline = js.chunks.find((c) => c.kind === 'outline')!;
    assert.deepStrictEqual(jsOutline.symbols, ['Linter', 'constructor', 'verify', 'options', '#rules']);
    assert.ok(jsOutline.text.includes('\n  this.options = options;\n'), jsOutline.text);
  });

  it('Python annotated attributes and module-level constructions type the name, not `self`', async () => {
    const f = await facts(
      'scrapy/crawler.py',
      'types = ResponseTypes()\n\nclass Crawler:\n    def __init__(self, settings):\n        self.settings: Settings = settings.copy()\n',
    );
    assert.deepStrictEqual(
      f.types.map((t) => [t.name, t.typeNames, t.container ?? '']),
      [
        ['types', ['ResponseTypes'], ''],
        ['settings', ['Settings'], 'Crawler'],
      ],
    );
  });

  it('Go structs, receiver methods and package imports', async () => {
    const f = await facts(
      'cmd/main.go',
      'package main\n\nimport (\n\tm "example.com/x/models"\n\t"github.com/gofiber/fiber/v3"\n\t"gopkg.in/yaml.v3"\n\t"example.com/v2"\n)\n\ntype Svc struct {\n\tRepo *m.UserRepo\n}\n\nfunc (s *Svc) Get(id string) error { return nil }\n',
    );
    const get = f.symbols.find((s) => s.name === 'Get')!;
    assert.deepStrictEqual([get.kind, get.container], ['method', 'Svc']);
    assert.deepStrictEqual(
      f.imports.map((i) => [i.specifier, i.names]),
      [
        ['example.com/x/models', ['m']],
        // A major version is not the package's name.
        ['github.com/gofiber/fiber/v3', ['fiber']],
        ['gopkg.in/yaml.v3', ['yaml']],
        ['example.com/v2', ['v2']],
      ],
    );
    assert.ok(f.types.some((t) => t.name === 'Repo' && t.typeNames.includes('UserRepo')));
  });

  it('a Go type’s outline lists the methods the file declares for it, one a line without the receiver', async () => {
    const f = await facts(
      'app.go',
      'package fiber\n\n// App is the app.\ntype App struct {\n\tname string\n\n\tpool sync.Pool\n}\n\ntype Handler interface {\n\tServe(c Ctx) error\n}\n\nfunc (app *App) Get(path string, handlers ...Handler) Router {\n\treturn app\n}\n\nfunc (app *App) Name() string { return app.name }\n',
    );
    const outline = f.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'App')!;
    assert.strictEqual(
      outline.text,
      'type App struct {\n\tname string\n\tpool sync.Pool\n\tGet(path string, handlers ...Handler) Router\n\tName() string\n}',
    );
    assert.deepStrictEqual(outline.symbols, ['App', 'name', 'pool', 'Get', 'Name']);
    const iface = f.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'Handler')!;
    assert.deepStrictEqual(iface.symbols, ['Handler', 'Serve'], 'a type without receiver methods is left as it was');
  });

  it('Go: the blank identifier declares nothing; an embedded field is named by its type; the package clause', async () => {
    const f = await facts(
      'web.go',
      'package web\n\ntype Web struct {\n\t*core.Router\n\tDebug bool\n}\n\nvar _ Context = (*context)(nil)\n\nfunc handle(_ Context, n int) {}\n',
    );
    assert.ok(!f.symbols.some((s) => s.name === '_'), f.symbols.map((s) => s.name).join());
    assert.ok(!f.types.some((t) => t.name === '_'), 'no type is recorded for it either');
    assert.ok(!f.chunks.some((c) => c.symbols.includes('_')));
    const router = f.symbols.find((s) => s.name === 'Router')!;
    assert.deepStrictEqual([router.kind, router.container, router.embedded], ['field', 'Web', true]);
    assert.ok(f.types.some((t) => t.name === 'Router' && t.container === 'Web' && t.typeNames.includes('Router')));
    assert.strictEqual(f.symbols.find((s) => s.name === 'Debug')!.embedded, undefined);
    assert.strictEqual(f.package, 'web');
  });

  it('Go: a method receiver types the name the body uses for it', async () => {
    const f = await facts('app.go', 'package web\n\nfunc (app *App) Start() error {\n\treturn app.run()\n}\n');
    assert.ok(f.types.some((t) => t.name === 'app' && t.typeNames.includes('App')));
  });

  it('Rust impls, traits and use declarations', async () => {
    const f = await facts(
      'src/lib.rs',
      'use crate::models::{User, Repo};\npub trait Store { fn get(&self) -> User; }\npub struct Db { users: Vec<User> }\nimpl Db {\n    pub fn find(&self) -> Option<User> { None }\n}\n',
    );
    assert.ok(f.symbols.some((s) => s.name === 'find' && s.container === 'Db' && s.kind === 'method'));
    assert.ok(f.symbols.some((s) => s.name === 'Store' && s.kind === 'interface'));
    assert.deepStrictEqual(f.imports[0].names, ['User', 'Repo']);
  });

  it("Rust: a type's outline lists the methods of its file's impl blocks, inherent and trait; `mod x;` is an import", async () => {
    const text = readFileSync(path.join(FIXTURES, 'repos', 'rsapp', 'app', 'src', 'cache.rs'), 'utf8');
    const f = await facts('app/src/cache.rs', `mod shard;\n${text}`);
    const outline = f.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'Cache')!;
    assert.strictEqual(
      outline.text,
      [
        'pub struct Cache {',
        '    entries: HashMap<String, String>,',
        '    pub fn new() -> Self',
        '    fn get(&self, key: &str) -> Option<String>',
        '}',
      ].join('\n'),
    );
    assert.deepStrictEqual(outline.symbols, ['Cache', 'entries', 'new', 'get']);
    assert.deepStrictEqual(
      f.imports.map((i) => [i.specifier, i.names, i.imported]),
      [
        ['self::shard', ['shard'], ['*']],
        ['std::collections', ['HashMap'], ['HashMap']],
        ['app_core', ['Storage'], ['Storage']],
      ],
    );
  });

  it("Java constants and Rust variants are members of their enum's outline", async () => {
    const java = await facts(
      'src/Token.java',
      'public enum Token {\n  /** An opening brace. */\n  BEGIN,\n  END;\n\n  boolean opens() {\n    return this == BEGIN;\n  }\n}\n',
    );
    const javaOutline = java.chunks.find((c) => c.kind === 'outline')!;
    assert.deepStrictEqual(javaOutline.symbols, ['Token', 'BEGIN', 'END', 'opens']);
    assert.ok(javaOutline.text.includes('  BEGIN') && javaOutline.text.includes('  END'), javaOutline.text);
    const rust = await facts(
      'src/token.rs',
      'pub enum Token {\n    Begin,\n    Text(String),\n}\n\nimpl Token {\n    pub fn opens(&self) -> bool {\n        true\n    }\n}\n',
    );
    const rustOutline = rust.chunks.find((c) => c.kind === 'outline' && c.symbols[0] === 'Token')!;
    assert.deepStrictEqual(rustOutline.symbols, ['Token', 'Begin', 'Text', 'opens']);
  });

  it('Java classes, fields and imports', async () => {
    const f = await facts(
      'src/A.java',
      'import com.x.models.User;\npublic class Svc {\n  private UserRepo repo;\n  public User get(String id) { return repo.find(id); }\n}\n',
    );
    assert.ok(f.symbols.some((s) => s.name === 'get' && s.container === 'Svc'));
    assert.deepStrictEqual(f.imports[0].specifier, 'com.x.models.User');
    assert.ok(f.types.some((t) => t.name === 'repo' && t.typeNames[0] === 'UserRepo'));
  });
});

describe('incremental parsing', () => {
  it('diffEdit describes the changed span', () => {
    const edit = diffEdit('abc\ndef\n', 'abc\ndXef\n')!;
    assert.deepStrictEqual([edit.startIndex, edit.oldEndIndex, edit.newEndIndex], [5, 5, 6]);
    assert.deepStrictEqual(edit.startPosition, { row: 1, column: 1 });
  });

  it('an incremental reparse gives the same facts as a fresh parse', async () => {
    const before = TS;
    const after = TS.replace('abstract stop(): void;', 'abstract stop(): void;\n  restart(delay: number): void {}');
    await parser.parse('inc.ts', languageForPath('inc.ts')!, before);
    const incremental = await facts('inc.ts', after);
    const fresh = extractFacts(
      'other.ts',
      languageForPath('other.ts')!,
      after,
      await new SourceParser().parse('other.ts', languageForPath('other.ts')!, after),
    );
    assert.deepStrictEqual(incremental.symbols, fresh.symbols);
    assert.ok(incremental.symbols.some((s) => s.name === 'restart'));
  });
});
