import * as fs from 'fs';
import * as os from 'os';

/**
 * Lowers this whole process to nice `nice`, or keeps the value it inherited if that is lower priority already.
 * On Linux the nice value is per thread, and V8's and libuv's threads (garbage collection, file reads) already run
 * when a script starts: each is lowered, and threads started later inherit it from the thread that starts them.
 */
export function lowerProcessPriority(nice: number): void {
  try {
    const value = Math.max(os.getPriority(), nice);
    os.setPriority(value);
    if (process.platform === 'linux')
      for (const task of fs.readdirSync('/proc/self/task')) os.setPriority(Number(task), value);
  } catch {
    // A sandbox that forbids it: the process runs at the editor's priority.
  }
}
