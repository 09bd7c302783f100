// Starts the llama-server that tools/llama-server/build.sh builds (building it first if needed) on 127.0.0.1 for a
// benchmark, and waits until it answers /health. The server ends with the calling process.
import { execFileSync, spawn } from 'child_process';
import { dirname, join } from 'path';
import { fileURLToPath } from 'url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** 200 ms × 300: a minute for the model to load on a busy machine. */
const HEALTH_POLLS = 300;
const HEALTH_POLL_MS = 200;

/** `extraArgs` are llama-server's own flags after the model, host and port (threads, slots, context). */
export async function startLlamaServer(model, extraArgs) {
  const binary = execFileSync('bash', [join(root, 'tools', 'llama-server', 'build.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .toString()
    .trim()
    .split('\n')
    .pop();
  const port = String(18000 + Math.floor(Math.random() * 2000));
  const child = spawn(binary, ['-m', model, '--host', '127.0.0.1', '--port', port, ...extraArgs, '--no-webui'], {
    stdio: 'ignore',
  });
  process.on('exit', () => child.kill());
  const url = `http://127.0.0.1:${port}`;
  const healthy = () =>
    fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
  for (let i = 0; !(await healthy()); i++) {
    if (i > HEALTH_POLLS || child.exitCode !== null) throw new Error(`llama-server did not start on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
  }
  return { url, stop: () => child.kill() };
}
