import * as assert from 'assert';
import * as path from 'path';
import { loadProjectLayout } from '../../src/index/projectLayout';
import { projectOf } from '../../src/index/projects';
import { WorkspaceRoots } from '../../src/index/roots';
import { tempDir, writeFiles } from '../helpers/fixtures';

describe('projects', () => {
  const monorepo = { dirs: ['', 'packages/app', 'packages/app/plugins/pay', 'svc', 'py/tool'], multiRoot: false };

  it('puts a file in the deepest directory above it with a manifest', () => {
    assert.strictEqual(projectOf('packages/app/src/main.ts', monorepo), 'packages/app');
    assert.strictEqual(projectOf('packages/app/plugins/pay/index.ts', monorepo), 'packages/app/plugins/pay');
    assert.strictEqual(projectOf('svc/internal/db/db.go', monorepo), 'svc');
    assert.strictEqual(projectOf('py/tool/tool/cli.py', monorepo), 'py/tool');
    assert.strictEqual(projectOf('scripts/build.ts', monorepo), '');
    assert.strictEqual(projectOf('index.ts', monorepo), '');
  });

  it('puts a file under no manifest in its top folder', () => {
    const bare = { dirs: ['lib/go'], multiRoot: false };
    assert.strictEqual(projectOf('src/a/b.ts', bare), 'src');
    assert.strictEqual(projectOf('lib/other/x.py', bare), 'lib');
    assert.strictEqual(projectOf('lib/go/x.go', bare), 'lib/go');
    assert.strictEqual(projectOf('main.go', bare), '');
  });

  it("puts a multi-root key under no manifest in its workspace folder, else in its folder's projects", () => {
    const multi = { dirs: ['web', 'api/cmd/server'], multiRoot: true };
    assert.strictEqual(projectOf('web/src/app.ts', multi), 'web');
    assert.strictEqual(projectOf('api/cmd/server/main.go', multi), 'api/cmd/server');
    assert.strictEqual(projectOf('api/internal/x.go', multi), 'api');
    assert.strictEqual(projectOf('api/top.go', multi), 'api');
  });

  it('reads the manifest directories into the layout, for one folder and for several', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeFiles(dir, {
        'one/package.json': '{"name":"root"}',
        'one/packages/a/package.json': '{"name":"a"}',
        'one/packages/a/src/a.ts': '',
        'one/svc/go.mod': 'module example.com/svc\n',
        'one/svc/main.go': '',
        'one/py/pyproject.toml': '',
        'one/py/src/m.py': '',
        'one/crate/Cargo.toml': '',
        'one/crate/src/lib.rs': '',
        'one/src/plain.py': '',
        'two/setup.py': '',
        'two/x.py': '',
      });
      const files = ['packages/a/src/a.ts', 'svc/main.go', 'py/src/m.py', 'crate/src/lib.rs', 'src/plain.py'];
      const single = await loadProjectLayout(path.join(dir, 'one'), files);
      assert.deepStrictEqual([...single.projectDirs].sort(), ['', 'crate', 'packages/a', 'py', 'svc']);
      const folders = new WorkspaceRoots([
        { name: 'one', path: path.join(dir, 'one') },
        { name: 'two', path: path.join(dir, 'two') },
      ]);
      const multi = await loadProjectLayout(folders, ['one/svc/main.go', 'two/x.py']);
      assert.deepStrictEqual([...multi.projectDirs].sort(), ['one', 'one/svc', 'two']);
    } finally {
      await cleanup();
    }
  });
});
