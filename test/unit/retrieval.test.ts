import * as assert from 'assert';
import { readFileSync } from 'fs';
import * as path from 'path';
import { RepoIndex } from '../../src/index/repoIndex';
import { baseName } from '../../src/index/relPath';
import { seededRandom } from '../../src/index/seededRandom';
import { buildIndex } from '../../src/index/workspace';
import { cutToFit, dedent, focusOutline, packSnippets, withoutCommentLines } from '../../src/retrieval/pack';
import { linesBetween } from '../../src/index/cursor';
import { formQuery } from '../../src/retrieval/query';
import { DefinitionRetriever, type DefinitionHit } from '../../src/retrieval/definitions';
import { retrievalContext, retrieve } from '../../src/retrieval/retrieve';
import type { Snippet } from '../../src/retrieval/types';
import { renderCommentBlocks, REPOFORMER_HEADER } from '../../src/retrieval/verbalize';
import { FIXTURES, SHOP, tempDir, writeFiles } from '../helpers/fixtures';

let index: RepoIndex;
before(async () => {
  index = new RepoIndex(SHOP);
  await buildIndex(index, { root: SHOP });
});

const SERVICE = `import { UserRepo } from '../db/userRepo';

export class AdminService {
  constructor(private readonly repo: UserRepo) {}

  async stats() {
    const n = 1;
    return this.repo.
  }
}
`;

/** Indexes `files` in a temporary folder for `check`, then removes both. */
async function withRepo(files: Record<string, string>, check: (repo: RepoIndex) => void): Promise<void> {
  const { dir, cleanup } = await tempDir();
  const repo = new RepoIndex(dir);
  try {
    await writeFiles(dir, files);
    await buildIndex(repo, { root: dir });
    check(repo);
  } finally {
    repo.dispose();
    await cleanup();
  }
}

describe('retrieval', () => {
  it('follows a member chain through the declared type to the class outline', () => {
    const result = retrieve(index, {
      path: 'src/services/admin.ts',
      text: SERVICE,
      cursor: { line: 7, character: 21 },
    });
    const top = result.snippets[0];
    assert.strictEqual(top.path, 'src/db/userRepo.ts');
    assert.strictEqual(top.retriever, 'definition');
    assert.match(top.why, /UserRepo/);
    assert.ok(top.text.includes('countActiveUsers(): Promise<number>'), 'the outline lists the member the line needs');
    assert.ok(result.timings.totalMs >= 0);
  });

  it('never returns the current file, and stays within the budget', () => {
    const text = '' + SERVICE;
    const result = retrieve(index, {
      path: 'src/db/userRepo.ts',
      text,
      cursor: { line: 7, character: 21 },
      budget: 400,
    });
    assert.ok(result.snippets.every((s) => s.path !== 'src/db/userRepo.ts'));
    const cost = result.snippets.reduce((sum, s) => sum + s.path.length + s.text.length + 2, 0);
    assert.ok(cost <= 400, `packed ${cost} characters`);
  });

  it('says which of the names asked about another file declares', () => {
    const names = ['countActiveUsers', 'stats', 'UserRepo', 'noSuchName'];
    const asked = retrieve(index, {
      path: 'src/services/admin.ts',
      text: SERVICE,
      cursor: { line: 7, character: 21 },
      names,
    });
    assert.deepStrictEqual(asked.declaredElsewhere, ['countActiveUsers', 'UserRepo']);
    const fromItsOwnFile = retrieve(index, {
      path: 'src/db/userRepo.ts',
      text: SERVICE,
      cursor: { line: 7, character: 21 },
      names,
    });
    assert.deepStrictEqual(
      fromItsOwnFile.declaredElsewhere,
      [],
      'a name declared only in the current file is not elsewhere',
    );
    assert.strictEqual(
      retrieve(index, { path: 'src/services/admin.ts', text: SERVICE, cursor: { line: 7, character: 21 } })
        .declaredElsewhere,
      undefined,
    );
  });

  it('uses the draft for the second-iteration query', () => {
    const q = formQuery('a\nb\n', { line: 1, character: 1 }, 'countActiveUsers()');
    assert.ok(q.lexicalText.endsWith('countActiveUsers()'));
    assert.strictEqual(q.anchors[0].name, 'countActiveUsers');
  });

  it('reads the lines around the cursor as a split of the whole text would, without splitting it', () => {
    for (const text of ['', 'one', 'a\nb', 'a\nb\n', '\n\n', 'x\ny\nz\n\nw']) {
      for (let from = -2; from < 7; from++)
        for (let to = Math.max(0, from); to < 9; to++)
          assert.deepStrictEqual(
            linesBetween(text, from, to),
            text.split('\n').slice(Math.max(0, from), to),
            `${JSON.stringify(text)} ${from}-${to}`,
          );
    }
  });

  it('resolves Python attribute types and Go package members', () => {
    const py = retrieve(index, {
      path: 'app/report.py',
      text: 'from .models import Order\n\nclass Report:\n    def __init__(self):\n        self.order = Order("x", 1.0)\n\n    def total(self):\n        return self.order.\n',
      cursor: { line: 7, character: 26 },
    });
    // The definition path finds Order's outline through the attribute's type (a sibling's whole-file window that
    // calls the same method may come first: it is strong similar evidence).
    assert.ok(
      py.snippets.some((s) => s.retriever === 'definition' && s.text.includes('def apply_discount')),
      py.snippets.map((s) => s.path).join(),
    );
    const go = retrieve(index, {
      path: 'cmd/tool/main.go',
      text: 'package main\n\nimport "example.com/shop/pkg/store"\n\nfunc run(inv *store.Inventory) {\n\tinv.\n}\n',
      cursor: { line: 5, character: 5 },
    });
    assert.ok(go.snippets.some((s) => s.path === 'pkg/store/store.go'));
  });

  it('reads `from package import module` as a namespace import of that module', async () => {
    const STATS =
      'from crawl import signals\n\ndef connect(crawler):\n    crawler.connect(handler, signals.engine_started)\n    \n';
    const HOOKS = 'from crawl.middleware import signals\n\ndef connect():\n    return signals()\n';
    await withRepo(
      {
        'crawl/__init__.py': 'from .engine import Engine\n',
        'crawl/engine.py': 'class Engine:\n    def start(self):\n        pass\n',
        'crawl/signals.py': 'engine_started = object()\nresponse_downloaded = object()\nitem_dropped = object()\n',
        'crawl/middleware.py': 'def signals():\n    return []\n',
        'crawl/stats.py': STATS,
        'crawl/hooks.py': HOOKS,
      },
      (repo) => {
        const asModule = retrieve(repo, {
          path: 'crawl/stats.py',
          text: STATS,
          cursor: { line: 4, character: 4 },
          retrievers: ['definition'],
        });
        const outline = asModule.snippets.find((s) => s.path === 'crawl/signals.py');
        assert.ok(outline, asModule.snippets.map((s) => s.path).join());
        assert.match(outline.text, /from crawl import signals/);
        assert.ok(outline.text.includes('response_downloaded'), 'the module lists what the next line may name');
        // A module that declares the imported name is not a namespace import of a same-named submodule.
        const declared = retrieve(repo, {
          path: 'crawl/hooks.py',
          text: HOOKS,
          cursor: { line: 3, character: 4 },
        });
        assert.ok(
          declared.snippets.some((s) => s.text.startsWith('def signals')),
          declared.snippets.map((s) => s.text).join('|'),
        );
      },
    );
  });

  it('follows `export * as ns` to the module a named import of ns stands for', async () => {
    const VIEW =
      "import { AppError, ErrorData } from './errors/index';\n\nexport function view() {\n  throw new AppError(ErrorData.NotFound);\n  \n}\n";
    await withRepo(
      {
        'src/errors/index.ts': "export * as ErrorData from './data';\nexport { AppError } from './error';\n",
        'src/errors/error.ts': 'export class AppError extends Error {}\n',
        'src/errors/data.ts': 'export const NotFound = { code: 404 };\nexport const Forbidden = { code: 403 };\n',
        'src/view.ts': VIEW,
      },
      (repo) => {
        const result = retrieve(repo, {
          path: 'src/view.ts',
          text: VIEW,
          cursor: { line: 4, character: 2 },
          retrievers: ['definition'],
        });
        const data = result.snippets.find((s) => s.path === 'src/errors/data.ts');
        assert.ok(data?.text.includes('Forbidden'), result.snippets.map((s) => `${s.path}: ${s.text}`).join('\n'));
      },
    );
  });

  it('offers the file of a Go package that declares the members used nearby, under a Go import line', async () => {
    const HANDLER =
      'package cors\n\nimport "example.com/web/v3"\n\nfunc handle(c web.Ctx) {\n\tif allowed(c) {\n\t\tc.Set(web.HeaderOrigin, "*")\n\t}\n\t\n}\n';
    await withRepo(
      {
        'go.mod': 'module example.com/web/v3\n',
        'constants.go': `package web\n\nconst (\n${Array.from({ length: 8 }, (_, i) => `\tHeaderName${i} = "h${i}"`).join('\n')}\n\tHeaderOrigin = "Origin"\n\tHeaderVary = "Vary"\n)\n`,
        'app.go': 'package web\n\ntype Map map[string]any\n\ntype Config struct {\n\tName string\n}\n',
        'ctx.go': 'package web\n\ntype Ctx interface {\n\tSet(key, value string)\n}\n',
        'middleware/cors/cors.go': HANDLER,
        'middleware/cors/allow.go': 'package cors\n\nfunc allowed(c web.Ctx) bool {\n\treturn true\n}\n',
        'middleware/csrf/allow.go': 'package csrf\n\nfunc allowed(token string) bool {\n\treturn false\n}\n',
      },
      (repo) => {
        const result = retrieve(repo, {
          path: 'middleware/cors/cors.go',
          text: HANDLER,
          cursor: { line: 8, character: 1 },
          retrievers: ['definition'],
        });
        const paths = result.snippets.map((s) => s.path);
        // The package's unexported function, not the other package's namesake.
        assert.ok(
          paths.includes('middleware/cors/allow.go') && !paths.includes('middleware/csrf/allow.go'),
          paths.join(),
        );
        const constants = result.snippets.find((s) => s.path === 'constants.go');
        assert.ok(constants, paths.join());
        assert.ok(constants.text.startsWith('import web "example.com/web/v3"'), constants.text);
        assert.ok(constants.text.includes('HeaderVary'));
        assert.ok(paths.indexOf('constants.go') < paths.indexOf('app.go') || !paths.includes('app.go'), paths.join());
      },
    );
  });

  describe('Go package scope (fixture goweb: package web, its middleware and five contrib packages)', () => {
    const GOWEB = path.join(FIXTURES, 'repos', 'goweb');
    const LOGGER = readFileSync(path.join(GOWEB, 'middleware', 'logger.go'), 'utf8');
    let web: RepoIndex;
    before(async () => {
      web = new RepoIndex(GOWEB);
      await buildIndex(web, { root: GOWEB });
    });
    after(() => web.dispose());

    const at = (text: string, line: number, retrievers?: ('definition' | 'lexical')[]) =>
      retrieve(web, { path: 'middleware/logger.go', text, cursor: { line, character: 0 }, retrievers }).snippets;
    const show = (snippets: Snippet[]) => snippets.map((s) => `${s.path}: ${s.why}`).join('\n');

    it('resolves a name to its declaration in another file of the package, however many packages declare it', () => {
      // Row 11 is `config.Skipper = DefaultSkipper`; the five contrib packages declare DefaultSkipper too.
      const snippets = at(LOGGER, 12, ['definition']);
      const found = snippets.filter((s) => s.text.includes('func DefaultSkipper'));
      assert.deepStrictEqual(
        found.map((s) => s.path),
        ['middleware/middleware.go'],
        // Not the other packages' namesakes, nor gen.go's (`package main`: another package in the same folder).
        show(snippets),
      );
      // A `_test.go` file of the package is compiled for tests only: product code does not see its names.
      const viaTest = at(LOGGER.replace('DefaultSkipper', 'skipAll'), 12, ['definition']);
      assert.ok(!viaTest.some((s) => s.path === 'middleware/logger_test.go'), show(viaTest));
    });

    it('never offers a definition of the blank identifier', () => {
      const text =
        'package web\n\nfunc count(routes []string) int {\n\tn := 0\n\tfor _, r := range routes {\n\t\t_ = r\n\t\t\n';
      const snippets = retrieve(web, {
        path: 'count.go',
        text,
        cursor: { line: 6, character: 2 },
        retrievers: ['definition'],
      }).snippets;
      assert.ok(!snippets.some((s) => s.text.includes('var _ Context')), show(snippets));
    });

    it('finds a method declared in another file of the package, and one promoted from an embedded struct', () => {
      const text = readFileSync(path.join(GOWEB, 'middleware', 'mount.go'), 'utf8');
      const snippets = retrieve(web, {
        path: 'middleware/mount.go',
        text,
        cursor: { line: 7, character: 0 },
        retrievers: ['definition'],
      }).snippets;
      // Router is declared in router.go, its methods Find and Routes in routes.go; Web embeds Router.
      const routes = snippets.filter((s) => s.path === 'routes.go').map((s) => s.text);
      assert.ok(
        routes.some((t) => t.includes('Find(method, path string) HandlerFunc')),
        show(snippets),
      );
      assert.ok(
        routes.some((t) => t.includes('Routes() []string')),
        show(snippets),
      );
    });

    it('types Go locals by `:=` of a composite literal or a package function, `var`, and a method by its result', () => {
      const text = readFileSync(path.join(GOWEB, 'middleware', 'serve.go'), 'utf8');
      const { facts, query } = retrievalContext(web, {
        path: 'middleware/serve.go',
        text,
        cursor: { line: 11, character: 0 },
      });
      const hits = DefinitionRetriever.retrieve(web, facts, text, query);
      const why = hits.map((h) => `${h.chunk.path}: ${h.why}`).join('\n');
      // w := web.New() (New returns *Web); resp := &web.Response{}; var binder web.DefaultBinder. w.Find is
      // Router's, promoted through the embedded struct; its result, written without a marker, is HandlerFunc.
      for (const [file, reason] of [
        ['web.go', 'type of w'],
        ['response.go', 'type of resp'],
        ['binder.go', 'type of binder'],
        ['web.go', 'type of w.Find'],
      ])
        assert.ok(
          hits.some((h) => h.chunk.path === file && h.why === reason),
          `${file}: ${reason}\n${why}`,
        );
    });

    it("packs a same-package definition the code names before outlines of the imported package's other files", () => {
      // Row 21, ten lines below the use of DefaultSkipper; web.MiddlewareFunc, HandlerFunc and Context are used
      // nearby (web.go, context.go), the other files of package web declare nothing the code names.
      const snippets = at(LOGGER, 21);
      const definition = snippets.findIndex(
        (s) => s.path === 'middleware/middleware.go' && s.text.includes('func DefaultSkipper'),
      );
      assert.ok(definition >= 0, show(snippets));
      const unused = ['binder.go', 'errors.go', 'response.go', 'router.go'];
      const outlines = snippets
        .map((s, i) => ({ s, i }))
        .filter(({ s }) => unused.includes(s.path) && s.why.startsWith('exports of a namespace import'));
      assert.ok(
        outlines.every(({ i }) => i > definition),
        show(snippets),
      );
    });
  });

  describe('Python names (fixture pytasks: a task queue with mixins, a base service, a stub and re-exports)', () => {
    const PYTASKS = path.join(FIXTURES, 'repos', 'pytasks');
    let tasks: RepoIndex;
    before(async () => {
      tasks = new RepoIndex(PYTASKS);
      await buildIndex(tasks, { root: PYTASKS });
    });
    after(() => tasks.dispose());

    /** The definition hits for `file` cut after `prefix`, which the cut keeps of row `row`. */
    const hitsAt = (file: string, row: number, prefix: string) => {
      const lines = readFileSync(path.join(PYTASKS, file), 'utf8').split('\n');
      assert.ok(lines[row].startsWith(prefix), lines[row]);
      const text = [...lines.slice(0, row), prefix].join('\n');
      const { facts, query } = retrievalContext(tasks, {
        path: file,
        text,
        cursor: { line: row, character: prefix.length },
      });
      return DefinitionRetriever.retrieve(tasks, facts, text, query);
    };
    const show = (hits: { chunk: { path: string }; why: string }[]) =>
      hits.map((h) => `${h.chunk.path}: ${h.why}`).join('\n');
    const has = (hits: ReturnType<typeof hitsAt>, file: string, why: string, text: string) =>
      assert.ok(
        hits.some((h) => h.chunk.path === file && h.why === why && h.chunk.text.includes(text)),
        `${file}: ${why}\n${show(hits)}`,
      );

    it('types an attribute by its construction in __init__', () => {
      has(
        hitsAt('tasks/worker.py', 12, '        self.pool.'),
        'tasks/pool.py',
        'type of self.pool',
        'def terminate_job',
      );
    });

    it("finds a method of self in a mixin, and in a base class's base in another file", () => {
      has(
        hitsAt('tasks/worker.py', 13, '        self.log_event('),
        'tasks/mixins.py',
        'log_event, member of Worker',
        'def log_event(self, event, **fields)',
      );
      // Worker(LoggingMixin, Service), Service(ConsumerMixin): two classes up.
      has(
        hitsAt('tasks/worker.py', 14, '        self.drain_events('),
        'tasks/mixins.py',
        'drain_events, member of Worker',
        'def drain_events(self, timeout=None)',
      );
    });

    it('types an attribute a base class assigns, and follows the chain through it', () => {
      const hits = hitsAt('tasks/worker.py', 15, '        self.app.conf.');
      has(hits, 'tasks/app.py', 'type of self.app', 'def send_task');
      has(hits, 'tasks/app.py', 'type of self.app.conf', 'def find_value_for_key');
    });

    it("offers a class's bases with its outline: they list the members it inherits", () => {
      has(
        hitsAt('tasks/worker.py', 15, '        self.app.conf.'),
        'tasks/settings.py',
        'base BaseSettings of Settings',
        'def getbool(self, name, default=False)',
      );
    });

    it("types a chain through a class of the file's own", () => {
      has(
        hitsAt('tasks/engine.py', 13, '        return self._slot.pool.'),
        'tasks/pool.py',
        'type of self._slot.pool',
        'def maintain_pool',
      );
    });

    it('types an imported application object by the construction its module assigns it', () => {
      has(
        hitsAt('tasks/beat.py', 4, '    return current_app.'),
        'tasks/app.py',
        'type of current_app',
        'def send_task',
      );
    });

    it('offers the type of an imported instance that no nearby line names, at the import floor', async () => {
      const text = `from app import current_app\n${'\n'.repeat(70)}def tick():\n    return `;
      const files = {
        'app.py': 'class Celery:\n    def send_task(self, name):\n        return name\n\n\ncurrent_app = Celery()\n',
      };
      await withRepo({ ...files, 'beat.py': text }, (repo) => {
        const cursor = { line: 72, character: 11 };
        const { facts, query } = retrievalContext(repo, { path: 'beat.py', text, cursor });
        const hits = DefinitionRetriever.retrieve(repo, facts, text, query);
        assert.ok(
          hits.some((h) => h.chunk.path === 'app.py' && h.why === 'type of imported current_app'),
          show(hits),
        );
      });
    });

    it('reads cls in a classmethod as the class', () => {
      has(
        hitsAt('tasks/worker.py', 20, '        timeout = cls.default_timeout('),
        'tasks/mixins.py',
        'default_timeout, member of Worker',
        'def default_timeout(cls)',
      );
    });

    it("offers a module's assignments through `from . import states`", () => {
      has(
        hitsAt('tasks/worker.py', 13, "        self.log_event('revoked', state=states."),
        'tasks/states.py',
        'exports of a namespace import (from . import states)',
        "REVOKED = 'REVOKED'",
      );
    });

    it("resolves a name re-exported by a package's __init__.py to its definition", () => {
      has(
        hitsAt('app/main.py', 5, '    return signature.'),
        'tasks/core.py',
        'type of signature',
        'def apply_async(self, countdown=None)',
      );
    });

    it('resolves names from a compiled module to the .pyi stub beside it', () => {
      const hits = hitsAt('tasks/hashing.py', 5, '    buffer.');
      has(hits, 'tasks/_speedups.pyi', 'type of buffer', 'def pop_oldest(self) -> bytes: ...');
      has(
        hitsAt('tasks/hashing.py', 6, '    return fast_hash('),
        'tasks/_speedups.pyi',
        'definition of fast_hash',
        'def fast_hash',
      );
    });
  });

  /** Definition hits in `repo` for `file` cut after `prefix`, which the cut keeps of row `row`. */
  const definitionHits = (repo: RepoIndex, root: string, file: string, row: number, prefix: string) => {
    const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
    assert.ok(lines[row].startsWith(prefix), lines[row]);
    const text = [...lines.slice(0, row), prefix].join('\n');
    const { facts, query } = retrievalContext(repo, {
      path: file,
      text,
      cursor: { line: row, character: prefix.length },
    });
    return DefinitionRetriever.retrieve(repo, facts, text, query);
  };
  const showHits = (hits: { chunk: { path: string }; why: string }[]) =>
    hits.map((h) => `${h.chunk.path}: ${h.why}`).join('\n');
  const hasHit = (hits: DefinitionHit[], file: string, why: string, text: string) =>
    assert.ok(
      hits.some((h) => h.chunk.path === file && h.why === why && h.chunk.text.includes(text)),
      `${file}: ${why}\n${showHits(hits)}`,
    );

  describe('Rust names (fixture rsapp: a workspace of two crates, mod files, impl blocks apart, a trait)', () => {
    const RSAPP = path.join(FIXTURES, 'repos', 'rsapp');
    let rs: RepoIndex;
    before(async () => {
      rs = new RepoIndex(RSAPP);
      await buildIndex(rs, { root: RSAPP });
    });
    after(() => rs.dispose());
    const hitsAt = (file: string, row: number, prefix: string) => definitionHits(rs, RSAPP, file, row, prefix);

    it('binds a `mod` declaration to its module file', () => {
      hasHit(
        hitsAt('app/src/main.rs', 8, '    let cfg = config::'),
        'app/src/config.rs',
        "exports of a namespace import (import * as config from 'self::config')",
        'pub fn load_from_env() -> Config',
      );
    });

    it("offers a type's impl blocks from the other files of its crate, and finds a method in one", () => {
      const hits = hitsAt('app/src/worker.rs', 10, '        let response = server.');
      hasHit(hits, 'app/src/server/mod.rs', 'type of server', 'pub struct Server');
      hasHit(hits, 'app/src/server/handlers.rs', 'impl block of Server', 'pub fn handle_request(&self, path: &str)');
      hasHit(
        hitsAt('app/src/worker.rs', 10, '        let response = server.handle_request('),
        'app/src/server/handlers.rs',
        'handle_request, member of Server',
        'pub fn handle_request(&self, path: &str) -> Response',
      );
    });

    it('finds a method a trait provides to the types that implement it', () => {
      hasHit(
        hitsAt('app/src/worker.rs', 15, '        self.server.cache.get_or('),
        'core/src/lib.rs',
        'get_or, member of Cache',
        'fn get_or(&self, key: &str, default: &str) -> String',
      );
    });
  });

  describe('Java names (fixture jshop: packages, a wildcard and a static import, a class hierarchy)', () => {
    const JSHOP = path.join(FIXTURES, 'repos', 'jshop');
    const SERVICE = 'src/main/java/com/shop/service/OrderService.java';
    const at = (file: string) => `src/main/java/com/shop/${file}`;
    let java: RepoIndex;
    before(async () => {
      java = new RepoIndex(JSHOP);
      await buildIndex(java, { root: JSHOP });
    });
    after(() => java.dispose());
    const hitsAt = (row: number, prefix: string) => definitionHits(java, JSHOP, SERVICE, row, prefix);

    it('sees the classes of its own package without an import, public or not', () => {
      hasHit(
        hitsAt(7, '        long checked = '),
        at('service/BaseService.java'),
        'definition of BaseService',
        'void auditEvent(',
      );
    });

    it('resolves a wildcard import and a static import', () => {
      hasHit(
        hitsAt(11, '        if (customer.'),
        at('model/Customer.java'),
        'type of customer',
        'boolean isVerified()',
      );
      hasHit(
        hitsAt(7, '        long checked = requirePositive('),
        at('util/Checks.java'),
        'definition of requirePositive',
        'public static long requirePositive(long value, String what)',
      );
    });

    it('finds fields and methods through the class hierarchy, with an implicit this', () => {
      hasHit(
        hitsAt(8, '        Order order = this.orders.'),
        at('service/OrderRepository.java'),
        'type of this.orders',
        'Order findById(long id)',
      );
      hasHit(
        hitsAt(9, '        auditEvent('),
        at('service/BaseService.java'),
        'auditEvent, member of OrderService',
        'protected void auditEvent(',
      );
      hasHit(
        hitsAt(12, '            order.markUpdated('),
        at('model/Entity.java'),
        'markUpdated, member of Order',
        'protected void markUpdated()',
      );
      hasHit(hitsAt(12, '            order.'), at('model/Entity.java'), 'base Entity of Order', 'long getId()');
    });
  });

  it('shows what followed the code most similar to the lines before the cursor', async () => {
    // A 40-line function whose first 20 lines read like the current file's, then a call it makes next.
    const similar = Array.from({ length: 20 }, (_, i) => `  const ledger${i} = accounts.tally${i}(journal, period);`);
    const after = Array.from({ length: 20 }, (_, i) =>
      i === 2 ? '  finalizeLedgerBatch(journal, period);' : `  audit.note${i}(period);`,
    );
    const { dir, cleanup } = await tempDir();
    try {
      await writeFiles(dir, {
        'src/close.ts': `export function closePeriod(accounts, journal, period, audit) {\n${[...similar, ...after].join('\n')}\n}\n`,
      });
      const repo = new RepoIndex(dir);
      await buildIndex(repo, { root: dir });
      const text = `export function reopen(accounts, journal, period) {\n${similar.join('\n')}\n  \n}\n`;
      const result = retrieve(repo, { path: 'src/reopen.ts', text, cursor: { line: 21, character: 2 } });
      const window = result.snippets.find((s) => s.path === 'src/close.ts');
      assert.ok(window, 'the similar function is retrieved');
      assert.ok(window.text.includes('finalizeLedgerBatch(journal, period);'), 'the lines after the match are shown');
      assert.ok(window.range.start > 1, 'the window starts inside the match, not at the function header');
      repo.dispose();
    } finally {
      await cleanup();
    }
  });

  it('ranks the outline of the type at the cursor above small types nearby, however long the outline', async () => {
    const members = Array.from(
      { length: 80 },
      (_, i) => `  handleRequestNumber${i}(input: string): Promise<void> { return this.queue(input); }`,
    );
    const { dir, cleanup } = await tempDir();
    try {
      await writeFiles(dir, {
        'src/big.ts': `export class BigService {\n${members.join('\n')}\n}\n`,
        'src/alpha.ts': 'export class Alpha {\n  start(): void {}\n  stop(): void {}\n}\n',
        'src/beta.ts': 'export class Beta {\n  start(): void {}\n  stop(): void {}\n}\n',
      });
      const repo = new RepoIndex(dir);
      await buildIndex(repo, { root: dir });
      const text = [
        "import { BigService } from './big';",
        "import { Alpha } from './alpha';",
        "import { Beta } from './beta';",
        'export function run(big: BigService, a: Alpha, b: Beta) {',
        '  a.start(); b.start();',
        '  const n = 1;',
        '  big.',
        '}',
      ].join('\n');
      const result = retrieve(repo, { path: 'src/run.ts', text, cursor: { line: 6, character: 6 } });
      assert.strictEqual(
        result.snippets[0].path,
        'src/big.ts',
        result.snippets.map((s) => `${s.path} ${s.score.toFixed(3)}`).join('; '),
      );
      assert.match(result.snippets[0].text, /handleRequestNumber/);
      repo.dispose();
    } finally {
      await cleanup();
    }
  });

  it('keeps the members of a huge outline that code like the lines before the cursor went on to use', async () => {
    const members = Array.from({ length: 80 }, (_, i) => `  handleRequestNumber${i}(input: string): void {}`);
    const shared = Array.from({ length: 20 }, (_, i) => `  const ledger${i} = accounts.tally${i}(journal, period);`);
    const { dir, cleanup } = await tempDir();
    try {
      await writeFiles(dir, {
        'src/big.ts': `export class BigService {\n${members.join('\n')}\n}\n`,
        // The first members are used in more files: the repository-wide prior alone would list them first.
        ...Object.fromEntries(
          [1, 2, 3].map((n) => [
            `lib/use${n}.ts`,
            `export function use${n}(b) {\n${members
              .slice(0, 20)
              .map((_, i) => `  b.handleRequestNumber${i}();`)
              .join('\n')}\n}\n`,
          ]),
        ),
        'src/close.ts': [
          "import { BigService } from './big';",
          'export function closePeriod(accounts, journal, period, svc: BigService) {',
          ...shared,
          '  svc.handleRequestNumber77(period);',
          '}',
        ].join('\n'),
      });
      const repo = new RepoIndex(dir);
      await buildIndex(repo, { root: dir });
      const text = [
        "import { BigService } from './big';",
        'export function reopen(accounts, journal, period, svc: BigService) {',
        ...shared,
        '  svc.',
        '}',
      ].join('\n');
      const result = retrieve(repo, { path: 'src/reopen.ts', text, cursor: { line: 22, character: 6 } });
      const outline = result.snippets.find((s) => s.path === 'src/big.ts');
      assert.ok(outline, result.snippets.map((s) => s.path).join('; '));
      assert.ok(outline.text.length < members.join('\n').length, 'the outline is focused');
      assert.match(outline.text, /handleRequestNumber77\b/);
      repo.dispose();
    } finally {
      await cleanup();
    }
  });

  it('follows a re-export chain anew once a file on it changes what it exports, and through edits of the others', async () => {
    const { dir, cleanup } = await tempDir();
    const repo = new RepoIndex(dir);
    const use = "import { Alpha } from './index';\n\nconst x = new Alpha();\nx.";
    const definitionOfAlpha = (): Snippet | undefined =>
      retrieve(repo, {
        path: 'src/use.ts',
        text: use,
        cursor: { line: 3, character: 2 },
        retrievers: ['definition'],
      }).snippets.find((s) => s.text.includes('class Alpha'));
    try {
      await writeFiles(dir, {
        'src/index.ts': "export * from './a';\nexport * from './b';\n",
        'src/a.ts': 'export class Alpha {\n  run(): void {}\n}\n',
        'src/b.ts': 'export function helper(): number {\n  return 1;\n}\n',
        'src/use.ts': use,
      });
      await buildIndex(repo, { root: dir });
      assert.strictEqual(definitionOfAlpha()?.path, 'src/a.ts');
      // Alpha moves from a.ts to b.ts: the chain's answer is not the one found before.
      await repo.update('src/a.ts', 'export const other = 1;\n');
      await repo.update('src/b.ts', 'export class Alpha {\n  fly(): void {}\n}\n');
      const moved = definitionOfAlpha();
      assert.strictEqual(moved?.path, 'src/b.ts');
      assert.match(moved.text, /fly\(\)/);
      // Typing in a.ts (still no Alpha) keeps the answer; typing in b.ts moves its lines.
      await repo.update('src/a.ts', 'export const other = 1;\n\nfunction local() {\n  return other;\n}\n');
      assert.strictEqual(definitionOfAlpha()?.path, 'src/b.ts');
      await repo.update('src/b.ts', '\n\nexport class Alpha {\n  fly(): void {}\n  land(): void {}\n}\n');
      const edited = definitionOfAlpha();
      assert.strictEqual(edited?.range.start, 2);
      assert.match(edited.text, /land\(\)/);
    } finally {
      repo.dispose();
      await cleanup();
    }
  });

  it('serves the same definitions from the kept export-chain ends as a fresh index, through random edits', async () => {
    const { dir, cleanup } = await tempDir();
    const next = seededRandom(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
    const names = ['Alpha', 'Beta', 'Gamma', 'Delta'];
    const leaves = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'];
    // Each leaf exports some of the names (each a class with a member of its own file); barrels re-export leaves.
    const leafText = (file: string, exported: readonly string[]): string =>
      exported.map((n) => `export class ${n} {\n  from_${baseName(file)}(): void {}\n}\n`).join('');
    const barrelText = (targets: readonly string[]): string =>
      targets.map((t) => `export * from './${t.replace(/^src\//, '').replace(/\.ts$/, '')}';\n`).join('');
    const files: Record<string, string> = {
      'src/index.ts': barrelText(['inner', 'src/a.ts']),
      'src/inner.ts': barrelText(['src/b.ts', 'src/c.ts']),
      'src/other.ts': barrelText(['src/d.ts', 'inner']),
      'src/use.ts': '',
    };
    for (const leaf of leaves)
      files[leaf] = leafText(
        leaf,
        names.filter(() => next() < 0.4),
      );
    const uses = ['index', 'other'].flatMap((barrel) =>
      names.map((name) => `import { ${name} } from './${barrel}';\n\nconst x = new ${name}();\nx.`),
    );
    const answers = async (repo: RepoIndex): Promise<string[]> => {
      const out: string[] = [];
      for (const text of uses) {
        await repo.update('src/use.ts', text);
        const result = retrieve(repo, {
          path: 'src/use.ts',
          text,
          cursor: { line: 3, character: 2 },
          retrievers: ['definition'],
        });
        out.push(result.snippets.map((s) => `${s.path}:${s.text}`).join('|'));
      }
      return out;
    };
    const warm = new RepoIndex(dir);
    try {
      await writeFiles(dir, files);
      await buildIndex(warm, { root: dir });
      let found = 0;
      for (let step = 0; step < 40; step++) {
        await answers(warm);
        // A leaf gains or loses names, or a barrel re-exports other files, or only a body changes.
        const roll = next();
        if (roll < 0.6) {
          const leaf = pick(leaves);
          files[leaf] = leafText(
            leaf,
            names.filter(() => next() < 0.4),
          );
        } else if (roll < 0.8) {
          const barrel = pick(['src/inner.ts', 'src/other.ts']);
          files[barrel] = barrelText(leaves.filter(() => next() < 0.5));
        } else {
          const leaf = pick(leaves);
          files[leaf] = `${files[leaf]}\nfunction body${step}() {\n  return ${step};\n}\n`;
        }
        await writeFiles(dir, files);
        for (const [file, text] of Object.entries(files)) await warm.update(file, text);
        const fresh = new RepoIndex(dir);
        try {
          await buildIndex(fresh, { root: dir });
          const kept = await answers(warm);
          assert.deepStrictEqual(kept, await answers(fresh), `step ${step}`);
          found += kept.filter((a) => a.includes('class ')).length;
        } finally {
          fresh.dispose();
        }
      }
      assert.ok(found > 40, `the chains lead somewhere often enough to test them (${found})`);
    } finally {
      warm.dispose();
      await cleanup();
    }
  });

  it('types a local from the declarations near the cursor, not from a namesake thousands of lines away', () => {
    const filler = Array.from({ length: 900 }, (_, i) => `const filler${i} = ${i};`).join('\n');
    const text = [
      "import { Wrong } from './wrong';",
      "import { Right } from './right';",
      'function far() {',
      '  const box: Wrong = make();',
      '}',
      filler,
      'function near() {',
      '  const item: Right = make();',
      '  box.',
    ].join('\n');
    const lines = text.split('\n');
    return withRepo(
      {
        'src/wrong.ts': 'export class Wrong {\n  a(): void {}\n}\n',
        'src/right.ts': 'export class Right {\n  b(): void {}\n}\n',
        'src/big.ts': text,
      },
      (repo) => {
        const at = (line: string) => {
          const cursor = { line: lines.length - 1, character: 6 };
          const edited = [...lines.slice(0, -1), line].join('\n');
          return retrieve(repo, { path: 'src/big.ts', text: edited, cursor, retrievers: ['definition'] }).snippets;
        };
        assert.ok(!at('  box.').some((s) => /type of box/.test(s.why)), 'the far `box` is another variable');
        assert.ok(at('  item.').some((s) => s.path === 'src/right.ts' && /type of item/.test(s.why)));
      },
    );
  });

  it('never puts secrets into its output', () => {
    const text = 'const token = process.env.SHOP_API_TOKEN;\n// UserRepo findByEmail hunter2 sk-live\n';
    const result = retrieve(index, { path: 'src/x.ts', text, cursor: { line: 1, character: 10 }, budget: 16000 });
    const output = JSON.stringify(result) + renderCommentBlocks(result.snippets, 'src/x.ts');
    for (const secret of ['sk-live-9f8e7d6c5b4a', 'hunter2', 'BEGIN PRIVATE KEY'])
      assert.ok(!output.includes(secret), secret);
    assert.ok(result.snippets.length > 0, 'the query does retrieve other files');
  });
});

describe('packing and verbalization', () => {
  const snippet = (text: string, path = 'a.ts', score = 1): Snippet => ({
    path,
    range: { start: 0, end: text.split('\n').length },
    text,
    retriever: 'lexical',
    why: '',
    score,
  });

  it('cuts a long definition at a syntactic boundary', () => {
    const body = 'function f() {\n  const a = 1;\n  const b = 2;\n  return a + b;\n}';
    assert.strictEqual(cutToFit(body, 30), 'function f() {\n  const a = 1;');
  });

  it('drops overlapping text and respects the budget', () => {
    const outline = snippet('class A {\n  run(): void\n}');
    const { packed, dropped } = packSnippets([outline, snippet('  run(): void'), snippet('x'.repeat(50), 'b.ts')], 120);
    assert.deepStrictEqual(
      packed.map((s) => s.path),
      ['a.ts', 'b.ts'],
    );
    assert.strictEqual(dropped.length, 1);
  });

  it('packs windows without their common indentation, and knows an indented window inside a packed function', () => {
    assert.strictEqual(dedent('    if (a) {\n      b();\n\n    }'), 'if (a) {\n  b();\n\n}');
    assert.strictEqual(dedent('x\n  y'), 'x\n  y');
    const fn = {
      ...snippet('function f() {\n  const a = 1;\n  return a;\n}', 'f.ts', 2),
      range: { start: 10, end: 14 },
    };
    const inner = { ...snippet('    const a = 1;\n    return a;', 'f.ts', 1), range: { start: 11, end: 13 } };
    const deep = snippet('        callOne();\n        callTwo();', 'g.ts', 0.5);
    const { packed } = packSnippets([fn, inner, deep], 2000);
    assert.deepStrictEqual(
      packed.map((s) => s.text),
      [fn.text, 'callOne();\ncallTwo();'],
    );
  });

  it('focuses an oversized outline on the highest-priority members, then lists more names', () => {
    const members = Array.from({ length: 40 }, (_, i) => `member${i}`);
    const text = [
      'export class Big {',
      ...members.map((m) => `  ${m}(value: string, other: number): Promise<void>`),
      '}',
    ].join('\n');
    const focused = focusOutline(text, members, 900, (name) =>
      name === 'member33' ? 10 : name === 'member7' ? 5 : 0,
    )!;
    const lines = focused.split('\n');
    assert.strictEqual(lines[0], 'export class Big {');
    assert.strictEqual(lines[lines.length - 1], '}');
    const at7 = lines.findIndex((l) => l.includes('member7('));
    const at33 = lines.findIndex((l) => l.includes('member33('));
    assert.ok(at7 > 0 && at33 > at7, 'the preferred members keep their signatures, in source order');
    assert.match(lines[lines.length - 2], /^ {2}… also: member\d+, member\d+/);
    assert.ok(focused.length <= 900, `${focused.length} characters`);
  });

  it('limits an outline and a long definition in the first pass, so the next candidates still fit', () => {
    const members = Array.from({ length: 30 }, (_, i) => `member${i}`);
    const outline = {
      ...snippet(
        ['export class Big {', ...members.map((m) => `  ${m}(value: string): void`), '}'].join('\n'),
        'big.ts',
      ),
      retriever: 'definition' as const,
      members,
    };
    const body = {
      ...snippet(
        [
          'export function long() {',
          ...Array.from({ length: 40 }, (_, i) => `  const v${i} = compute(${i});`),
          '}',
        ].join('\n'),
        'long.ts',
      ),
      retriever: 'definition' as const,
    };
    const small = snippet('export const needed = 1;', 'small.ts');
    const unlimited = packSnippets([outline, body, small], 1200, () => 0);
    assert.ok(
      !unlimited.packed.some((s) => s.path === 'small.ts'),
      'without limits the outline and the body fill the budget',
    );
    const limited = packSnippets([outline, body, small], 1200, () => 0, { outlineChars: 450, definitionChars: 600 });
    assert.deepStrictEqual(
      limited.packed.map((s) => s.path),
      ['big.ts', 'long.ts', 'small.ts'],
    );
    assert.ok(limited.packed[0].text.length + 'big.ts'.length + 2 <= 450, 'the outline is focused to its limit');
    assert.ok(
      limited.packed[1].text.length + 'long.ts'.length + 2 <= 600 &&
        limited.packed[1].text.startsWith('export function long() {'),
    );
  });

  it('defers a candidate that names only what the prompt or packed snippets show, unless it is strong', () => {
    const repeat = snippet('const user = repo.find(id);', 'repeat.ts', 3);
    const fresh = snippet('export function saveUser(user: User) {}', 'fresh.ts', 2);
    const again = snippet('saveUser(user);', 'again.ts', 1);
    const known = new Set(['const', 'user', 'repo', 'find', 'id']);
    const budget = 'fresh.ts'.length + fresh.text.length + 2 + 100;
    assert.deepStrictEqual(
      packSnippets([repeat, fresh, again], budget, undefined, { known }).packed.map((s) => s.path),
      ['fresh.ts', 'repeat.ts'],
      'the repeated line waits for what is left after the fresh one (and `again`, naming only packed names, waits too)',
    );
    assert.deepStrictEqual(
      packSnippets([repeat, fresh], 2000, undefined, { known, uncapped: new Set([repeat]) }).packed.map((s) => s.path),
      ['repeat.ts', 'fresh.ts'],
    );
  });

  it('leaves out the lines that hold only a comment, in the syntax of the snippet’s language', () => {
    const code = [
      'function find(id: string) {',
      '  return repo.get(id); // by key',
      '}',
      'class Bag {',
      '  #items = 0;',
      '  *[Symbol.iterator]() {}',
      '}',
    ];
    const ts = ['/**', ' * Finds a user.', ' */', code[0], '  // look it up', ...code.slice(1)].join('\n');
    assert.strictEqual(withoutCommentLines(ts, 'src/a.ts'), code.join('\n'));
    assert.strictEqual(
      withoutCommentLines('# a comment\ndef f():\n    # inner\n    return 1  # trailing', 'pkg/m.py'),
      'def f():\n    return 1  # trailing',
    );
    assert.strictEqual(withoutCommentLines('// only a comment', 'a.go'), '// only a comment', 'nothing left: kept');
    const python = [
      'class NotConfigured(Exception):',
      '    """Raised by a component',
      '    that stays disabled."""',
      '',
      '    def explain(self):',
      "        r'''One line.'''",
      '        return f("""kept: not at a line start""")',
    ].join('\n');
    assert.strictEqual(
      withoutCommentLines(python, 'pkg/exceptions.py'),
      'class NotConfigured(Exception):\n\n    def explain(self):\n        return f("""kept: not at a line start""")',
      'docstrings, one line or several, are left out',
    );
    assert.strictEqual(withoutCommentLines('x = 1\n"""a"""', 'a.js'), 'x = 1\n"""a"""', 'only in Python');
  });

  it('packs more candidates when comment-only lines are left out, and keeps outlines line for line', () => {
    const commented = snippet(
      Array.from({ length: 12 }, (_, i) => `// step ${i}: explained at some length here\ncall${i}();`).join('\n'),
      'steps.ts',
      2,
    );
    const members = ['run', 'stop'];
    const outline = {
      ...snippet('class Job {\n  // run(): void\n  stop(): void\n}', 'job.ts', 1.5),
      retriever: 'definition' as const,
      members,
    };
    const needed = snippet('export const needed = 1;', 'needed.ts', 1);
    const budget = 420;
    const plain = packSnippets([commented, outline, needed], budget, () => 0);
    assert.ok(!plain.packed.some((s) => s.path === 'needed.ts'), 'with its comments the window fills the budget');
    const code = packSnippets([commented, outline, needed], budget, () => 0, { codeOnly: true });
    assert.deepStrictEqual(
      code.packed.map((s) => s.path),
      ['steps.ts', 'job.ts', 'needed.ts'],
    );
    assert.ok(!code.packed[0].text.includes('//'), 'no comment line is packed');
    assert.match(code.packed[0].text, /^call0\(\);\ncall1\(\);/);
    assert.strictEqual(code.packed[1].text, outline.text, 'an outline listed a member a line is packed as it is');
  });

  it('counts in how many files an identifier is used, and forgets a removed file', () => {
    const before = index.frequency('UserRepo');
    assert.ok(before >= 3, `UserRepo is used in ${before} files`);
    index.remove('src/index.ts');
    assert.strictEqual(index.frequency('UserRepo'), before - 1);
  });

  it('renders Repoformer comment blocks with the best snippet last', () => {
    const text = renderCommentBlocks([snippet('best()', 'best.py'), snippet('second()', 'second.py')], 'main.py');
    assert.ok(text.startsWith(`\n\n# ${REPOFORMER_HEADER}\n`));
    assert.ok(text.indexOf('# second.py') < text.indexOf('# best.py'));
    assert.ok(text.includes('# the below code fragment can be found in:'));
    assert.ok(text.trimEnd().endsWith('# best()'));
  });
});
