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
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { checks, metrics } from './checks.mjs';
import { cache, codeServer, node24, root } from './codeServer.mjs';
import { newestVsix, openSession, withTimeout } from './session.mjs';

const artifactsDir = join(root, 'test', 'e2e', 'artifacts');
const timeoutMs = Number(process.env.REPOGATE_E2E_TIMEOUT_S ?? 900) * 1000;
const CHECK_TIMEOUT_MS = 180_000;
// REPOGATE_E2E_ONLY: a regular expression; only the checks whose names match run (for working on one check).
const selected = process.env.REPOGATE_E2E_ONLY
  ? checks.filter((c) => new RegExp(process.env.REPOGATE_E2E_ONLY).test(c.name))
  : checks;
const started = Date.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const say = (line) => console.log(`[e2e ${seconds(Date.now() - started).padStart(7)}] ${line}`);

let session;
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
    await session?.close();
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
    if (e.nullBaseline) {
      const n = e.nullBaseline;
      console.log(
        `  the host's longest delay over the ${n.overMs} ms from activation to the cold build's end: with RepoGate ${n.repogateWindowByNullMs} ms, ` +
          `without (the null extension alone) ${n.maxDelayMs} ms: margin ${n.marginMs} ms; RepoGate's own ${e.coldBuild.maxDelayMs} ms ` +
          `(target: margin <= ${n.targetMarginMs} ms, own <= ${e.targetMs} ms: ${n.targetMet ? 'met' : 'NOT MET'})`,
      );
    }
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
  const workspace = join(work, 'shop');
  cpSync(join(root, 'test', 'fixtures', 'repos', 'shop'), workspace, { recursive: true });
  // REPOGATE_E2E_LOOP_PROBE=1: tools/e2e/loop-probe logs every stall of the extension host's event loop over 30 ms
  // to artifacts/event-loop/exthost-<pid>.txt, with the RepoGate log's timestamps (when each stall happened).
  const probe = process.env.REPOGATE_E2E_LOOP_PROBE === '1';
  // The null-completion baseline of the editor-latency checks; it also carries out the test's requests (open a
  // file, set settings, the event-loop delay) dropped into baselineDir.
  const baselineDir = join(work, 'baseline-requests');
  const env = {
    ...process.env,
    REPOGATE_E2E_BASELINE_DIR: baselineDir,
    ...(probe && { REPOGATE_E2E_LOOP_PROBE_DIR: join(artifactsDir, 'event-loop') }),
  };
  session = await openSession({
    work,
    workspace,
    extensions: [vsix, ...(probe ? ['loop-probe'] : []), 'null-completion'],
    artifactsDir,
    env,
    isolate: process.env.REPOGATE_E2E_OTHER_EXTENSIONS === 'off',
    say,
  });
  const { editor } = session;
  for (const check of selected) {
    const t0 = Date.now();
    try {
      const detail = await withTimeout(
        check.run(editor, { root, work, artifactsDir, say }),
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
