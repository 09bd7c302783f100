import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { builtinNames } from '../../src/index/builtins';
import { isNonProductPath, isProductSource } from '../../src/index/productPath';
import { makeTasks, type Task } from '../../src/bench/makeTasks';
import { scanIdentifiers } from '../../src/index/lineIdentifiers';
import { languageForPath } from '../../src/index/languages';
import { SourceParser } from '../../src/index/parser';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';

const ROOT = path.resolve(__dirname, '../../../test/fixtures/repos/tasks-mini');

function words(text: string): Set<string> {
  return new Set((text.match(/[\w$]+/g) ?? []).filter((w) => !/^\d/.test(w)));
}

describe('builtinNames', () => {
  it('holds keywords, standard library and Node names with their members', () => {
    const names = builtinNames();
    for (const name of [
      'push',
      'then',
      'slice',
      'get',
      'console',
      'log',
      'Promise',
      'Map',
      'Array',
      'JSON',
      'process',
      'Buffer',
      'readFile',
      'const',
      'await',
      'globalThis',
    ]) {
      assert.ok(names.has(name), name);
    }
    for (const name of ['findByEmail', 'UserRepo', 'takeAll']) assert.ok(!names.has(name), name);
  });
});

describe('isProductSource', () => {
  it('keeps product TS/JS/Python/Go/Rust/Java and drops tests, fixtures, declarations and other languages', () => {
    for (const p of [
      'src/a.ts',
      'src/b.tsx',
      'lib/c.js',
      'scripts/release.mjs',
      'src/latest.ts',
      'src/contest/x.ts',
      'pkg/a.py',
      'cmd/b.go',
      'src/a.rs',
      'src/main/java/com/x/A.java',
    ]) {
      assert.ok(isProductSource(p), p);
    }
    for (const p of [
      'src/a.test.ts',
      'src/a.spec.tsx',
      'src/a.test-d.ts',
      'test/a.ts',
      'pkg/__tests__/a.ts',
      'pkg/__mocks__/a.ts',
      'e2e/a.ts',
      'packages/dts-test/a.ts',
      'test/fixtures/a.ts',
      'examples/a.ts',
      'bench/a.ts',
      'src/types.d.ts',
      'tests/test_a.py',
      'pkg/test_b.py',
      'pkg/conftest.py',
      'cmd/b_test.go',
      'tests/cli.rs',
      'src/test/java/com/x/ATest.java',
      'src/a.c',
      'README.md',
    ]) {
      assert.ok(!isProductSource(p), p);
    }
  });
});

describe('isNonProductPath', () => {
  it('tells test, fixture and example code by its path, whatever the language', () => {
    for (const p of ['tests/a.rs', 'src/a.test.ts', 'pkg/test_b.py', 'cmd/b_test.go', 'examples/demo/main.c'])
      assert.ok(isNonProductPath(p), p);
    for (const p of ['src/a.rs', 'src/latest.ts', 'src/types.d.ts', 'README.md']) assert.ok(!isNonProductPath(p), p);
  });
});

describe('scanIdentifiers', () => {
  it('tells declared names from members, calls, constructions, types and references', async () => {
    const parser = new SourceParser();
    try {
      const text = [
        'const user = await this.repo.findByEmail(email);',
        'const queue = new Queue<Job>(limit);',
        'function f(a: Options, { b, c: d }, ...rest) { return { key: value, short }; }',
        'items.map((x) => x.id);',
      ].join('\n');
      const tree = await parser.parse('a.ts', languageForPath('a.ts')!, text);
      const rows = scanIdentifiers(tree).identifiers;
      const roles = (row: number) => Object.fromEntries((rows.get(row) ?? []).map((i) => [i.name, i.role]));
      assert.deepStrictEqual(roles(0), { user: 'declared', repo: 'member', findByEmail: 'call', email: 'reference' });
      assert.deepStrictEqual(roles(1), { queue: 'declared', Queue: 'new', Job: 'type', limit: 'reference' });
      assert.deepStrictEqual(roles(2), {
        f: 'declared',
        a: 'declared',
        Options: 'type',
        b: 'declared',
        c: 'member',
        d: 'declared',
        rest: 'declared',
        key: 'declared',
        value: 'reference',
        short: 'reference',
      });
      assert.deepStrictEqual(
        rows.get(3)!.map((i) => `${i.name}:${i.role}`),
        ['items:reference', 'map:call', 'x:declared', 'x:reference', 'id:member'],
      );
    } finally {
      parser.dispose();
    }
  });

  it('tells the roles apart in Python and Go too', async () => {
    const parser = new SourceParser();
    try {
      const roles = async (file: string, text: string, row: number) => {
        const tree = await parser.parse(file, languageForPath(file)!, text);
        const found = scanIdentifiers(tree, languageForPath(file)!.id).identifiers.get(row) ?? [];
        return Object.fromEntries(found.map((i) => [i.name, i.role]));
      };
      const py = [
        'result = self.repo.find_user(user_id)',
        'client = HttpClient(timeout)',
        'for key, value in mapping.entries():',
        '    pass',
      ].join('\n');
      assert.deepStrictEqual(await roles('a.py', py, 0), {
        result: 'declared',
        self: 'reference',
        repo: 'member',
        find_user: 'call',
        user_id: 'reference',
      });
      assert.deepStrictEqual(await roles('a.py', py, 1), {
        client: 'declared',
        HttpClient: 'new',
        timeout: 'reference',
      });
      assert.deepStrictEqual(await roles('a.py', py, 2), {
        key: 'declared',
        value: 'declared',
        mapping: 'reference',
        entries: 'call',
      });
      const go = [
        'package main',
        'func run(s *Server) {',
        '\tcfg, err := s.LoadConfig(path)',
        '\tvar w Writer = NewWriter()',
        '}',
      ].join('\n');
      assert.deepStrictEqual(await roles('a.go', go, 1), { run: 'declared', s: 'declared', Server: 'type' });
      assert.deepStrictEqual(await roles('a.go', go, 2), {
        cfg: 'declared',
        err: 'declared',
        s: 'reference',
        LoadConfig: 'call',
        path: 'reference',
      });
      assert.deepStrictEqual(await roles('a.go', go, 3), { w: 'declared', Writer: 'type', NewWriter: 'call' });
    } finally {
      parser.dispose();
    }
  });

  it('tells the roles apart in Rust and Java', async () => {
    const parser = new SourceParser();
    try {
      const roles = async (file: string, text: string, row: number) => {
        const tree = await parser.parse(file, languageForPath(file)!, text);
        const found = scanIdentifiers(tree, languageForPath(file)!.id).identifiers.get(row) ?? [];
        return found.map((i) => `${i.name}:${i.role}`);
      };
      const rs = [
        'use crate::net::{Client, tcp::Stream as Tcp};',
        "fn run<'a>(cfg: &'a Config) -> Result<Report, Error> {",
        '    let conn = Client::connect(cfg.addr, Tcp { port: PORT });',
        '    if let Some(Reply { body, .. }) = conn.send::<u8>(&msg) { return Wrapper(body); }',
        '}',
      ].join('\n');
      assert.deepStrictEqual(await roles('a.rs', rs, 0), [
        'net:declared',
        'Client:declared',
        'tcp:declared',
        'Stream:declared',
        'Tcp:declared',
      ]);
      assert.deepStrictEqual(await roles('a.rs', rs, 1), [
        'run:declared',
        'cfg:declared',
        'Config:type',
        'Result:type',
        'Report:type',
        'Error:type',
      ]);
      assert.deepStrictEqual(await roles('a.rs', rs, 2), [
        'conn:declared',
        'Client:type',
        'connect:call',
        'cfg:reference',
        'addr:member',
        'Tcp:new',
        'port:member',
        'PORT:reference',
      ]);
      assert.deepStrictEqual(await roles('a.rs', rs, 3), [
        'Some:reference',
        'Reply:type',
        'body:declared',
        'conn:reference',
        'send:call',
        'msg:reference',
        'Wrapper:new',
        'body:reference',
      ]);
      const java = [
        'package com.acme;',
        'import com.acme.model.User;',
        'class A extends Base {',
        '  @Override public User find(String id) { User u = repo.lookup(id).owner; return new User(u.name); }',
        '  void each() { users.forEach(x -> x.go()); }',
        '}',
      ].join('\n');
      assert.deepStrictEqual(await roles('A.java', java, 1), [
        'com:declared',
        'acme:declared',
        'model:declared',
        'User:declared',
      ]);
      assert.deepStrictEqual(await roles('A.java', java, 2), ['A:declared', 'Base:type']);
      assert.deepStrictEqual(await roles('A.java', java, 3), [
        'Override:type',
        'User:type',
        'find:declared',
        'String:type',
        'id:declared',
        'User:type',
        'u:declared',
        'repo:reference',
        'lookup:call',
        'id:reference',
        'owner:member',
        'User:new',
        'u:reference',
        'name:member',
      ]);
      assert.deepStrictEqual(await roles('A.java', java, 4), [
        'each:declared',
        'users:reference',
        'forEach:call',
        'x:declared',
        'x:reference',
        'go:call',
      ]);
    } finally {
      parser.dispose();
    }
  });
});

describe('makeTasks', () => {
  let index: RepoIndex;
  let tasks: Task[];
  const text = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

  before(async () => {
    index = new RepoIndex(ROOT);
    await buildIndex(index, { root: ROOT });
    tasks = await makeTasks(index, ROOT, {});
  });

  after(() => index.dispose());

  it('finds the cross-file call of UserRepo.findByEmail', () => {
    const task = tasks.find((t) => t.metadata.kind === 'cross' && t.metadata.novel_identifiers.includes('findByEmail'));
    assert.ok(task, JSON.stringify(tasks.map((t) => t.metadata.task_id)));
    assert.strictEqual(task.metadata.file, 'src/services/userService.ts');
    assert.strictEqual(task.groundtruth, 'const user = await this.repo.findByEmail(email);');
    assert.deepStrictEqual(task.metadata.novel_identifiers, ['findByEmail']);
  });

  it('writes every task in the CrossCodeEval format, cut at the first non-blank character', () => {
    assert.ok(tasks.length > 0);
    for (const t of tasks) {
      const m = t.metadata;
      assert.deepStrictEqual(Object.keys(t).sort(), ['groundtruth', 'metadata', 'prompt', 'right_context']);
      assert.deepStrictEqual(Object.keys(m).sort(), [
        'file',
        'groundtruth_start_lineno',
        'kind',
        'novel_identifiers',
        'repository',
        'task_id',
      ]);
      assert.strictEqual(m.repository, 'tasks-mini');
      assert.strictEqual(m.task_id, `tasks-mini/${m.file}:${m.groundtruth_start_lineno}`);
      assert.ok(Number.isInteger(m.groundtruth_start_lineno));
      assert.ok(Array.isArray(m.novel_identifiers) && m.novel_identifiers.every((n) => typeof n === 'string'));
      assert.ok(m.kind === 'cross' || m.kind === 'infile');
      const source = text(m.file);
      const promptLines = t.prompt.split('\n');
      assert.strictEqual(promptLines.length - 1, m.groundtruth_start_lineno);
      assert.match(promptLines[promptLines.length - 1], /^\s*$/);
      const line = source.split('\n')[m.groundtruth_start_lineno];
      assert.strictEqual(t.prompt + line.trimStart() + '\n' + t.right_context, source);
      assert.strictEqual(line.trim(), t.groundtruth);
      assert.ok(t.groundtruth.length >= 6 && !/^\s/.test(t.groundtruth));
    }
  });

  it('takes tasks only from product TS/JS files: never tests or declaration files', () => {
    for (const t of tasks) {
      assert.ok(isProductSource(t.metadata.file), t.metadata.file);
      assert.notStrictEqual(t.metadata.file, 'src/services/userService.test.ts');
      assert.ok(!t.metadata.file.startsWith('tests/') && !t.metadata.file.endsWith('.d.ts'), t.metadata.file);
    }
  });

  it('skips comments, imports and lines that only declare', () => {
    const gts = tasks.map((t) => t.groundtruth);
    assert.ok(!gts.some((g) => g.startsWith('//') || g.startsWith('import ')), gts.join('\n'));
    assert.ok(!gts.includes('export class UserService {'));
    assert.ok(!gts.includes('let sum = 0;'));
  });

  it('makes infile tasks only from lines whose used identifiers all occur in the file context', async () => {
    const infile = tasks.filter((t) => t.metadata.kind === 'infile');
    assert.ok(infile.some((t) => t.groundtruth === 'const discounted = sum - sum * discount;'));
    const parser = new SourceParser();
    try {
      for (const t of infile) {
        assert.deepStrictEqual(t.metadata.novel_identifiers, []);
        const tree = await parser.parse(t.metadata.file, languageForPath(t.metadata.file)!, text(t.metadata.file));
        const ids = scanIdentifiers(tree).identifiers.get(t.metadata.groundtruth_start_lineno) ?? [];
        const declared = new Set(ids.filter((i) => i.role === 'declared').map((i) => i.name));
        const used = ids.filter((i) => i.role !== 'declared' && !declared.has(i.name)).map((i) => i.name);
        assert.ok(new Set(used).size >= 2, t.metadata.task_id);
        const context = words(t.prompt + '\n' + t.right_context);
        assert.deepStrictEqual(
          used.filter((n) => !context.has(n)),
          [],
          t.metadata.task_id,
        );
      }
    } finally {
      parser.dispose();
    }
  });

  it('makes cross tasks whose novel identifiers are absent from the context and declared in another file', () => {
    const cross = tasks.filter((t) => t.metadata.kind === 'cross');
    assert.ok(cross.some((t) => t.metadata.novel_identifiers.includes('takeAll')));
    for (const t of cross) {
      const context = words(t.prompt + '\n' + t.right_context);
      assert.ok(t.metadata.novel_identifiers.length > 0);
      for (const name of t.metadata.novel_identifiers) {
        assert.ok(!context.has(name), name);
        assert.ok(
          index.symbols(name).some((ref) => ref.path !== t.metadata.file),
          name,
        );
      }
    }
  });

  it('never counts built-ins as novel, even when the repository declares the same name', () => {
    const builtins = builtinNames();
    for (const t of tasks) for (const name of t.metadata.novel_identifiers) assert.ok(!builtins.has(name), name);
    // Queue declares push and then, but a model knows them: these lines are neither cross nor solvable in-file.
    assert.ok(index.symbols('push').some((ref) => ref.path === 'src/util/queue.ts'));
    assert.ok(!tasks.some((t) => t.groundtruth.startsWith('queue.push') || t.groundtruth.startsWith('queue.then')));
    assert.ok(!tasks.some((t) => /^(console|Promise|push)$/.test(t.metadata.novel_identifiers.join())));
  });

  it('samples uniformly over lines unless capped per file, and is deterministic for a seed', async () => {
    const largest = (list: typeof tasks): number => {
      const perFile = new Map<string, number>();
      for (const t of list) {
        const key = `${t.metadata.kind} ${t.metadata.file}`;
        perFile.set(key, (perFile.get(key) ?? 0) + 1);
      }
      return Math.max(...perFile.values());
    };
    const capped = await makeTasks(index, ROOT, { seed: 42, perFile: 1 });
    assert.ok(largest(tasks) > 1, 'no cap: a file with several question lines gives several tasks');
    assert.strictEqual(largest(capped), 1);
    assert.ok(capped.length < tasks.length);
    assert.deepStrictEqual(await makeTasks(index, ROOT, { seed: 42 }), tasks);
    const small = await makeTasks(index, ROOT, { perKind: 1, seed: 7 });
    assert.deepStrictEqual(
      small.map((t) => t.metadata.kind),
      ['cross', 'infile'],
    );
    assert.deepStrictEqual(await makeTasks(index, ROOT, { perKind: 1, seed: 7 }), small);
  });
});
