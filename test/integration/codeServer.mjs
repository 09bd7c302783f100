#!/usr/bin/env node
// Runs the integration suite (out/test/integration/suite) in code-server's Node extension host instead of a
// desktop VS Code: for machines with no desktop build and no network, like this project's (see README.md here).
// Uses the tools/e2e/install.sh cache (Node 24 + code-server 4.139.1) and Debian's chromium via playwright-core.
// The workbench runs a suite the way VS Code's own remote integration tests do: the page URL's `payload` names
// extensionDevelopmentPath and extensionTestsPath as vscode-remote URIs, and the workbench calls
// window.codeAutomationExit(code) when the suite is done. A built workbench honours that payload only with the
// smoke-test driver enabled, which code-server has no flag for, so the page's configuration is amended as the
// page reads it.
// Usage: node test/integration/codeServer.mjs   (builds dist/ and out/ first)
// Env: REPOGATE_E2E_CACHE (install cache, default .e2e-cache), REPOGATE_IT_TIMEOUT_S (whole run, default 1200),
// CHROMIUM (default /usr/bin/chromium), REPOGATE_IT_EXTENSION (the extension folder to test, default the repository),
// REPOGATE_IT_WORKSPACE (shop, the default, or multiroot: runTest.ts). Prints one line per test and
// `N passed, N failed`; exits 1 on failure.
import { execFileSync } from 'child_process';
import { existsSync } from 'fs';
import { createRequire } from 'module';
import { join } from 'path';
import {
  cache,
  chromiumLaunchOptions,
  codeServer,
  node24,
  root,
  startCodeServer,
  stopGroup,
  waitForHttp,
  freePort,
} from '../e2e/codeServer.mjs';

const require = createRequire(join(root, 'package.json'));
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const timeoutMs = Number(process.env.REPOGATE_IT_TIMEOUT_S ?? 1200) * 1000;
const started = Date.now();
/** The workbench page's first load; Playwright's default (30 s) is too short on a busy 2-core machine. */
const PAGE_LOAD_MS = 120_000;
const say = (line) =>
  console.log(`[integration/code-server ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);

for (const [file, what] of [
  [node24, 'Node 24'],
  [codeServer, 'code-server'],
]) {
  if (!existsSync(file)) {
    console.error(`integration/code-server: ${what} is not installed in ${cache}: run bash tools/e2e/install.sh`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}
if (!existsSync(chromiumPath)) {
  console.error(`integration/code-server: no chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM)`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

say('building dist/ (esbuild) and out/ (tsc)');
execFileSync(process.execPath, ['esbuild.mjs'], { cwd: root, stdio: 'inherit' });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', '.'], { cwd: root, stdio: 'inherit' });

const { chromium } = require('playwright-core');
const runner = require(join(root, 'out', 'test', 'integration', 'runTest.js'));
const folders = runner.prepareRun();
let server;
let browser;
let problem;
try {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const args = [
    '--config',
    join(folders.tmp, 'config.yaml'),
    '--user-data-dir',
    folders.userData,
    '--extensions-dir',
    folders.extensions,
    '--auth',
    'none',
    '--bind-addr',
    host,
    '--disable-telemetry',
    '--disable-workspace-trust',
    folders.workspace,
  ];
  // The suite's environment reaches the extension host through code-server's own.
  server = startCodeServer(args, join(folders.tmp, 'code-server.log'), { ...process.env, ...runner.suiteEnv(folders) });
  say(`code-server on ${host}, workspace ${folders.workspace}`);
  await waitForHttp(`http://${host}/healthz`, server, 60_000);

  browser = await chromium.launch(chromiumLaunchOptions(chromiumPath));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let exited;
  const exit = new Promise((done) => {
    exited = done;
  });
  await page.exposeFunction('codeAutomationExit', (code) => exited(code));
  await page.addInitScript(() => {
    const getAttribute = Element.prototype.getAttribute;
    Element.prototype.getAttribute = function (name) {
      const value = getAttribute.call(this, name);
      if (this.id !== 'vscode-workbench-web-configuration' || name !== 'data-settings' || !value) return value;
      const config = JSON.parse(value);
      config.developmentOptions = { ...(config.developmentOptions ?? {}), enableSmokeTestDriver: true };
      return JSON.stringify(config);
    };
  });
  const remote = (file) => `vscode-remote://${host}${file}`;
  const opens = folders.workspace.endsWith('.code-workspace') ? 'workspace' : 'folder';
  const payload = [
    ['extensionDevelopmentPath', remote(runner.extensionPath)],
    ['extensionTestsPath', remote(runner.suite)],
    ['skipWelcome', 'true'],
  ];
  await page.goto(
    `http://${host}/?${opens}=${encodeURIComponent(folders.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`,
    { timeout: PAGE_LOAD_MS },
  );
  say('workbench opened; the suite runs in the extension host');
  let timer;
  const code = await Promise.race([
    exit,
    new Promise((done) => {
      timer = setTimeout(() => done('timeout'), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  await page.screenshot({ path: join(folders.tmp, 'workbench.png') }).catch(() => {});
  if (code === 'timeout') problem = new Error(`the suite did not finish within ${timeoutMs / 1000} s`);
  else if (code !== 0) problem = new Error(`the extension host exited with ${code}`);
  say(`extension host finished (${code})`);
} catch (error) {
  problem = error;
} finally {
  await browser?.close().catch(() => {});
  await stopGroup(server);
}
process.exit(runner.report(folders, problem));
