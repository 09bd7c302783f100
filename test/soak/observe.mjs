// What the soak reads from outside the editor: processes' memory from /proc, and the errors in the session's logs.
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { join } from 'path';

const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : 0;
};

/**
 * RSS of the extension host (`hostPid`) and of RepoGate's engine process, its child running engineProcess.js
 * (0 while none runs, e.g. between two model loads).
 */
export function processRss(hostPid) {
  let engineRssMb = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(
        readFileSync(`/proc/${name}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
      if (ppid === hostPid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('engineProcess.js'))
        engineRssMb = rssMb(name);
    } catch {
      /* the process ended while it was read */
    }
  }
  return { hostRssMb: rssMb(hostPid), engineRssMb };
}

/** Log files under `dir`, recursively. */
function logFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? logFiles(path) : name.endsWith('.log') ? [path] : [];
  });
}

/**
 * Errors of the session: every `[error]` line of RepoGate's own log, and those of the extension host's log that
 * name RepoGate (an unhandled exception or rejection in its code, a provider that threw).
 */
export function sessionErrors(logsDir) {
  const errors = [];
  for (const file of logFiles(logsDir)) {
    const own = file.endsWith('RepoGate.log');
    if (!own && !/exthost/i.test(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (/\[error\]/.test(line) && (own || /repogate/i.test(line))) errors.push(line.slice(0, 300));
    }
  }
  return errors;
}
