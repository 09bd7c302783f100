/**
 * A worker thread that forks one Node process (the engine, the index) and relays its messages, output and exit to
 * the thread that started it (forkedProcess.ts). Spawning blocks the calling thread until the child has replaced
 * itself with the new program (after fork has copied the page tables of the whole extension host): 29–253 ms of
 * the extension host's event loop in code-server on two busy cores, against 1–18 ms to start this thread. Here it
 * blocks only this thread. A failed spawn is an uncaught 'error' here, which ends the thread and tells the caller.
 */
import { fork } from 'child_process';
import { parentPort, workerData } from 'worker_threads';
import type { FromLauncher, ToLauncher } from './forkedProcess';

const port = parentPort!;
const child = fork((workerData as { script: string }).script, [], {
  serialization: 'advanced',
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
if (child.pid !== undefined) port.postMessage({ pid: child.pid } satisfies FromLauncher<unknown>);
const forward = (data: Buffer): void => port.postMessage({ output: data.toString() } satisfies FromLauncher<unknown>);
child.stdout!.on('data', forward);
child.stderr!.on('data', forward);
child.on('message', (message: unknown) => port.postMessage({ message } satisfies FromLauncher<unknown>));
child.on('exit', (code, signal) => {
  port.postMessage({ exit: { code, signal } } satisfies FromLauncher<unknown>);
  // Nothing is left to relay: closing the port lets this thread end.
  port.close();
});
port.on('message', (message: ToLauncher<unknown>) => {
  if ('kill' in message) child.kill('SIGKILL');
  else if (child.connected) child.send(message.send as object);
});
