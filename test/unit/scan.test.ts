import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { decodeSource } from '../../src/index/decode';
import { DEFAULT_SECRET_GLOBS } from '../../src/index/defaultGlobs';
import { createPathFilter } from '../../src/index/ignoreRules';
import { readSourceFile } from '../../src/index/readSource';
import { scanWorkspace } from '../../src/index/scan';
import { isSecretPath } from '../../src/index/secrets';

/** Writes `files` (relative path → contents) under a fresh temporary directory. */
function makeTree(files: Record<string, string | Buffer>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repogate-scan-'));
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
  return root;
}

const roots: string[] = [];
function tree(files: Record<string, string | Buffer>): string {
  const root = makeTree(files);
  roots.push(root);
  return root;
}

after(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function reasonOf(result: { skipped: { path: string; reason: string }[] }, p: string): string | undefined {
  return result.skipped.find((s) => s.path === p)?.reason;
}

describe('scan: secrets', () => {
  const secretFiles = [
    '.env',
    '.env.local',
    'config/.ENV.production',
    'certs/server.pem',
    'certs/server.key',
    'home/id_rsa',
    'home/id_rsa.pub',
    'home/id_dsa',
    'home/id_ecdsa',
    'home/id_ed25519',
    'store.p12',
    'store.pfx',
    'android/release.keystore',
    'java/trust.jks',
    'aws/credentials',
    'credentials.json',
    'src/clientSecret.ts',
    'MY_SECRETS.yaml',
    '.npmrc',
    '.netrc',
    '.pgpass',
    'vault.kdbx',
    '.git-credentials',
    'gcp/service-account-prod.json',
    'infra/terraform.tfstate',
    '.ssh/config',
  ];

  it('recognises every default pattern, case-insensitively, at any depth', () => {
    for (const f of secretFiles) assert.ok(isSecretPath(f), f);
    for (const f of ['src/index.ts', 'README.md', 'environment.ts', 'src/keyboard.ts', 'package.json']) {
      assert.ok(!isSecretPath(f), f);
    }
    assert.ok(DEFAULT_SECRET_GLOBS.length >= 20);
  });

  it('accepts extra globs and Windows-style paths', () => {
    assert.ok(!isSecretPath('conf/prod.yaml'));
    assert.ok(isSecretPath('conf/prod.yaml', ['conf/prod.*']));
    assert.ok(isSecretPath('certs\\server.pem'));
  });

  it('never lists secret files in a scan', async () => {
    const root = tree(Object.fromEntries([...secretFiles, 'src/index.ts'].map((f) => [f, 'x = 1\n'])));
    const result = await scanWorkspace({ root });
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      ['src/index.ts'],
    );
    for (const f of secretFiles) assert.strictEqual(reasonOf(result, f), 'secret', f);
  });
});

describe('scan: excludes and .gitignore', () => {
  it('honours nested .gitignore files with negation and skips excluded directories early', async () => {
    const root = tree({
      '.gitignore': '*.log\ngenerated/\n/tmp\n',
      'a.ts': '',
      'debug.log': '',
      'tmp/x.ts': '',
      'lib/tmp/y.ts': '',
      'generated/g.ts': '',
      'pkg/.gitignore': '!keep.log\nlocal.ts\n',
      'pkg/keep.log': '',
      'pkg/other.log': '',
      'pkg/local.ts': '',
      'pkg/deep/.gitignore': '*.ts\n!wanted.ts\n',
      'pkg/deep/wanted.ts': '',
      'pkg/deep/unwanted.ts': '',
      'node_modules/dep/index.js': '',
      'packages/a/node_modules/dep/index.js': '',
      'packages/a/dist/index.js': '',
      'packages/a/src/index.ts': '',
      'src/build.ts': '',
    });
    const result = await scanWorkspace({ root });
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      [
        '.gitignore',
        'a.ts',
        'lib/tmp/y.ts',
        'packages/a/src/index.ts',
        'pkg/.gitignore',
        'pkg/deep/.gitignore',
        'pkg/deep/wanted.ts',
        'pkg/keep.log',
        'src/build.ts',
      ],
    );
    assert.strictEqual(reasonOf(result, 'debug.log'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'tmp'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'generated'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'pkg/other.log'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'pkg/local.ts'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'pkg/deep/unwanted.ts'), 'gitignored');
    // Directories are reported once; nothing below them is visited.
    assert.strictEqual(reasonOf(result, 'node_modules'), 'excluded');
    assert.strictEqual(reasonOf(result, 'packages/a/node_modules'), 'excluded');
    assert.strictEqual(reasonOf(result, 'packages/a/dist'), 'excluded');
    assert.ok(!result.skipped.some((s) => s.path.startsWith('node_modules/')));
  });

  it('applies custom excludes, extension filters and .git/info/exclude', async () => {
    const root = tree({
      '.git/info/exclude': 'scratch.ts\n',
      '.git/config': '',
      'scratch.ts': '',
      'src/a.ts': '',
      'src/a.py': '',
      'src/gen/b.ts': '',
      'README.md': '',
    });
    const result = await scanWorkspace({ root, excludeGlobs: ['**/gen/**'], extensions: ['ts', '.PY'] });
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      ['src/a.py', 'src/a.ts'],
    );
    assert.strictEqual(reasonOf(result, 'scratch.ts'), 'gitignored');
    assert.strictEqual(reasonOf(result, 'src/gen'), 'excluded');
    assert.strictEqual(reasonOf(result, 'README.md'), 'excluded');
    assert.strictEqual(reasonOf(result, '.git'), 'excluded');
  });

  it('gives the same answers for single paths and directories, and re-reads rules after invalidate()', () => {
    const root = tree({
      '.gitignore': 'logs/\n*.tmp\n',
      'pkg/.gitignore': '!keep.tmp\n',
      'logs/.gitignore': '!x.ts\n',
    });
    const filter = createPathFilter(root);
    assert.strictEqual(filter('src/a.ts'), undefined);
    assert.strictEqual(filter('a.tmp'), 'gitignored');
    assert.strictEqual(filter('pkg/keep.tmp'), undefined);
    // A file below an ignored directory cannot be re-included.
    assert.strictEqual(filter('logs/x.ts'), 'gitignored');
    assert.strictEqual(filter('node_modules/x/index.ts'), 'excluded');
    assert.strictEqual(filter('.git/HEAD'), 'excluded');
    assert.strictEqual(filter('.env'), 'secret');
    assert.strictEqual(filter('./src\\b.ts'), undefined);
    assert.strictEqual(filter('../elsewhere.ts'), 'excluded');
    assert.strictEqual(filter(''), 'excluded');
    // Directories as the walker judges them; the root is never left out.
    assert.strictEqual(filter.dir(''), undefined);
    assert.strictEqual(filter.dir('src'), undefined);
    assert.strictEqual(filter.dir('logs'), 'gitignored');
    assert.strictEqual(filter.dir('node_modules/x'), 'excluded');
    assert.strictEqual(filter.dir('../elsewhere'), 'excluded');

    fs.writeFileSync(path.join(root, '.gitignore'), 'src/\n');
    assert.strictEqual(filter('src/a.ts'), undefined, 'cached until invalidated');
    filter.invalidate();
    assert.strictEqual(filter('src/a.ts'), 'gitignored');
    assert.strictEqual(filter('a.tmp'), undefined);
  });

  it('handles an empty repository', async () => {
    const root = tree({});
    assert.deepStrictEqual(await scanWorkspace({ root }), { files: [], skipped: [] });
  });

  it('rejects a missing root', async () => {
    await assert.rejects(scanWorkspace({ root: path.join(os.tmpdir(), 'repogate-no-such-dir-xyz') }));
  });
});

describe('scan: sizes and symlinks', () => {
  it('skips files over maxFileBytes without reading them', async () => {
    const root = tree({ 'small.ts': 'export const a = 1;\n' });
    const big = path.join(root, 'big.ts');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 5 * 1024 * 1024);
    const result = await scanWorkspace({ root });
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      ['small.ts'],
    );
    assert.strictEqual(result.files[0].size, 20);
    assert.ok(result.files[0].mtimeMs > 0);
    assert.strictEqual(reasonOf(result, 'big.ts'), 'too-large');
    assert.deepStrictEqual(await readSourceFile(root, 'big.ts'), { skip: 'too-large', detail: '5242880 bytes' });
    assert.deepStrictEqual(await readSourceFile(root, 'small.ts', 10), { skip: 'too-large', detail: '20 bytes' });
  });

  it('never loops on a directory symlinked to its parent, and lists a linked file once', async () => {
    const root = tree({ 'a/b/file.ts': 'x', 'a/real.ts': 'y' });
    fs.symlinkSync('..', path.join(root, 'a', 'b', 'up'), 'dir');
    fs.symlinkSync(path.join(root, 'a'), path.join(root, 'again'), 'dir');
    fs.symlinkSync('../../a/real.ts', path.join(root, 'a', 'b', 'link.ts'), 'file');
    const outside = tree({ 'shared.ts': 'z', id_rsa: 'k' });
    fs.symlinkSync(path.join(outside, 'shared.ts'), path.join(root, 'shared.ts'), 'file');
    fs.symlinkSync(path.join(outside, 'shared.ts'), path.join(root, 'a', 'shared2.ts'), 'file');
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(root, 'harmless.txt'), 'file');
    fs.symlinkSync(path.join(root, 'missing.ts'), path.join(root, 'dangling.ts'), 'file');

    const result = await scanWorkspace({ root });
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      ['a/b/file.ts', 'a/real.ts', 'a/shared2.ts'],
    );
    assert.strictEqual(reasonOf(result, 'a/b/up'), 'symlink-loop');
    assert.strictEqual(reasonOf(result, 'again'), 'symlink-loop');
    assert.strictEqual(reasonOf(result, 'a/b/link.ts'), 'symlink-loop');
    assert.strictEqual(reasonOf(result, 'shared.ts'), 'symlink-loop');
    assert.strictEqual(reasonOf(result, 'harmless.txt'), 'secret');
    assert.strictEqual(reasonOf(result, 'dangling.ts'), 'vanished');
  });

  it('walks a symlinked directory outside the workspace once', async () => {
    const outside = tree({ 'lib/util.ts': 'u' });
    const root = tree({ 'main.ts': 'm' });
    fs.symlinkSync(path.join(outside, 'lib'), path.join(root, 'lib1'), 'dir');
    fs.symlinkSync(path.join(outside, 'lib'), path.join(root, 'lib2'), 'dir');
    fs.symlinkSync(outside, path.join(root, 'ext'), 'dir');
    const result = await scanWorkspace({ root });
    // Links are followed in name order: 'ext' reaches the shared directory first.
    assert.deepStrictEqual(
      result.files.map((f) => f.path),
      ['ext/lib/util.ts', 'main.ts'],
    );
    assert.strictEqual(reasonOf(result, 'lib1'), 'symlink-loop');
    assert.strictEqual(reasonOf(result, 'lib2'), 'symlink-loop');
  });

  it('yields to the event loop while walking a large tree', async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 40; d++) for (let f = 0; f < 50; f++) files[`d${d}/f${f}.ts`] = '';
    const root = tree(files);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const result = await scanWorkspace({ root });
    clearInterval(timer);
    assert.strictEqual(result.files.length, 2000);
    assert.ok(ticks > 0);
  });
});

describe('scan: reading', () => {
  it('reads text, strips a BOM and keeps CRLF', async () => {
    const root = tree({ 'a.ts': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a\r\nb\n')]) });
    assert.deepStrictEqual(await readSourceFile(root, 'a.ts'), { text: 'a\r\nb\n' });
  });

  it('reads a file past the size it was stat-ed at, and no further than the limit (M13)', async function () {
    // Linux's /proc files stat as 0 bytes and have text: a file that grew after its stat.
    const proc = '/proc/self/status';
    if (!fs.existsSync(proc)) this.skip();
    const read = await readSourceFile('/proc', 'self/status');
    assert.ok('text' in read && read.text.includes('Pid:'), JSON.stringify(read).slice(0, 200));
    assert.deepStrictEqual(await readSourceFile('/proc', 'self/status', 10), { skip: 'too-large', detail: '11 bytes' });
    assert.deepStrictEqual(await readSourceFile(tree({ 'empty.ts': '' }), 'empty.ts'), { text: '' });
  });

  it('detects binary files', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    const noisy = Buffer.alloc(4000);
    for (let i = 0; i < noisy.length; i++) noisy[i] = i % 3 === 0 ? 0x01 : 0x61;
    const garbage = Buffer.alloc(4000);
    for (let i = 0; i < garbage.length; i++) garbage[i] = 0x80 + (i % 64);
    const root = tree({ 'img.png': png, 'noisy.dat': noisy, 'garbage.txt': garbage });
    assert.deepStrictEqual(await readSourceFile(root, 'img.png'), { skip: 'binary', detail: 'NUL byte' });
    assert.deepStrictEqual(await readSourceFile(root, 'noisy.dat'), { skip: 'binary', detail: 'control characters' });
    assert.deepStrictEqual(await readSourceFile(root, 'garbage.txt'), { skip: 'binary', detail: 'invalid UTF-8' });
  });

  it('indexes mostly-text files with a few invalid UTF-8 bytes, using replacement characters', async () => {
    const latin1 = Buffer.concat([Buffer.from('// caf'), Buffer.from([0xe9]), Buffer.from('\nconst x = 1;\n')]);
    const root = tree({ 'a.js': latin1 });
    assert.deepStrictEqual(await readSourceFile(root, 'a.js'), { text: '// caf\uFFFD\nconst x = 1;\n' });
  });

  it('detects minified files but not long ordinary ones', () => {
    const minified = 'var a=1;'.repeat(2000);
    assert.deepStrictEqual(decodeSource(Buffer.from(minified)), { skip: 'minified', detail: 'long average line' });
    const oneLongLine = `${'x'.repeat(6000)}\n${'const a = 1;\n'.repeat(30)}`;
    assert.deepStrictEqual(decodeSource(Buffer.from(oneLongLine)), { skip: 'minified', detail: 'long line' });
    const ordinary = 'export function f(a: number): number {\n  return a + 1;\n}\n'.repeat(500);
    assert.deepStrictEqual(decodeSource(Buffer.from(ordinary)), { text: ordinary });
    assert.deepStrictEqual(decodeSource(Buffer.alloc(0)), { text: '' });
  });

  it('reports a minified file on disk', async () => {
    const root = tree({ 'bundle.js': `!function(){${'var a=1;'.repeat(1000)}}();` });
    assert.strictEqual(((await readSourceFile(root, 'bundle.js')) as { skip: string }).skip, 'minified');
  });

  it('never throws: vanished files, directories and paths leaving the workspace', async () => {
    const root = tree({ 'a.ts': 'a', 'dir/b.ts': 'b' });
    const { files } = await scanWorkspace({ root });
    assert.strictEqual(files.length, 2);
    fs.rmSync(path.join(root, 'a.ts'));
    assert.deepStrictEqual(await readSourceFile(root, 'a.ts'), { skip: 'vanished', detail: 'ENOENT' });
    assert.deepStrictEqual(await readSourceFile(root, 'a.ts/x'), { skip: 'vanished', detail: 'ENOENT' });
    assert.deepStrictEqual(await readSourceFile(root, 'dir'), { skip: 'unreadable', detail: 'not a regular file' });
    assert.strictEqual(((await readSourceFile(root, '../etc/passwd')) as { skip: string }).skip, 'excluded');
  });
});
