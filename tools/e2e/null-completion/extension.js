// Test-only baseline extension (installed by test/e2e/run.mjs). Two jobs, both for the editor-latency checks:
// 1. With "repogateE2eBaseline.nullCompletions" on, it answers every inline completion request with a fixed text
//    after DELAY_MS: the keystroke → ghost text time of an extension that does no work, measured in the same
//    code-server session as RepoGate, is the baseline RepoGate's figure is reported against.
// 2. It carries out requests the test drops into $REPOGATE_E2E_BASELINE_DIR as request-<n>.json and answers each
//    with done-<n>.json: {op: "open", file, line} opens a file with the cursor at the end of a line (the explorer
//    cannot reach deep files of a large repository: its list only renders the rows in view), {op: "configure",
//    settings} sets user settings through the configuration API (no race with a file watcher), {op: "loopDelay",
//    forMs} answers the extension host's longest event-loop delay over the first `forMs` after activation,
//    {op: "loopWindow"} the longest since the previous loopWindow and the host's JS heap in use (the soak's
//    samples), {op: "save"} saves the active document and answers once it is written, {op: "hook", name} calls
//    RepoGate's test hook `name` (exported with REPOGATE_TEST_HOOKS=1: the live index's size, its requests).
// 3. It measures that delay the way RepoGate measures its builds (src/vscode/reindex.ts: monitorEventLoopDelay at
//    1 ms resolution), from its activation (onStartupFinished, like RepoGate's): in a window without RepoGate, that
//    is what VS Code's own start-up costs the host, the baseline of RepoGate's cold-build stall.
const fs = require('fs');
const path = require('path');
const { monitorEventLoopDelay } = require('perf_hooks');
const vscode = require('vscode');

/** The baseline's work: a fixed delay, like a provider that answers in 100 ms whatever it is asked. */
const DELAY_MS = 100;
const TEXT = 'nullCompletion();';

function provideNull(document, position, _context, token) {
  if (!vscode.workspace.getConfiguration('repogateE2eBaseline').get('nullCompletions', false)) return undefined;
  return new Promise((done) => {
    const timer = setTimeout(
      () => done([new vscode.InlineCompletionItem(TEXT, new vscode.Range(position, position))]),
      DELAY_MS,
    );
    token.onCancellationRequested(() => {
      clearTimeout(timer);
      done(undefined);
    });
  });
}

/** How often the running maximum is noted, and for how long after activation (the cold build takes under a minute). */
const LOOP_SNAPSHOT_MS = 250;
const LOOP_WATCH_MS = 300_000;
/** [ms since activation, the longest delay so far in ms], one every LOOP_SNAPSHOT_MS. */
const loopMaxima = [];

/** The longest delay since the last loopWindow request (the soak samples it every few seconds, for as long as it runs). */
const windowDelay = monitorEventLoopDelay({ resolution: 1 });

function watchLoop() {
  const started = performance.now();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  windowDelay.enable();
  const timer = setInterval(() => {
    const at = performance.now() - started;
    loopMaxima.push([at, delay.max / 1e6]);
    if (at > LOOP_WATCH_MS) {
      clearInterval(timer);
      delay.disable();
    }
  }, LOOP_SNAPSHOT_MS);
  return { dispose: () => (clearInterval(timer), delay.disable(), windowDelay.disable()) };
}

/** The longest delay over the first `forMs` after activation, once that much time has passed. */
async function loopDelay(forMs) {
  for (;;) {
    const snapshot = loopMaxima.find(([at]) => at >= forMs);
    if (snapshot) return { maxDelayMs: Math.round(snapshot[1] * 10) / 10, overMs: Math.round(snapshot[0]) };
    if (loopMaxima.at(-1)?.[0] > LOOP_WATCH_MS) throw new Error(`only the first ${LOOP_WATCH_MS} ms are watched`);
    await new Promise((done) => setTimeout(done, LOOP_SNAPSHOT_MS));
  }
}

async function carryOut(request) {
  if (request.op === 'loopDelay') return loopDelay(request.forMs);
  if (request.op === 'save') {
    // The workbench's own save of the active document, answered once it is written (or at once when unchanged).
    const document = vscode.window.activeTextEditor?.document;
    return { saved: document ? await document.save() : false };
  }
  if (request.op === 'loopWindow') {
    const maxDelayMs = windowDelay.max / 1e6;
    windowDelay.reset();
    return { maxDelayMs, pid: process.pid, heapUsedMb: Math.round(process.memoryUsage().heapUsed / 104857.6) / 10 };
  }
  if (request.op === 'hook') {
    const hooks = vscode.extensions.getExtension('repogate.repogate')?.exports;
    if (typeof hooks?.[request.name] !== 'function') throw new Error(`RepoGate exports no hook ${request.name}`);
    return { value: await hooks[request.name]() };
  }
  if (request.op === 'open') {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(request.file));
    const line = Math.min(request.line, document.lineCount - 1);
    const end = document.lineAt(line).range.end;
    // Always the first group: "Explain Last Completion" opens its document beside, and a file opened in that
    // group got no inline completions in the test.
    await vscode.window.showTextDocument(document, {
      selection: new vscode.Range(end, end),
      preview: false,
      viewColumn: vscode.ViewColumn.One,
    });
    return { languageId: document.languageId, lineCount: document.lineCount };
  }
  if (request.op === 'configure') {
    const config = vscode.workspace.getConfiguration();
    for (const [key, value] of Object.entries(request.settings))
      await config.update(key, value, vscode.ConfigurationTarget.Global);
    return {};
  }
  throw new Error(`unknown request ${JSON.stringify(request.op)}`);
}

function watchRequests(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const seen = new Set();
  const scan = () => {
    for (const name of fs.readdirSync(dir)) {
      const m = /^request-(\d+)\.json$/.exec(name);
      // A new window's extension host sees the requests of the one before: those already have their answer.
      if (!m || seen.has(name) || fs.existsSync(path.join(dir, `done-${m[1]}.json`))) continue;
      seen.add(name);
      // Written whole, then renamed: the harness reads the answer as soon as its name exists.
      const answer = (result) => {
        const done = path.join(dir, `done-${m[1]}.json`);
        fs.writeFileSync(`${done}.tmp`, JSON.stringify(result));
        fs.renameSync(`${done}.tmp`, done);
      };
      Promise.resolve()
        .then(() => carryOut(JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'))))
        .then(
          (result) => answer({ ok: true, ...result }),
          (error) => answer({ ok: false, error: String(error?.message ?? error) }),
        );
    }
  };
  const watcher = fs.watch(dir, scan);
  scan();
  return { dispose: () => watcher.close() };
}

exports.activate = (context) => {
  context.subscriptions.push(watchLoop());
  context.subscriptions.push(
    vscode.languages.registerInlineCompletionItemProvider(
      { pattern: '**' },
      { provideInlineCompletionItems: provideNull },
    ),
  );
  if (process.env.REPOGATE_E2E_BASELINE_DIR)
    context.subscriptions.push(watchRequests(process.env.REPOGATE_E2E_BASELINE_DIR));
};

exports.deactivate = () => {};
