/**
 * A Node process of RepoGate's own beside the extension host (the engine, the index), forked by a launcher thread
 * (processLauncher.ts) so that the spawn never blocks the caller's event loop; messages, output and the exit come
 * through that thread, its output a non-empty line at a time. Here, in the bottom layer, so that the engine and the index clients may both use it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Worker } from 'worker_threads';

/** To the launcher thread: a message for the process, or kill it. */
export type ToLauncher<In> = { send: In } | { kill: true };

/** From the launcher thread: the process's id once forked, its message, a chunk of its stdout/stderr, or its exit. */
export type FromLauncher<Out> =
  | { pid: number }
  | { message: Out }
  | { output: string }
  | { exit: { code: number | null; signal: NodeJS.Signals | null } };

// Bundled next to the extension under this name; compiled by tsc beside this file under the same name.
const launcherScript = (): string => path.join(__dirname, 'processLauncher.js');
/**
 * The launcher's young generation, in MB: it holds nothing but messages in transit, which die young. At V8's
 * default the thread's young generation grew to tens of MB of the extension host's memory while relaying edits.
 */
const LAUNCHER_YOUNG_GENERATION_MB = 4;

export class ForkedProcess<In, Out> {
  private readonly launcher: Worker;
  /** The process's id, once the launcher has forked it. */
  pid: number | undefined;
  /** Settles once the process has exited, or the launcher failed before or after starting it. */
  readonly exited: Promise<void>;

  constructor(
    script: string,
    on: { message(message: Out): void; output(line: string): void; exit(reason: string): void },
  ) {
    // A missing script would only show as the launcher's exit; said plainly here, to the caller.
    if (!fs.existsSync(script)) throw new Error(`the script is missing: ${script}`);
    this.launcher = new Worker(launcherScript(), {
      workerData: { script },
      resourceLimits: { maxYoungGenerationSizeMb: LAUNCHER_YOUNG_GENERATION_MB },
    });
    this.exited = new Promise<void>((resolve) => {
      let done = false;
      const exit = (reason: string): void => {
        if (done) return;
        done = true;
        on.exit(reason);
        resolve();
      };
      this.launcher.on('message', (event: FromLauncher<Out>) => {
        if ('pid' in event) this.pid = event.pid;
        else if ('message' in event) on.message(event.message);
        else if ('output' in event) {
          for (const line of event.output.split('\n')) if (line.trim()) on.output(line);
        } else exit(event.exit.signal ?? `code ${event.exit.code}`);
      });
      // Without an exit report first, the launcher failed (the spawn, or the thread itself); a process it started
      // loses its channel and exits by itself.
      this.launcher.on('error', (error) => exit(`launcher failed: ${error.message}`));
      this.launcher.on('exit', (code) => exit(`launcher exited with code ${code}`));
    });
  }

  send(message: In): void {
    this.launcher.postMessage({ send: message } satisfies ToLauncher<In>);
  }

  kill(): void {
    this.launcher.postMessage({ kill: true } satisfies ToLauncher<In>);
  }
}
