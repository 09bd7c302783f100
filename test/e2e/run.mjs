#!/usr/bin/env node
// End-to-end test in a real VS Code: installs a packaged .vsix into code-server (run with Node 24 from the
// tools/e2e/install.sh cache), opens a copy of test/fixtures/repos/shop in headless Debian chromium through
// playwright-core and runs the named checks of checks.mjs; the later checks open a large real-code repository and
// time RepoGate next to tools/e2e/null-completion, the test-only baseline extension installed in every run.
// Builds nothing: run `npm run package` first.
// Usage: node test/e2e/run.mjs [file.vsix]   (default: the newest repogate-*.vsix in the repository root)
// Env: REPOGATE_E2E_CACHE (install cache, default .e2e-cache), REPOGATE_E2E_TIMEOUT_S (whole run, default 900),
// REPOGATE_E2E_ONLY (a regular expression: run only the checks whose names match), REPOGATE_E2E_LOOP_PROBE=1
// (also install tools/e2e/loop-probe, which logs the extension host's event-loop stalls with timestamps).
// Prints one line per check and a final `N passed, N failed`; exits 1 on any failure. code-server and chromium
// are always stopped, also on failure, on the overall timeout and on SIGINT/SIGTERM.
import { spawn } from 'child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { chromium } from 'playwright-core';
import { checks, metrics } from './checks.mjs';
import {
  cache,
  CHROMIUM_ARGS,
  codeServer,
  freePort,
  node24,
  root,
  startCodeServer,
  stopGroup,
  waitForHttp,
} from './codeServer.mjs';
import { createEditor } from './editor.mjs';

const artifactsDir = join(root, 'test', 'e2e', 'artifacts');
const timeoutMs = Number(process.env.REPOGATE_E2E_TIMEOUT_S ?? 900) * 1000;
const CHECK_TIMEOUT_MS = 180_000;
// Offline and focused on the extension: trust the workspace (restricted mode would stop indexing), no chat panel
// or built-in AI suggestions competing for ghost text, no gallery or update requests.
const SETTINGS = {
  'security.workspace.trust.enabled': false,
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.startupEditor': 'none',
  'workbench.enableExperiments': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'editor.inlineSuggest.enabled': true,
  // VS Code's port finder starts a process every few seconds (40-330 ms stalls of the extension host on this
  // machine, tools/e2e/stalls.mjs): not RepoGate's, and nothing here listens on ports, so it is off. Turning off
  // auto-forwarding alone leaves code-server's finder polling (findCandidatePorts in the profiles); the source
  // setting stops the polling itself.
  'remote.autoForwardPorts': false,
  'remote.autoForwardPortsSource': 'output',
  // "Explain Last Completion" opens a Markdown document: one view line per line, so checks read whole lines.
  '[markdown]': { 'editor.wordWrap': 'off' },
};

// REPOGATE_E2E_ONLY: a regular expression; only the checks whose names match run (for working on one check).
const selected = process.env.REPOGATE_E2E_ONLY
  ? checks.filter((c) => new RegExp(process.env.REPOGATE_E2E_ONLY).test(c.name))
  : checks;
const started = Date.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const say = (line) => console.log(`[e2e ${seconds(Date.now() - started).padStart(7)}] ${line}`);

function newestVsix() {
  const found = readdirSync(root)
    .filter((n) => /^repogate-.*\.vsix$/.test(n))
    .map((n) => join(root, n))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!found.length) throw new Error(`no repogate-*.vsix in ${root}: run npm run package first`);
  return found[0];
}

/**
 * A builtin-extensions folder for `--builtin-extensions-dir` that links only those of code-server's built-in
 * extensions that run no code (themes, grammars, language configurations): the others (git, github, npm, emmet,
 * the language features, Copilot Chat, merge-conflict…) would share the extension host with RepoGate, and their
 * startup and file work would be counted among its event-loop stalls. code-server has no `--disable-extension`.
 * Returns the ids left out.
 */
function codelessBuiltins(to) {
  const dir = join(cache, 'node_modules', 'code-server', 'lib', 'vscode', 'extensions');
  mkdirSync(to, { recursive: true });
  const off = [];
  for (const name of readdirSync(dir)) {
    const manifest = join(dir, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const { publisher, name: id, main, browser } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (main || browser) off.push(`${publisher}.${id}`);
    else symlinkSync(join(dir, name), join(to, name));
  }
  return off;
}

function exited(child) {
  return new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Packages the test-only extension in tools/e2e/<name> with vsce and installs it next to RepoGate. */
async function installTestExtension(name, common, logFile) {
  const vsix = join(work, `${name}.vsix`);
  const vsce = spawn(
    join(root, 'node_modules', '.bin', 'vsce'),
    ['package', '--out', vsix, '--allow-missing-repository', '--skip-license', '--allow-star-activation'],
    { cwd: join(root, 'tools', 'e2e', name), stdio: 'ignore' },
  );
  if ((await withTimeout(exited(vsce), 60_000, `vsce package (${name})`)) !== 0)
    throw new Error(`vsce could not package tools/e2e/${name}`);
  const installed = await withTimeout(
    exited(startCodeServer([...common, '--install-extension', vsix], logFile)),
    120_000,
    `installing ${name}`,
  );
  if (installed !== 0) throw new Error(`installing tools/e2e/${name} exited with ${installed}`);
}

/**
 * REPOGATE_E2E_LOOP_PROBE=1: installs tools/e2e/loop-probe, a test-only extension that logs every stall of the
 * extension host's event loop over 30 ms to test/e2e/artifacts/event-loop/exthost-<pid>.txt, with the RepoGate
 * log's timestamps: RepoGate's "event loop max delay" says how long the worst stall of an index build was, the
 * probe's timeline says when each one happened (model loading, activation, indexing…).
 */
async function installLoopProbe(common, logFile) {
  process.env.REPOGATE_E2E_LOOP_PROBE_DIR = join(artifactsDir, 'event-loop');
  await installTestExtension('loop-probe', common, logFile);
  say(`event-loop probe installed: stalls over 30 ms go to ${process.env.REPOGATE_E2E_LOOP_PROBE_DIR}`);
}

let server;
let browser;
let work;
let finishing;
const results = [];

/**
 * Stops chromium and code-server, keeps the logs, prints the summary once and exits: 1 when a check failed or
 * never ran (setup failure, `reason` = overall timeout or signal).
 */
function finish(reason) {
  finishing ??= (async () => {
    if (reason) console.log(`e2e aborted: ${reason}`);
    await browser?.close().catch(() => {});
    await stopGroup(server);
    // code-server's output and the VS Code logs (the extension's among them) outlive the temporary folder.
    if (work) {
      mkdirSync(artifactsDir, { recursive: true });
      for (const [from, to] of [
        ['code-server.log', 'code-server.log'],
        [join('user-data', 'logs'), 'logs'],
      ]) {
        if (existsSync(join(work, from))) cpSync(join(work, from), join(artifactsDir, to), { recursive: true });
      }
      rmSync(work, { recursive: true, force: true });
    }
    metrics.wallSeconds = Math.round((Date.now() - started) / 1000);
    mkdirSync(artifactsDir, { recursive: true });
    writeFileSync(join(artifactsDir, 'metrics.json'), `${JSON.stringify(metrics, null, 2)}\n`);
    printMetrics();
    const passed = results.filter((r) => r.ok).length;
    console.log(`${passed} passed, ${selected.length - passed} failed`);
    process.exit(!reason && passed === selected.length ? 0 : 1);
  })();
  return finishing;
}
/** The measurements in a few plain lines (all of them are in test/e2e/artifacts/metrics.json). */
function printMetrics() {
  const { latency: l, eventLoop: e } = metrics;
  console.log('e2e metrics (test/e2e/artifacts/metrics.json):');
  if (l) {
    console.log(
      `  keystroke to ghost text, ${l.modelCompletions} model completions: p50 ${l.p50Ms} ms, p95 ${l.p95Ms} ms` +
        ` (target p50 <= ${l.targetP50Ms} ms: ${l.targetMet ? 'met' : 'NOT MET'}); ${l.cacheCompletions} served from cache` +
        ` (all ${l.modelCompletions + l.cacheCompletions}: p50 ${l.allP50Ms} ms, p95 ${l.allP95Ms} ms); ${l.keystrokesWithoutGhostText} keystrokes without ghost text`,
    );
  } else {
    console.log('  keystroke to ghost text: not measured');
  }
  if (e) {
    const line = (x) => `max delay ${x.maxDelayMs} ms (${x.targetMet ? 'met' : 'NOT MET'}) in ${x.seconds} s`;
    console.log(
      `  event loop while indexing ${e.files} files (${e.symbols} symbols), target <= ${e.targetMs} ms: cold full build at window start ${line(e.coldBuild)}` +
        `${e.coldBuild.modelLoadedDuringIt ? ' (the model loaded meanwhile)' : ''}; "Reindex Repository" ${line(e.paletteReindex)}, progress over ${e.paletteReindex.progressTotal} files`,
    );
    if (e.probe) {
      console.log(
        `  loop probe during the cold build: longest stall ${e.probe.maxMs} ms; while the model loaded ${e.probe.duringModelLoadMaxMs} ms,` +
          ` otherwise ${e.probe.otherMaxMs} ms (${e.probe.stallsOver50Ms} stalls over 50 ms)`,
      );
    }
  } else {
    console.log('  event loop while indexing a large repository: not measured');
  }
  const { realFiles: r, shapeModel: m } = metrics;
  if (r) {
    const side = (x) => `ghost text at ${x.withGhostText}/${x.positions}, p50 ${x.p50Ms} ms, p95 ${x.p95Ms} ms`;
    const parts = (x) =>
      `keystroke → provider call p50 ${x.keystrokeToProviderP50Ms} ms, in the provider p50 ${x.providerP50Ms} ms, ` +
      `provider answer → screen p50 ${x.providerAnswerToScreenP50Ms} ms`;
    console.log(
      `  large repository, line starts in ${r.nullExtension.positions} files: null extension ${side(r.nullExtension)}; ` +
        `RepoGate (${r.repogate.modelCompletions} from the model) ${side(r.repogate)}; RepoGate p50 - null p50 = ${r.p50MarginMs} ms ` +
        `(target <= ${r.targetMarginMs} ms: ${r.targetMet ? 'met' : 'NOT MET'}); RepoGate's parts: ${parts(r.repogate)}`,
    );
  } else {
    console.log('  RepoGate next to the null extension on the large repository: not measured');
  }
  if (m) {
    console.log(
      `  ${m.shape} shape, line starts in ${m.positions} files: ghost text at ${m.withGhostText}/${m.positions}, p50 ${m.p50Ms} ms, ` +
        `p95 ${m.p95Ms} ms (target >= ${m.targets.minGhostPositions}/${m.positions}, p50 <= ${m.targets.p50Ms} ms: ${m.targetMet ? 'met' : 'NOT MET'}); ` +
        `p50 of the parts: prompt ${m.promptTokensP50} tokens, ${m.evaluatedP50} evaluated, gate ${m.gateMsP50} ms, first token ${m.firstTokenMsP50} ms, ` +
        `provider total ${m.totalMsP50} ms at ${m.genTokSP50} tokens/s`,
    );
  } else {
    console.log('  the 0.5B shape in the editor: not measured');
  }
  console.log(`  run.mjs wall time ${metrics.wallSeconds} s`);
}
setTimeout(() => void finish(`the whole run exceeded ${seconds(timeoutMs)}`), timeoutMs).unref();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void finish(signal));

try {
  const vsix = resolve(process.argv[2] ?? newestVsix());
  if (!existsSync(vsix)) throw new Error(`${vsix} does not exist`);
  if (!existsSync(node24) || !existsSync(codeServer))
    throw new Error(`code-server is not installed in ${cache}: run bash tools/e2e/install.sh`);
  rmSync(artifactsDir, { recursive: true, force: true });
  work = mkdtempSync(join(tmpdir(), 'repogate-e2e-'));
  const userDataDir = join(work, 'user-data');
  const extensionsDir = join(work, 'extensions');
  const workspace = join(work, 'shop');
  const logFile = join(work, 'code-server.log');
  cpSync(join(root, 'test', 'fixtures', 'repos', 'shop'), workspace, { recursive: true });
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  writeFileSync(join(userDataDir, 'User', 'settings.json'), JSON.stringify(SETTINGS, null, 2));
  // Its own config file: code-server would otherwise create ~/.config/code-server/config.yaml.
  const common = [
    '--config',
    join(work, 'config.yaml'),
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
  ];

  say(`installing ${vsix}`);
  const installer = startCodeServer([...common, '--install-extension', vsix], logFile);
  const installed = await withTimeout(exited(installer), 120_000, 'code-server --install-extension');
  if (installed !== 0)
    throw new Error(`code-server --install-extension exited with ${installed}; see test/e2e/artifacts/code-server.log`);
  if (process.env.REPOGATE_E2E_LOOP_PROBE === '1') await installLoopProbe(common, logFile);
  // The null-completion baseline of the editor-latency checks; it also opens files and sets settings for them.
  const baselineDir = join(work, 'baseline-requests');
  process.env.REPOGATE_E2E_BASELINE_DIR = baselineDir;
  await installTestExtension('null-completion', common, logFile);

  const port = await freePort();
  say(`starting code-server on 127.0.0.1:${port}`);
  const isolate = [];
  if (process.env.REPOGATE_E2E_OTHER_EXTENSIONS === 'off') {
    const builtins = join(work, 'builtin-extensions');
    say(`built-in extensions with code left out: ${codelessBuiltins(builtins).join(', ')}`);
    isolate.push('--builtin-extensions-dir', builtins);
  }
  server = startCodeServer(
    [...common, ...isolate, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', workspace],
    logFile,
  );
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, server, 60_000);
  say('code-server answers; opening the workbench in chromium');

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  say('workbench loaded');

  const editor = createEditor(page, { userDataDir, artifactsDir, baselineDir });
  for (const check of selected) {
    const t0 = Date.now();
    try {
      const detail = await withTimeout(
        check.run(editor, { root, work, artifactsDir }),
        check.timeoutMs ?? CHECK_TIMEOUT_MS,
        check.name,
      );
      results.push({ ok: true });
      say(`ok   ${check.name} (${seconds(Date.now() - t0)})${detail ? `: ${detail}` : ''}`);
    } catch (error) {
      results.push({ ok: false });
      // Playwright colours its call logs; CI keeps plain text.
      say(`FAIL ${check.name} (${seconds(Date.now() - t0)}): ${error.message.replace(/\x1b\[\d+m/g, '')}`);
      await editor.screenshot(`failed-${results.length}`).catch(() => {});
    }
  }
} catch (error) {
  // After an abort, errors of the interrupted step are only its consequence.
  if (!finishing) console.log(`e2e setup failed: ${error.stack ?? error}`);
}
await finish();
