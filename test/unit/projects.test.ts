import * as assert from 'assert';
import * as path from 'path';
import { loadProjectLayout } from '../../src/index/projectLayout';
import { projectsOf } from '../../src/index/projects';
import { WorkspaceRoots } from '../../src/index/roots';
import { tempDir, writeFiles } from '../helpers/fixtures';

describe('projects', () => {
  const monorepo = { dirs: ['', 'packages/app', 'packages/app/plugins/pay', 'svc', 'py/tool'], multiRoot: false };

  it('puts a file in the deepest directory above it with a manifest', () => {
    assert.strictEqual(projectsOf(monorepo)('packages/app/src/main.ts'), 'packages/app');
    assert.strictEqual(projectsOf(monorepo)('packages/app/plugins/pay/index.ts'), 'packages/app/plugins/pay');
    assert.strictEqual(projectsOf(monorepo)('svc/internal/db/db.go'), 'svc');
    assert.strictEqual(projectsOf(monorepo)('py/tool/tool/cli.py'), 'py/tool');
    assert.strictEqual(projectsOf(monorepo)('scripts/build.ts'), '');
    assert.strictEqual(projectsOf(monorepo)('index.ts'), '');
  });

  it('puts a file under no manifest in its top folder', () => {
    const bare = { dirs: ['lib/go'], multiRoot: false };
    assert.strictEqual(projectsOf(bare)('src/a/b.ts'), 'src');
    assert.strictEqual(projectsOf(bare)('lib/other/x.py'), 'lib');
    assert.strictEqual(projectsOf(bare)('lib/go/x.go'), 'lib/go');
    assert.strictEqual(projectsOf(bare)('main.go'), '');
  });

  it("puts a multi-root key under no manifest in its workspace folder, else in its folder's projects", () => {
    const multi = { dirs: ['web', 'api/cmd/server'], multiRoot: true };
    assert.strictEqual(projectsOf(multi)('web/src/app.ts'), 'web');
    assert.strictEqual(projectsOf(multi)('api/cmd/server/main.go'), 'api/cmd/server');
    assert.strictEqual(projectsOf(multi)('api/internal/x.go'), 'api');
    assert.strictEqual(projectsOf(multi)('api/top.go'), 'api');
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
