#!/usr/bin/env node
// Who had the CPUs: every 20 ms, appends "<epoch ms> <role>:<ticks> …" to the file given, the CPU time (in the
// kernel's 10 ms ticks, from /proc/<pid>/stat) each role's processes used since the last sample; runs until
// SIGTERM or SIGINT. A role names a process by its command line: chromium's renderer, GPU process and browser, the
// extension host, RepoGate's engine and index processes, code-server, the TypeScript server… so that
// tools/e2e/waits.mjs can say what ran while the extension host waited for a CPU (the loop probe's `waited`).
// Linux only; it costs about a tenth of a core, so it runs only where a test asks for it (REPOGATE_E2E_CPU_ROLES=1).
// Usage: node tools/e2e/cpu-roles.mjs <out.txt>
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'fs';

const SAMPLE_MS = 20;
/** New processes are looked for this often; a process younger than this is missed until then. */
const RESCAN_MS = 2_000;
/** Lines kept before a write: the sampler's own I/O stays out of the 20 ms rhythm. */
const FLUSH_LINES = 250;

const ROLES = [
  ['gpu', /--type=gpu-process/],
  ['renderer', /--type=renderer/],
  ['browser-utility', /--type=utility/],
  ['browser', /chrom/],
  ['engine', /engineProcess/],
  ['index', /indexProcess/],
  ['exthost', /type=extensionHost/],
  ['tsserver', /tsserver|typingsInstaller/],
  ['ptyhost', /ptyHost/],
  ['watcher', /fileWatcher|watcherMain/],
  ['code-server', /code-server/],
  ['test-driver', /test\/(e2e|soak|integration)\//],
  ['cpu-roles', /cpu-roles\.mjs/],
];

const read = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

function roleOf(pid) {
  const commandLine = read(`/proc/${pid}/cmdline`).replace(/\0/g, ' ');
  for (const [role, pattern] of ROLES) if (pattern.test(commandLine)) return role;
  const [program, script] = commandLine.split(' ');
  // Another Node program by its script's name; kernel threads and the rest by their short name.
  if (/(^|\/)node$/.test(program) && script) return `node:${script.replace(/^.*\//, '')}`;
  return read(`/proc/${pid}/comm`).trim() || 'other';
}

/** User plus system time in ticks, or undefined once the process is gone. */
function ticksOf(pid) {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const out = process.argv[2];
if (!out) {
  console.error('usage: node tools/e2e/cpu-roles.mjs <out.txt>');
  process.exit(2);
}
writeFileSync(out, '');
let roles = new Map();
const last = new Map();
const rescan = () => {
  const now = new Map();
  for (const pid of readdirSync('/proc')) if (/^\d+$/.test(pid)) now.set(pid, roles.get(pid) ?? roleOf(pid));
  roles = now;
  for (const pid of last.keys()) if (!roles.has(pid)) last.delete(pid);
};
rescan();
const lines = [];
const flush = () => {
  if (lines.length) appendFileSync(out, lines.join('\n') + '\n');
  lines.length = 0;
};
setInterval(rescan, RESCAN_MS);
setInterval(() => {
  const used = new Map();
  for (const [pid, role] of roles) {
    const ticks = ticksOf(pid);
    if (ticks === undefined) continue;
    const before = last.get(pid);
    last.set(pid, ticks);
    if (before !== undefined && ticks > before) used.set(role, (used.get(role) ?? 0) + ticks - before);
  }
  lines.push(`${Date.now()} ${[...used].map(([role, ticks]) => `${role}:${ticks}`).join(' ')}`.trim());
  if (lines.length >= FLUSH_LINES) flush();
}, SAMPLE_MS);
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    flush();
    process.exit(0);
  });
