// What the soak reads from outside the editor: processes' memory from /proc, and the errors in the session's logs.
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { join } from 'path';

/** /proc/<pid>/status's VmRSS and its parts RssAnon (the process's own memory) and RssFile (mapped files), in MB. */
const statusMb = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field) => {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : 0;
  };
  return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
};
const rssMb = (pid) => statusMb(pid).rss;

/**
 * RSS of the extension host (`hostPid`), with its anonymous and file-backed parts, and of RepoGate's processes, its
 * children running engineProcess.js and indexProcess.js (0 while one does not run, e.g. between two model loads).
 */
export function processRss(hostPid) {
  const host = statusMb(hostPid);
  const rss = { hostRssMb: host.rss, hostAnonMb: host.anon, hostFileMb: host.file, engineRssMb: 0, indexRssMb: 0 };
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(
        readFileSync(`/proc/${name}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
      if (ppid !== hostPid) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmdline.includes('engineProcess.js')) rss.engineRssMb = rssMb(name);
      if (cmdline.includes('indexProcess.js')) rss.indexRssMb = rssMb(name);
    } catch {
      /* the process ended while it was read */
    }
  }
  return rss;
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
