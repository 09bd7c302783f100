// One code-server session driven by headless chromium, shared by the end-to-end run (test/e2e/run.mjs), its
// baseline window without RepoGate (checks.mjs) and the soak (test/soak/run.mjs): extensions installed into a
// fresh extensions folder (the packaged RepoGate and/or the test-only ones in tools/e2e), a fresh user-data folder
// with the run's settings, code-server on a free port, the workbench open in chromium, and the editor helpers of
// editor.mjs on that page. `close()` stops chromium and code-server (its whole process group).
import { spawn } from 'child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'fs';
import { join } from 'path';
import { chromium } from 'playwright-core';
import {
  cache,
  chromiumLaunchOptions,
  codeServer,
  freePort,
  node24,
  root,
  startCodeServer,
  stopGroup,
  waitForHttp,
} from './codeServer.mjs';
import { createEditor } from './editor.mjs';

// Offline and focused on the extension: trust the workspace (restricted mode would stop indexing), no chat panel
// or built-in AI suggestions competing for ghost text, no gallery or update requests.
export const SETTINGS = {
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

/** The newest repogate-*.vsix in the repository root (`npm run package` writes it there). */
export function newestVsix() {
  const found = readdirSync(root)
    .filter((n) => /^repogate-.*\.vsix$/.test(n))
    .map((n) => join(root, n))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!found.length) throw new Error(`no repogate-*.vsix in ${root}: run npm run package first`);
  return found[0];
}

export function exited(child) {
  return new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
}

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
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

/** Installs a .vsix, or the test-only extension tools/e2e/<name> (packaged with vsce first), into the session's folders. */
async function install(what, { common, logFile, work, env }) {
  let vsix = what;
  if (!what.endsWith('.vsix')) {
    vsix = join(work, `${what}.vsix`);
    const vsce = spawn(
      join(root, 'node_modules', '.bin', 'vsce'),
      ['package', '--out', vsix, '--allow-missing-repository', '--skip-license', '--allow-star-activation'],
      { cwd: join(root, 'tools', 'e2e', what), stdio: 'ignore' },
    );
    if ((await withTimeout(exited(vsce), 60_000, `vsce package (${what})`)) !== 0)
      throw new Error(`vsce could not package tools/e2e/${what}`);
  }
  const installed = await withTimeout(
    exited(startCodeServer([...common, '--install-extension', vsix], logFile, env)),
    120_000,
    `installing ${what}`,
  );
  if (installed !== 0) throw new Error(`installing ${what} exited with ${installed}; see ${logFile}`);
}

/**
 * Starts a session in the folder `work` (created by the caller, removed by it): installs `extensions` (a .vsix path
 * or the name of a folder in tools/e2e), starts code-server on `workspace` with `settings` and `env` (its extension
 * host inherits it: the test extensions read their folders from there), and opens the workbench in chromium.
 * `isolate`: only those built-in extensions that run no code. Returns {page, editor, userDataDir, logFile, close}.
 */
export async function openSession({
  work,
  workspace,
  extensions,
  artifactsDir,
  settings = SETTINGS,
  env = process.env,
  isolate = false,
  say = () => {},
}) {
  const userDataDir = join(work, 'user-data');
  const logFile = join(work, 'code-server.log');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  writeFileSync(join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  // Its own config file: code-server would otherwise create ~/.config/code-server/config.yaml.
  const common = [
    '--config',
    join(work, 'config.yaml'),
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    join(work, 'extensions'),
  ];
  for (const what of extensions) {
    say(`installing ${what}`);
    await install(what, { common, logFile, work, env });
  }
  const extra = [];
  if (isolate) {
    const builtins = join(work, 'builtin-extensions');
    say(`built-in extensions with code left out: ${codelessBuiltins(builtins).join(', ')}`);
    extra.push('--builtin-extensions-dir', builtins);
  }
  const port = await freePort();
  say(`starting code-server on 127.0.0.1:${port}`);
  const server = startCodeServer(
    [...common, ...extra, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', workspace],
    logFile,
    env,
  );
  let browser;
  const close = async () => {
    await browser?.close().catch(() => {});
    await stopGroup(server);
  };
  try {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, server, 60_000);
    say('code-server answers; opening the workbench in chromium');
    browser = await chromium.launch(chromiumLaunchOptions());
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
    say('workbench loaded');
    const editor = createEditor(page, { userDataDir, artifactsDir, baselineDir: env.REPOGATE_E2E_BASELINE_DIR });
    return { page, editor, userDataDir, logFile, server, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export { cache, codeServer, node24 };
