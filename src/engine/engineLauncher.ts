/**
 * A worker thread that forks the engine process and relays its messages, output and exit to the extension host.
 * Spawning blocks the calling thread until the child has replaced itself with the new program (after fork has
 * copied the page tables of the whole extension host): 29–253 ms of the extension host's event loop in
 * code-server on two busy cores, against 1–18 ms to start this thread. Here it blocks only this thread. A failed
 * spawn is an uncaught 'error' here, which ends the thread and tells the extension host.
 */
import { fork } from 'child_process';
import { parentPort, workerData } from 'worker_threads';
import type { FromEngine, FromLauncher, ToLauncher } from './engineProtocol';

const port = parentPort!;
const child = fork((workerData as { script: string }).script, [], {
  serialization: 'advanced',
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
const forward = (data: Buffer): void => port.postMessage({ output: data.toString() } satisfies FromLauncher);
child.stdout!.on('data', forward);
child.stderr!.on('data', forward);
child.on('message', (message: FromEngine) => port.postMessage({ message } satisfies FromLauncher));
child.on('exit', (code, signal) => {
  port.postMessage({ exit: { code, signal } } satisfies FromLauncher);
  // Nothing is left to relay: closing the port lets this thread end.
  port.close();
});
port.on('message', (message: ToLauncher) => {
  if ('kill' in message) child.kill('SIGKILL');
  else if (child.connected) child.send(message.send);
});
