import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseJsonc } from '../../src/index/jsonc';
import { loadProjectLayout, resolveImport, type ProjectLayout } from '../../src/index/resolve';
import type { LanguageId } from '../../src/index/types';

/** A fixture repository on disk plus the in-memory file set the index would hold for it. */
class Repo {
  readonly root: string;
  readonly files = new Set<string>();
  layout!: ProjectLayout;

  constructor(
    files: Record<string, string>,
    readonly indexed: (p: string) => boolean = () => true,
  ) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'repogate-resolve-'));
    for (const [rel, content] of Object.entries(files)) {
      const abs = path.join(this.root, rel);
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content);
      if (indexed(rel)) this.files.add(rel);
    }
  }

  async load(): Promise<this> {
    this.layout = await loadProjectLayout(this.root, this.files);
    return this;
  }

  resolve(from: string, spec: string, language: LanguageId = 'typescript', names?: string[]): string[] {
    return resolveImport(
      this.layout,
      (p) => this.files.has(p),
      (dir) => [...this.files].filter((f) => (f.lastIndexOf('/') < 0 ? '' : f.slice(0, f.lastIndexOf('/'))) === dir),
      from,
      spec,
      language,
      names,
    );
  }

  dispose(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

describe('resolve: parseJsonc', () => {
  it('accepts comments, trailing commas and a BOM, and leaves strings alone', () => {
    const text = `\uFEFF{
      // line comment
      "a": "http://x//y", /* block */
      "b": ["/*not a comment*/", "q\\"//",],
      "c": { "d": 1, },
    }`;
    assert.deepStrictEqual(parseJsonc(text), { a: 'http://x//y', b: ['/*not a comment*/', 'q"//'], c: { d: 1 } });
  });
});

describe('resolve: TypeScript monorepo', () => {
  let repo: Repo;
  before(async () => {
    repo = await new Repo(
      {
        'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['packages/*'] }),
        'tsconfig.base.json': `{
          // shared options
          "compilerOptions": {
            "baseUrl": ".",
            "paths": {
              "@app/*": ["apps/web/src/*",],   /* trailing comma */
              "@config": ["config/index.ts"],
              "@lib/*": ["missing/*", "libs/*"],
            },
          },
        }`,
        'tsconfig.json': '{ "extends": "./tsconfig.base", "include": ["apps", "packages"] }',
        'packages/core/package.json': JSON.stringify({
          name: '@acme/core',
          main: 'dist/index.js',
          types: 'dist/index.d.ts',
          exports: {
            '.': { types: './dist/index.d.ts', import: './dist/esm/index.js', require: './dist/cjs/index.js' },
            './utils': { import: './dist/esm/utils/index.js' },
            './features/*': './dist/features/*.js',
            './package.json': './package.json',
          },
        }),
        'packages/core/src/index.ts': 'export * from "./user.js";',
        'packages/core/src/user.ts': 'export class User {}',
        'packages/core/src/utils/index.ts': '',
        'packages/core/src/features/login.ts': '',
        'packages/core/src/internal/deep.ts': '',
        'packages/core/dist/index.js': '',
        'packages/plain/package.json': JSON.stringify({ name: 'plain', main: 'lib/index.js' }),
        'packages/plain/lib/index.js': '',
        'packages/plain/lib/helpers.js': '',
        'packages/legacy/package.json': JSON.stringify({ name: '@acme/legacy', main: './lib/main.js' }),
        'packages/legacy/src/main.ts': '',
        'packages/nomain/package.json': JSON.stringify({
          name: '@acme/nomain',
          imports: { '#internal/*': './src/internal/*.ts' },
        }),
        'packages/nomain/src/index.ts': '',
        'packages/nomain/src/internal/x.ts': '',
        'packages/nomain/src/a.ts': '',
        'apps/web/tsconfig.json': `{
          "extends": "../../tsconfig.base.json",
          "compilerOptions": { "baseUrl": "./src", "paths": { "~/*": ["./*"] } } // relative to baseUrl
        }`,
        'packages/nomain/tsconfig.json': '{ "compilerOptions": { "paths": { "@n/*": ["./src/*"] } } }',
        'apps/web/src/main.tsx': '',
        'apps/web/src/components/Button.tsx': '',
        'apps/web/src/components/index.ts': '',
        'apps/web/src/legacy.js': '',
        'apps/web/src/styles.css': '',
        'config/index.ts': '',
        'libs/log.ts': '',
        'src/top.ts': '',
        'src/types.d.ts': '',
        'src/esm.mts': '',
        'node_modules/@acme/core/package.json': JSON.stringify({ name: '@acme/core', main: 'other.js' }),
        'node_modules/react/index.js': '',
      },
      (p) => !p.endsWith('.json') && !p.startsWith('node_modules/') && !p.includes('/dist/'),
    ).load();
  });
  after(() => repo.dispose());

  it('records workspace packages, ignoring node_modules', () => {
    assert.deepStrictEqual([...repo.layout.packages.keys()].sort(), [
      '@acme/core',
      '@acme/legacy',
      '@acme/nomain',
      'plain',
      'root',
    ]);
    assert.strictEqual(repo.layout.packages.get('@acme/core')!.dir, 'packages/core');
  });

  it('resolves relative imports with extension probing, .js written for .ts, and directory indexes', () => {
    const from = 'apps/web/src/main.tsx';
    assert.deepStrictEqual(repo.resolve(from, './components/Button'), ['apps/web/src/components/Button.tsx']);
    assert.deepStrictEqual(repo.resolve(from, './components'), ['apps/web/src/components/index.ts']);
    assert.deepStrictEqual(repo.resolve(from, './components/Button.js'), ['apps/web/src/components/Button.tsx']);
    assert.deepStrictEqual(repo.resolve(from, './legacy'), ['apps/web/src/legacy.js']);
    assert.deepStrictEqual(repo.resolve(from, './styles.css'), ['apps/web/src/styles.css']);
    assert.deepStrictEqual(repo.resolve(from, '../../../src/top'), ['src/top.ts']);
    assert.deepStrictEqual(repo.resolve('src/top.ts', './types'), ['src/types.d.ts']);
    assert.deepStrictEqual(repo.resolve('src/top.ts', './esm.mjs'), ['src/esm.mts']);
    assert.deepStrictEqual(repo.resolve('packages/core/src/index.ts', './user.js'), ['packages/core/src/user.ts']);
    assert.deepStrictEqual(repo.resolve(from, './missing'), []);
    assert.deepStrictEqual(repo.resolve('src/top.ts', '../../outside'), []);
  });

  it('resolves tsconfig paths and baseUrl through extends, using the nearest tsconfig', () => {
    // apps/web/tsconfig.json overrides the inherited paths and baseUrl.
    const web = 'apps/web/src/main.tsx';
    assert.deepStrictEqual(repo.resolve(web, '~/components/Button'), ['apps/web/src/components/Button.tsx']);
    assert.deepStrictEqual(repo.resolve(web, 'components/Button'), ['apps/web/src/components/Button.tsx']);
    assert.deepStrictEqual(repo.resolve(web, '@app/components'), []);
    assert.deepStrictEqual(repo.resolve(web, 'libs/log'), []);
    // Without a baseUrl, paths are relative to the config that declares them.
    assert.deepStrictEqual(repo.resolve('packages/nomain/src/index.ts', '@n/a'), ['packages/nomain/src/a.ts']);

    const top = 'src/top.ts';
    assert.deepStrictEqual(repo.resolve(top, '@app/components/Button'), ['apps/web/src/components/Button.tsx']);
    assert.deepStrictEqual(repo.resolve(top, '@config'), ['config/index.ts']);
    assert.deepStrictEqual(repo.resolve(top, '@lib/log'), ['libs/log.ts']);
    assert.deepStrictEqual(repo.resolve(top, 'config'), ['config/index.ts']);
    assert.deepStrictEqual(repo.resolve(top, '~/components/Button'), []);
  });

  it('resolves workspace packages to their sources through exports, main and fallbacks', () => {
    const from = 'apps/web/src/main.tsx';
    assert.deepStrictEqual(repo.resolve(from, '@acme/core'), ['packages/core/src/index.ts']);
    assert.deepStrictEqual(repo.resolve(from, '@acme/core/utils'), ['packages/core/src/utils/index.ts']);
    assert.deepStrictEqual(repo.resolve(from, '@acme/core/features/login'), ['packages/core/src/features/login.ts']);
    assert.deepStrictEqual(repo.resolve(from, '@acme/core/internal/deep'), ['packages/core/src/internal/deep.ts']);
    assert.deepStrictEqual(repo.resolve(from, '@acme/legacy'), ['packages/legacy/src/main.ts']);
    assert.deepStrictEqual(repo.resolve(from, '@acme/nomain'), ['packages/nomain/src/index.ts']);
    assert.deepStrictEqual(repo.resolve(from, 'plain', 'javascript'), ['packages/plain/lib/index.js']);
    assert.deepStrictEqual(repo.resolve(from, 'plain/lib/helpers', 'javascript'), ['packages/plain/lib/helpers.js']);
    assert.deepStrictEqual(repo.resolve(from, 'react'), []);
    assert.deepStrictEqual(repo.resolve(from, 'node:fs'), []);
    assert.deepStrictEqual(repo.resolve(from, '@acme/unknown'), []);
  });

  it('resolves package.json imports (#) from the enclosing package', () => {
    assert.deepStrictEqual(repo.resolve('packages/nomain/src/a.ts', '#internal/x'), [
      'packages/nomain/src/internal/x.ts',
    ]);
    assert.deepStrictEqual(repo.resolve('apps/web/src/main.tsx', '#internal/x'), []);
  });

  it('follows the file set as it changes, without reloading the layout', () => {
    assert.deepStrictEqual(repo.resolve('src/top.ts', './later'), []);
    repo.files.add('src/later.ts');
    assert.deepStrictEqual(repo.resolve('src/top.ts', './later'), ['src/later.ts']);
    repo.files.delete('src/later.ts');
    // With the source gone, the package entry falls through to the next candidate.
    repo.files.delete('packages/legacy/src/main.ts');
    assert.deepStrictEqual(repo.resolve('src/top.ts', '@acme/legacy'), []);
    repo.files.add('packages/legacy/src/main.ts');
  });
});

describe('resolve: Python', () => {
  let repo: Repo;
  before(async () => {
    repo = await new Repo({
      'pyproject.toml': '[project]\nname = "shop"\n',
      'src/shop/__init__.py': '',
      'src/shop/models/__init__.py': '',
      'src/shop/models/user.py': '',
      'src/shop/models/order.py': '',
      'src/shop/services/billing.py': '',
      'src/shop/util.py': '',
      'tools/run.py': '',
      'tools/helpers.py': '',
      'scripts/__init__.py': '',
      'scripts/build.py': '',
    }).load();
  });
  after(() => repo.dispose());

  it('records python roots', () => {
    assert.deepStrictEqual(repo.layout.pythonRoots, ['src']);
  });

  it('resolves relative imports to modules, packages and imported submodules', () => {
    const from = 'src/shop/services/billing.py';
    assert.deepStrictEqual(repo.resolve(from, '..models', 'python'), ['src/shop/models/__init__.py']);
    assert.deepStrictEqual(repo.resolve(from, '..models.user', 'python'), ['src/shop/models/user.py']);
    assert.deepStrictEqual(repo.resolve(from, '..util', 'python', ['helper']), ['src/shop/util.py']);
    assert.deepStrictEqual(repo.resolve(from, '..models', 'python', ['user', 'order', 'User']), [
      'src/shop/models/__init__.py',
      'src/shop/models/user.py',
      'src/shop/models/order.py',
    ]);
    assert.deepStrictEqual(repo.resolve('src/shop/models/user.py', '.', 'python', ['order']), [
      'src/shop/models/__init__.py',
      'src/shop/models/order.py',
    ]);
    assert.deepStrictEqual(repo.resolve('src/shop/models/user.py', '..util', 'python'), ['src/shop/util.py']);
    assert.deepStrictEqual(repo.resolve('src/shop/models/user.py', '...shop.util', 'python'), ['src/shop/util.py']);
    assert.deepStrictEqual(repo.resolve('src/shop/util.py', '.....too.far', 'python'), []);
  });

  it('resolves absolute imports from the python roots, the repository root and the script directory', () => {
    assert.deepStrictEqual(repo.resolve('tools/run.py', 'shop.models.user', 'python'), ['src/shop/models/user.py']);
    assert.deepStrictEqual(repo.resolve('tools/run.py', 'shop', 'python', ['util']), [
      'src/shop/__init__.py',
      'src/shop/util.py',
    ]);
    assert.deepStrictEqual(repo.resolve('tools/run.py', 'scripts.build', 'python'), ['scripts/build.py']);
    assert.deepStrictEqual(repo.resolve('tools/run.py', 'helpers', 'python'), ['tools/helpers.py']);
    assert.deepStrictEqual(repo.resolve('tools/run.py', 'os.path', 'python'), []);
  });
});

describe('resolve: Go, Rust, Java', () => {
  let repo: Repo;
  before(async () => {
    repo = await new Repo({
      'go.mod': '// comment\nmodule github.com/acme/svc\n\ngo 1.22\n',
      'cmd/server/main.go': '',
      'internal/store/store.go': '',
      'internal/store/sql.go': '',
      'internal/store/store_test.go': '',
      'internal/store/README.md': '',
      'tools/gen/go.mod': 'module "github.com/acme/svc/tools/gen"\n',
      'tools/gen/gen.go': '',
      'Cargo.toml': '[package]\nname = "app"\n',
      'src/main.rs': '',
      'src/config.rs': '',
      'src/net/mod.rs': '',
      'src/net/http.rs': '',
      'src/net/http/client.rs': '',
      'src/net/tcp.rs': '',
      'crates/wire-format/Cargo.toml':
        '[package]\nname = "wire-format"\nversion = "0.1.0"\n\n[dependencies]\nname = "x"\n',
      'crates/wire-format/src/lib.rs': '',
      'crates/wire-format/src/frame.rs': '',
      'app/src/main/java/com/acme/model/User.java': '',
      'app/src/main/java/com/acme/model/Order.java': '',
      'app/src/main/java/com/acme/App.java': '',
      'lib/src/main/java/com/acme/model/Money.java': '',
    }).load();
  });
  after(() => repo.dispose());

  it('resolves Go package imports to the non-test files of the package directory', () => {
    assert.deepStrictEqual(
      repo.layout.goModules.map((m) => m.path),
      ['github.com/acme/svc/tools/gen', 'github.com/acme/svc'],
    );
    const from = 'cmd/server/main.go';
    assert.deepStrictEqual(repo.resolve(from, 'github.com/acme/svc/internal/store', 'go'), [
      'internal/store/sql.go',
      'internal/store/store.go',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'github.com/acme/svc/tools/gen', 'go'), ['tools/gen/gen.go']);
    assert.deepStrictEqual(repo.resolve(from, 'github.com/acme/svcx/store', 'go'), []);
    assert.deepStrictEqual(repo.resolve(from, 'fmt', 'go'), []);
  });

  it('resolves Rust module paths', () => {
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'crate::config::Config', 'rust'), ['src/config.rs']);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'crate::net::http::{get, post}', 'rust'), ['src/net/http.rs']);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'crate::net::http::client::Client', 'rust'), [
      'src/net/http/client.rs',
    ]);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'crate::net', 'rust'), ['src/net/mod.rs']);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'crate::Thing', 'rust'), ['src/main.rs']);
    assert.deepStrictEqual(repo.resolve('src/net/http.rs', 'super::tcp::Stream', 'rust'), ['src/net/tcp.rs']);
    assert.deepStrictEqual(repo.resolve('src/net/http.rs', 'self::client', 'rust'), ['src/net/http/client.rs']);
    assert.deepStrictEqual(repo.resolve('src/net/mod.rs', 'http::get', 'rust'), ['src/net/http.rs']);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'config::load', 'rust'), ['src/config.rs']);
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'std::collections::HashMap', 'rust'), []);
  });

  it('resolves a path into another crate of the workspace by the name its Cargo.toml gives it', () => {
    assert.deepStrictEqual(
      [...repo.layout.rustCrateNames],
      [
        ['app', ''],
        ['wire_format', 'crates/wire-format'],
      ],
    );
    assert.deepStrictEqual(repo.resolve('src/main.rs', 'wire_format::frame::Frame', 'rust'), [
      'crates/wire-format/src/frame.rs',
    ]);
    assert.deepStrictEqual(repo.resolve('src/net/tcp.rs', 'wire_format::{Frame, Codec}', 'rust'), [
      'crates/wire-format/src/lib.rs',
    ]);
  });

  it('resolves Java imports by package path suffix', () => {
    const from = 'app/src/main/java/com/acme/App.java';
    assert.deepStrictEqual(repo.resolve(from, 'com.acme.model.User', 'java'), [
      'app/src/main/java/com/acme/model/User.java',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'com.acme.model.Money', 'java'), [
      'lib/src/main/java/com/acme/model/Money.java',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'static com.acme.model.User.create', 'java'), [
      'app/src/main/java/com/acme/model/User.java',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'com.acme.model.*', 'java'), [
      'app/src/main/java/com/acme/model/Order.java',
      'app/src/main/java/com/acme/model/User.java',
      'lib/src/main/java/com/acme/model/Money.java',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'static com.acme.model.User.*', 'java'), [
      'app/src/main/java/com/acme/model/User.java',
    ]);
    assert.deepStrictEqual(repo.resolve(from, 'java.util.List', 'java'), []);
  });

  it('returns nothing for plain text', () => {
    assert.deepStrictEqual(repo.resolve('README.md', './x', 'text'), []);
  });
});
