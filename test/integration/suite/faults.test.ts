/**
 * The faults a user's machine produces, each injected into the running editor: the engine process killed during
 * a generation, the index process killed, the index cache truncated or garbled, a full disk under the cache, the
 * model file replaced by a truncated copy while loaded, the workspace folder renamed while it is indexed, the
 * inference server refusing requests (401) and then answering again; and, beside them, the same server spoken to
 * in text prompts (an OpenAI-compatible server that takes no token ids). After each fault, ghost text must come back with no
 * action beyond what the message asks (its time from the fault's end is reported against the 10 s), the
 * extension host never reloads (this suite runs inside it), and the log carries one clear line about it. Runs
 * after extension.test.ts.
 *
 * Faults are real: SIGKILL to the engine's and the index's processes, bytes cut from real files, a real tmpfs that
 * fills up (needs root; skipped otherwise), a real llama-server behind a proxy that answers 401 (skipped when no
 * llama-server build is cached: tools/llama-server/build.sh).
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'fs';
import { homedir, tmpdir } from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { startLlamaServer, startProxy, type MisbehavingProxy, type RunningServer } from '../../helpers/llamaServer';
import {
  acceptGhostText,
  COMPLETION_MS,
  config,
  cutLine,
  expectGhostText,
  explainUntil,
  EXTENSION_ID,
  note,
  revertDirtyFiles,
  run,
  setGlobal,
  show,
  sleep,
  waitFor,
  withTimeout,
  workspaceFolder,
} from './helpers';

/** The figure: ghost text within this long of a fault's end. Reported for each fault (`note`). */
const RECOVERY_TARGET_MS = 10_000;
/**
 * The check itself fails only past this bound: timing targets are reported, not asserted, because on this
 * project's two shared cores a fresh engine process alone took 6-36 s to load node-llama-cpp and the model.
 */
const RECOVERY_BOUND_MS = 60_000;
/** Asks again this often while recovering, so that the first answer after recovery is not missed by 5 s. */
const RECOVERY_RETRIGGER_MS = 1_000;
/** The provider's debounce (120 ms) and the start of the tiny model's generation: the engine is then busy. */
const INTO_GENERATION_MS = 250;
/** A tmpfs of one page: far smaller than the fixture's index cache, so its write fails with ENOSPC. */
const FULL_DISK_SIZE = '4k';
/** How long the log may take to show a line (it is flushed asynchronously). */
const LOG_MS = 60_000;
/** Long enough for a few requests to reach a refusing server. */
const REFUSED_MS = 3_000;

/**
 * Places that no earlier test completed, one per completion: the cursor cache cannot answer there, so ghost text
 * proves that the engine (and the index, where it is asked) answered after the fault.
 */
const PLACES: [file: string, line: number, prefix: string][] = [
  ['src/db/database.ts', 4, '    const rows = '],
  // Only triggered (the engine is killed during it): no ghost text is expected here.
  ['src/db/userRepo.ts', 6, '  async findByEmail(email: string): '],
  ['src/db/database.ts', 9, '    const rows = this.'],
  ['src/db/database.ts', 10, '    rows.'],
  ['src/db/database.ts', 11, '    this.rows.'],
  ['src/db/database.ts', 3, '  query<T>(table: string, predicate: '],
  ['src/db/database.ts', 8, '  insert<T>(table: string, '],
  ['src/db/userRepo.ts', 7, '    return this.db.'],
  ['src/db/userRepo.ts', 11, '    this.db.'],
  ['src/db/userRepo.ts', 15, '    return this.db.query'],
  ['src/models/user.ts', 8, '  return email.'],
  ['src/db/userRepo.ts', 11, '    this.db.insert('],
];
let nextPlace = 0;

/** Whether tools/llama-server/build.sh has a finished build in the cache (the server tests need one). */
function llamaServerBuilt(): boolean {
  const cache = process.env.REPOGATE_CACHE ?? path.join(homedir(), '.cache', 'repogate');
  const builds = path.join(cache, 'llama-server');
  if (existsSync(builds) && readdirSync(builds).some((c) => existsSync(path.join(builds, c, 'done')))) return true;
  console.log(`      no llama-server build in ${builds} (tools/llama-server/build.sh): skipped`);
  return false;
}

async function freshPlace(): Promise<vscode.TextEditor> {
  const place = PLACES[nextPlace++];
  assert.ok(place, 'the fault suite ran out of fresh places to complete at');
  return cutLine(...place);
}

/**
 * Ghost text at a fresh place within RECOVERY_BOUND_MS of `since` (the fault's end); returns how long it took. The file is
 * reverted afterwards: no test leaves an edited buffer behind that a save could write into the workspace.
 */
async function recovered(since: number, what: string, place?: vscode.TextEditor): Promise<number> {
  const editor = place ?? (await freshPlace());
  await expectGhostText(editor, RECOVERY_BOUND_MS - (Date.now() - since), what, RECOVERY_RETRIGGER_MS);
  const ms = Date.now() - since;
  note(`ghost text again ${(ms / 1000).toFixed(1)} s after ${what} (target ${RECOVERY_TARGET_MS / 1000} s)`);
  await revert(editor);
  return ms;
}

async function revert(editor: vscode.TextEditor): Promise<void> {
  await show(editor.document);
  await run('workbench.action.files.revert');
}

/** The newest RepoGate log of this run (the output channel is written to the user-data folder's logs). */
function extensionLog(): string {
  const logs = path.join(process.env.REPOGATE_IT_USER_DATA ?? '', 'logs');
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'RepoGate.log') found.push(full);
    }
  };
  if (existsSync(logs)) walk(logs);
  const newest = found.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  return newest ? readFileSync(newest, 'utf8') : '';
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern, 'g'))?.length ?? 0;

/** Waits until `pattern` occurs in the log more often than `before` times; returns the log. */
async function waitForLogLine(pattern: RegExp, before: number, what: string): Promise<string> {
  let text = '';
  await waitFor(
    () => count((text = extensionLog()), pattern) > before,
    LOG_MS,
    `${what} (${pattern} in the RepoGate log)`,
  );
  return text;
}

/** The engine process: the child of this extension host (forked by the launcher thread) running engineProcess.js. */
/** The process of RepoGate's running `script` (engineProcess.js, indexProcess.js): a child of the extension host. */
function childPid(script: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== process.pid) continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(script)) return Number(name);
    } catch {
      // A process that ended while being read.
    }
  }
  return undefined;
}

/** Kills the index process as a crash would; resolves once it is gone. */
async function killIndexProcess(): Promise<void> {
  const pid = childPid('indexProcess.js');
  assert.ok(pid, `no index process is a child of the extension host (${process.pid})`);
  process.kill(pid, 'SIGKILL');
  // A killed process reads as a zombie (an empty command line) until the host has reaped it.
  const alive = (): boolean => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
    } catch {
      return false;
    }
  };
  while (alive()) await sleep(50);
}

/** The index cache folder of this workspace: the extension's workspace storage, holding index.meta.json. */
function cacheDir(): string {
  const storage = path.join(process.env.REPOGATE_IT_USER_DATA ?? '', 'User', 'workspaceStorage');
  for (const workspace of existsSync(storage) ? readdirSync(storage) : []) {
    const dir = path.join(storage, workspace, EXTENSION_ID);
    if (existsSync(path.join(dir, 'index.meta.json'))) return dir;
  }
  return assert.fail(`no index cache under ${storage}`);
}

function treeOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (sub: string): void => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.set(rel, readFileSync(path.join(dir, rel), 'utf8'));
    }
  };
  walk('');
  return files;
}

describe('RepoGate recovers from faults', function () {
  this.timeout(180_000);
  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not loaded`);
    await withTimeout(extension.activate(), 60_000, 'activation');
    await setGlobal('gate', 'always');
  });

  after(async () => {
    await setGlobal('gate', undefined);
    await revertDirtyFiles();
  });

  it('accepting inserts exactly the ghost text, and one undo removes it', async () => {
    const editor = await freshPlace();
    const before = editor.document.getText();
    const inserted = await expectGhostText(editor, 60_000, 'before any fault');
    assert.strictEqual(editor.document.getText().length, before.length + inserted.length);
    await run('undo');
    assert.strictEqual(editor.document.getText(), before, 'one undo did not restore the text before the acceptance');
    await revert(editor);
  });

  it('the engine process killed (SIGKILL) during a generation: restarted with one notice, ghost text again', async () => {
    const pid = childPid('engineProcess.js');
    assert.ok(pid, `no engine process is a child of the extension host (${process.pid})`);
    const notices = count(extensionLog(), /the engine process stopped/);
    const editor = await freshPlace();
    await run('editor.action.inlineSuggest.trigger');
    await sleep(INTO_GENERATION_MS);
    process.kill(pid, 'SIGKILL');
    const killed = Date.now();
    await revert(editor);
    await recovered(killed, 'the engine was killed');
    assert.notStrictEqual(childPid('engineProcess.js'), pid, 'the engine process was not replaced');
    const log = await waitForLogLine(/the engine process stopped/, notices, 'the restart notice');
    assert.strictEqual(count(log, /the engine process stopped/), notices + 1, 'more than one notice for one kill');
    assert.match(log, /the engine process stopped \(SIGKILL\); it was restarted with the same model/);
  });

  it('the index process killed: rebuilt from its cache, and retrieval answers again', async () => {
    const before = count(extensionLog(), /cache: loaded/);
    await killIndexProcess();
    const ended = Date.now();
    const log = await waitForLogLine(/cache: loaded/, before, 'the index rebuilt from its cache');
    assert.match(log, /the index process stopped \(SIGKILL\); rebuilding the index from its cache/);
    assert.match(
      log
        .split('\n')
        .filter((l) => /cache: loaded/.test(l))
        .at(-1) ?? '',
      /; 0 parsed; /,
    );
    await recovered(ended, 'the index process was killed');
  });

  for (const [what, damage] of [
    [
      'truncated',
      (dir: string) => truncateSync(path.join(dir, 'index.jsonl'), statSync(path.join(dir, 'index.jsonl')).size >> 1),
    ],
    ['garbled', (dir: string) => writeFileSync(path.join(dir, 'index.meta.json'), '{"version": 15, "checksum": ')],
  ] as const) {
    it(`the index cache ${what}: discarded with a warning, the index rebuilt from the files`, async () => {
      const before = count(extensionLog(), /index cache discarded/);
      damage(cacheDir());
      await killIndexProcess();
      const ended = Date.now();
      const log = await waitForLogLine(/index cache discarded/, before, 'the warning about the cache');
      assert.match(
        log,
        /\[warning\] index cache discarded \((cache checksum mismatch|unreadable cache: .+)\); every file was parsed again/,
      );
      await recovered(ended, `the cache was ${what}`);
    });
  }

  it('a full disk under the index cache: the index stays in memory, the user is warned once', async function () {
    const dir = cacheDir();
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FULL_DISK_SIZE}`, 'tmpfs', dir], { stdio: 'pipe' });
    } catch (error) {
      console.log(`      cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]}): skipped`);
      this.skip();
    }
    try {
      const failures = count(extensionLog(), /could not save the index cache/);
      const notices = count(extensionLog(), /The index stays in memory/);
      for (let i = 1; i <= 2; i++) {
        await withTimeout(run('repogate.reindex'), 60_000, 'repogate.reindex');
        await waitForLogLine(/could not save the index cache/, failures + i - 1, 'the failed cache write');
      }
      const log = extensionLog();
      assert.match(log, /could not save the index cache \([^)]*ENOSPC/);
      assert.strictEqual(count(log, /The index stays in memory/), notices + 1, 'not warned exactly once');
      await recovered(Date.now(), 'the disk filled up');
    } finally {
      execFileSync('umount', ['-l', dir]);
    }
  });

  it('the model file replaced by a truncated copy while loaded: a clear error with the fix, then ghost text once fixed', async () => {
    const original = config().get<string>('modelPath', '');
    const folder = mkdtempSync(path.join(tmpdir(), 'repogate-fault-model-'));
    const model = path.join(folder, 'tiny.gguf');
    const replace = (bytes: Buffer): void => {
      writeFileSync(`${model}.part`, bytes);
      renameSync(`${model}.part`, model);
    };
    const good = readFileSync(original);
    try {
      copyFileSync(original, model);
      const ready = count(extensionLog(), /model ready: /);
      await setGlobal('modelPath', model);
      await waitForLogLine(/model ready: /, ready, 'the copied model loaded');
      const errors = count(extensionLog(), /model error: /);
      replace(good.subarray(0, good.length >> 1));
      const log = await waitForLogLine(/model error: /, errors, 'the truncated model reported');
      const line =
        log
          .split('\n')
          .filter((l) => /model error: /.test(l))
          .at(-1) ?? '';
      assert.match(line, /is incomplete|is cut short/, `not a clear error: ${line}`);
      assert.match(line, /delete the file and download it again/, `no fix in: ${line}`);
      // The fix the message names: the complete file again.
      replace(good);
      await recovered(Date.now(), 'the model file was repaired');
    } finally {
      await setGlobal('modelPath', original);
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('the workspace folder renamed while it is indexed: no crash, ghost text again once it is back', async () => {
    const root = workspaceFolder().uri.fsPath;
    const moved = `${root}-moved`;
    const pid = childPid('engineProcess.js');
    const reindexing = run('repogate.reindex');
    renameSync(root, moved);
    await withTimeout(reindexing, 60_000, 'repogate.reindex with the folder gone');
    renameSync(moved, root);
    const back = Date.now();
    assert.strictEqual(childPid('engineProcess.js'), pid, 'the engine process did not survive');
    await recovered(back, 'the workspace folder came back');
  });

  it('the server refuses (401), then answers again: completions resume', async function () {
    if (!llamaServerBuilt()) this.skip();
    let server: RunningServer | undefined;
    let proxy: MisbehavingProxy | undefined;
    try {
      server = await startLlamaServer({ model: config().get<string>('modelPath', ''), threads: 1 });
      proxy = await startProxy(server.url);
      const answering = count(extensionLog(), /model ready: /);
      await setGlobal('serverUrl', proxy.url);
      await setGlobal('engine', 'llama-server');
      await waitForLogLine(/model ready: /, answering, 'the server model loaded');
      const first = await freshPlace();
      await expectGhostText(first, 60_000, 'from the server');
      await revert(first);
      const refusals = count(extensionLog(), /refused the request \(401/);
      proxy.mode = 'status-401';
      const refusing = await freshPlace();
      const refused = await acceptGhostText(refusing, REFUSED_MS, RECOVERY_RETRIGGER_MS);
      assert.strictEqual(refused, undefined, 'ghost text appeared while the server refused every request');
      await waitForLogLine(/refused the request \(401/, refusals, 'the 401 reported');
      proxy.mode = 'pass';
      // The place the server refused: nothing was cached for it, so the ghost text comes from the server.
      await recovered(Date.now(), 'the server answered again', refusing);
    } finally {
      await setGlobal('engine', undefined);
      await setGlobal('serverUrl', undefined);
      await proxy?.close();
      await server?.stop();
    }
  });

  it('text prompts to an OpenAI-compatible server (a real llama-server): the ghost text and P(<cc>) of token ids', async function () {
    if (!llamaServerBuilt()) this.skip();
    const server = await startLlamaServer({ model: config().get<string>('modelPath', ''), threads: 1 });
    const place = PLACES[nextPlace++];
    assert.ok(place, 'the fault suite ran out of fresh places to complete at');
    const readings: { format: string; score: number; completion: string }[] = [];
    // The gate's own reading is what is compared: the suite's 'always' would skip it.
    await setGlobal('gate', 'token');
    try {
      for (const [engine, url, format] of [
        ['llama-server', server.url, 'token ids'],
        ['openai-compatible', `${server.url}/v1`, 'text'],
      ] as const) {
        // Each setting reloads the model; the last load is the one with all three.
        const loaded = new RegExp(`model ready: .* on ${engine} at .*, prompts as ${format}`);
        const answering = count(extensionLog(), loaded);
        await setGlobal('serverUrl', url);
        await setGlobal('serverPromptFormat', format === 'text' ? 'text' : undefined);
        await setGlobal('engine', engine);
        await waitForLogLine(loaded, answering, `the server model loaded (${engine}, ${format})`);
        const editor = await cutLine(...place);
        await expectGhostText(editor, COMPLETION_MS, `from the server (${format})`);
        // Read before the revert: the restored line may be completed too, and that completion would be the last.
        const explained = await explainUntil(new RegExp(`prompts as ${format === 'text' ? 'text' : 'token ids'}`));
        await revert(editor);
        const score = /P\(<cc>\) from the generator = ([\d.]+)/.exec(explained);
        const completion = /^completion \([^)]*\):\n([\s\S]*)$/m.exec(explained);
        assert.ok(score && completion, `Explain shows no gate reading or completion:\n${explained}`);
        readings.push({ format, score: Number(score[1]), completion: completion[1] });
      }
      const [ids, text] = readings;
      note(
        `P(<cc>) ${ids.score} over token ids, ${text.score} over text; completion ${JSON.stringify(text.completion)}`,
      );
      // Explain prints three decimals: the 1e-3 bound plus each reading's rounding.
      assert.ok(Math.abs(ids.score - text.score) <= 2e-3, `P(<cc>) ${text.score} over text vs ${ids.score}`);
      assert.strictEqual(text.completion, ids.completion);
    } finally {
      await setGlobal('engine', undefined);
      await setGlobal('serverUrl', undefined);
      await setGlobal('serverPromptFormat', undefined);
      await setGlobal('gate', 'always');
      await server.stop();
    }
  });

  it('the workspace holds exactly the files it started with (the extension never writes into it)', async () => {
    await revertDirtyFiles();
    const fixture = process.env.REPOGATE_IT_FIXTURE;
    assert.ok(fixture, 'REPOGATE_IT_FIXTURE is not set');
    assert.deepStrictEqual(treeOf(workspaceFolder().uri.fsPath), treeOf(fixture));
  });
});
