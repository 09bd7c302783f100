/**
 * The command line on bad input, run as a user runs it (a separate Node process): every error names the input,
 * says what is wrong and what to do, exits non-zero, and shows no stack trace or internal message.
 */
import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { SHOP, tempDir } from '../helpers/fixtures';

const CLI = path.resolve(__dirname, '../../src/cli.js');
const FILE = 'src/services/userService.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

describe('command line errors', function () {
  this.timeout(60_000);
  let temp: { dir: string; cleanup: () => Promise<void> };
  let cache: string;

  before(async () => {
    temp = await tempDir('repogate-cli-');
    cache = path.join(temp.dir, 'cache');
  });
  after(() => temp.cleanup());

  const run = (...args: string[]): Run => {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: cache },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  /** The input is named, a second line says what to do, and nothing internal leaks. */
  const assertClear = (result: Run, status: number, input: string, problem: RegExp, fix: RegExp): void => {
    assert.equal(result.status, status, result.stderr);
    const [first, second, ...rest] = result.stderr.trimEnd().split('\n');
    assert.ok(first.startsWith(`repogate: ${input}`), first);
    assert.match(first, problem);
    assert.match(second ?? '', fix);
    assert.deepEqual(rest, []);
    assert.doesNotMatch(result.stderr, /\n\s+at |Error:|ENOENT|TypeError|undefined/);
  };

  it('a line past the end of the file', () => {
    const result = run('complete', SHOP, `${FILE}:900:1`);
    assertClear(
      result,
      1,
      `${FILE}:900:1`,
      /line 900 is past the end of the file \(\d+ lines\)/,
      /Pass a line from 1 to \d+/,
    );
  });

  it('a column past the end of the line', () => {
    const result = run('retrieve', SHOP, `${FILE}:9:400`);
    assertClear(result, 1, `${FILE}:9:400`, /column 400 is past the end of line 9/, /Pass a column from 1 to \d+/);
  });

  it('a position that is not file:line:col, or counts from 0', () => {
    assertClear(run('retrieve', SHOP, FILE), 2, FILE, /not a position/, /<file>:<line>:<column>/);
    assertClear(run('retrieve', SHOP, `${FILE}:0:1`), 2, `${FILE}:0:1`, /count from 1/, /<file>:<line>:<column>/);
  });

  it('a file that does not exist, or lies outside the repository', () => {
    assertClear(run('complete', SHOP, 'src/nope.ts:1:1'), 1, 'src/nope.ts', /does not exist/, /path of a file/);
    assertClear(run('complete', SHOP, '../outside.ts:1:1'), 1, '../outside.ts', /not a file inside/, /path of a file/);
  });

  it('a secret file: never read into a prompt', () => {
    assertClear(run('complete', SHOP, '.env:1:1'), 1, '.env', /is a secret file/, /source file/);
  });

  it('a repository folder that does not exist, or is a file', () => {
    const missing = path.join(temp.dir, 'nonexistent');
    assertClear(run('index', missing), 1, missing, /does not exist/, /folder of a repository/);
    const file = path.join(SHOP, FILE);
    assertClear(run('index', file), 1, file, /is a file, not a folder/, /folder of a repository/);
  });

  it('an unknown command, an unknown option, a missing value, one argument too many', () => {
    assertClear(run('frobnicate'), 2, 'frobnicate', /not a command/, /repogate --help/);
    assertClear(run('index', '--frob'), 2, '--frob', /not an option/, /repogate --help/);
    assertClear(run('retrieve', SHOP, `${FILE}:9:3`, '--budget'), 2, '--budget', /needs a value/, /repogate --help/);
    assertClear(run('index', SHOP, 'extra'), 2, 'extra', /one argument too many/, /repogate --help/);
    assertClear(run('retrieve', SHOP), 2, 'retrieve needs', /<file>:<line>:<col>/, /repogate --help/);
  });

  it('numbers that are not whole numbers in range, and unknown gates and modes', () => {
    assertClear(
      run('retrieve', SHOP, `${FILE}:9:3`, '--budget', 'abc'),
      2,
      '--budget abc',
      /whole number/,
      /--budget 2000/,
    );
    assertClear(run('complete', SHOP, `${FILE}:9:3`, '--threads', '0'), 2, '--threads 0', /at least 1/, /--threads/);
    assertClear(
      run('make-tasks', SHOP, '--out', 'x', '--per-kind', '1.5'),
      2,
      '--per-kind 1.5',
      /whole number/,
      /--per-kind/,
    );
    assertClear(
      run('complete', SHOP, `${FILE}:9:3`, '--gate', 'sometimes'),
      2,
      '--gate sometimes',
      /not a gate/,
      /help/,
    );
    assertClear(
      run('complete', SHOP, `${FILE}:9:3`, '--mode', 'block'),
      2,
      '--mode block',
      /line or multiline/,
      /help/,
    );
  });

  it('a model file that is missing or is not a GGUF: the model check names it and says what to do', () => {
    const missing = path.join(temp.dir, 'missing.gguf');
    const result = run('complete', SHOP, `${FILE}:9:3`, '--model', missing);
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      new RegExp(`^repogate: ${missing.replace(/[.]/g, '\\.')} does not exist\\. Check the model path`),
    );
    assert.doesNotMatch(result.stderr, /\n\s+at |ENOENT/);
  });

  it('a task file that is missing, is not JSON lines of tasks, or belongs to another repository', async () => {
    const missing = path.join(temp.dir, 'none.jsonl');
    assertClear(run('bench', '--repo', SHOP, '--tasks', missing), 1, missing, /does not exist/, /repogate make-tasks/);
    const bad = path.join(temp.dir, 'bad.jsonl');
    await fs.writeFile(bad, '{"prompt": "x"}\nnot json\n');
    assertClear(run('bench', '--repo', SHOP, '--tasks', bad), 1, `${bad}:1`, /is not a task/, /repogate make-tasks/);
    const foreign = path.join(temp.dir, 'foreign.jsonl');
    const task = {
      prompt: 'a',
      right_context: '',
      groundtruth: 'b',
      metadata: { file: 'src/elsewhere.ts', kind: 'cross', novel_identifiers: [] },
    };
    await fs.writeFile(foreign, `${JSON.stringify(task)}\n`);
    assertClear(run('bench', '--repo', SHOP, '--tasks', foreign), 1, foreign, /not in .*src\/elsewhere\.ts/, /--repo/);
  });

  it('an --out or --features path in a folder that does not exist', async () => {
    const out = path.join(temp.dir, 'no', 'tasks.jsonl');
    assertClear(run('make-tasks', SHOP, '--out', out), 1, `--out ${out}`, /folder does not exist/, /existing folder/);
    const tasks = path.join(temp.dir, 'shop.jsonl');
    const task = {
      prompt: 'a',
      right_context: '',
      groundtruth: 'b',
      metadata: { file: FILE, kind: 'cross', novel_identifiers: [] },
    };
    await fs.writeFile(tasks, `${JSON.stringify(task)}\n`);
    const features = path.join(temp.dir, 'no', 'features.jsonl');
    const result = run('bench', '--repo', SHOP, '--tasks', tasks, '--gate', 'never', '--features', features);
    assertClear(result, 1, `--features ${features}`, /folder does not exist/, /existing folder/);
  });
});

describe('repogate demo', function () {
  this.timeout(120_000);

  it("shows the gate's reading, the packed snippets with their reasons, and both completions", async () => {
    const temp = await tempDir('repogate-demo-');
    try {
      const result = spawnSync(process.execPath, [CLI, 'demo', SHOP, `${FILE}:9:38`], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: temp.dir },
      });
      assert.equal(result.status, 0, result.stderr);
      const out = result.stdout;
      assert.match(out, /demo model, 4 M parameters/);
      assert.match(out, /9 \| {5}const existing = await this\.repo\.▌/);
      assert.match(out, /own line goes on with: findByEmail\(normalized\);/);
      const gate = /P\(<cc>\), read from the generator = ([\d.]+) ([>≤]) threshold ([\d.]+)/.exec(out);
      assert.ok(gate, out);
      assert.equal(gate[2] === '>', Number(gate[1]) > Number(gate[3]));
      // A closed gate is said to be overridden for the demo; an open one is not.
      assert.equal(/retrieval is forced once/.test(out), gate[2] === '≤');
      assert.match(out, /#1 src\/db\/userRepo\.ts:\d+-\d+ \[definition\] type of this\.repo/);
      assert.match(out, /findByEmail: in #\d \(src\/db\/userRepo\.ts\)/);
      assert.match(out, /without cross-file context.*: +("|\(nothing usable\))/);
      assert.match(out, /with the packed context.*: +("|\(nothing usable\))/);
    } finally {
      await temp.cleanup();
    }
  });
});
