// Test-only extension (installed by test/e2e/run.mjs when REPOGATE_E2E_LOOP_PROBE=1): it shares the extension host
// with RepoGate, so its 10 ms timer fires late whenever anything blocks that event loop. Each lateness over 30 ms
// is appended to $REPOGATE_E2E_LOOP_PROBE_DIR/exthost-<pid>.txt as "<local time at the end of the stall> <ms>", in
// the RepoGate log's time format, so a stall can be placed next to its lines (model loading, indexing, completions).
// Where Linux's /proc/<pid>/task/<tid>/schedstat exists, the line goes on with where the host's main thread spent the
// stall: "ran <ms> waited <ms> process <ms>" — on a CPU, runnable but waiting for one (other processes' work), and
// the CPU time of the whole host process (its other threads: GC helpers, worker threads). What is left of the stall
// the thread slept: blocked in a system call or a page fault, or waiting for another thread (V8's garbage collector
// waits for its helper threads). "steal <ms>/<ms>" is each CPU's steal time meanwhile: this machine being a virtual
// one, its CPUs given to something else by the hypervisor, which stalls every process at once. Last come the
// garbage collections that overlapped the stall: "gc <kind> <ms>".
// With REPOGATE_E2E_LOOP_PROBE_PROFILE=1 it also records the extension host's CPU profile (V8's sampling profiler
// through `inspector`, 1 ms samples) in 10 s pieces, exthost-<pid>-<n>.cpuprofile, so that tools/e2e/stalls.mjs can
// say whose code ran during each stall (which extension's script, or the host's own).
const fs = require('fs');
const inspector = require('inspector');
const path = require('path');
const { PerformanceObserver, constants } = require('perf_hooks');

const INTERVAL_MS = 10;
const REPORT_MS = 30;
const PROFILE_PIECE_MS = 10_000;
const GC_REPORT_DELAY_MS = 100;

/** "2026-11-30 03:07:13.688": local time, like VS Code's log files. */
function stamp(date = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}.${p(date.getMilliseconds(), 3)}`;
}

let session;

/** The main thread's [ns on a CPU, ns runnable on a run queue], or undefined where the kernel does not say. */
function schedstat() {
  try {
    const [run, wait] = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ');
    return [Number(run), Number(wait)];
  } catch {
    return undefined;
  }
}

const ms = (ns) => (ns / 1e6).toFixed(1);

/** Each CPU's steal time in ms (/proc/stat: time the hypervisor ran something else while this VM wanted the CPU). */
function steal() {
  try {
    return fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .filter((line) => /^cpu\d/.test(line))
      .map((line) => Number(line.split(/\s+/)[8]) * 10);
  } catch {
    return undefined;
  }
}

const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
};
/** The last few garbage collections of this thread: { start, duration, kind }, on performance.now()'s clock. */
const gcs = [];
function watchGc() {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      gcs.push({ start: entry.startTime, duration: entry.duration, kind: GC_KINDS[entry.detail?.kind] ?? 'other' });
    gcs.splice(0, gcs.length - 50);
  }).observe({ entryTypes: ['gc'] });
}

/** " gc major 12.3 …" for the collections that overlapped [from, to]. */
function gcsIn(from, to) {
  return gcs
    .filter((g) => g.start < to && g.start + g.duration > from)
    .map((g) => ` gc ${g.kind} ${g.duration.toFixed(1)}`)
    .join('');
}

/** Profiles the extension host in pieces; each piece is written asynchronously when the next one starts. */
function profile(dir) {
  session = new inspector.Session();
  session.connect();
  let piece = 0;
  const post = (method, params) =>
    new Promise((done, fail) => session.post(method, params, (error, result) => (error ? fail(error) : done(result))));
  const next = async () => {
    const { profile: data } = await post('Profiler.stop');
    await post('Profiler.start');
    // The profile's timestamps are V8's monotonic clock in µs; `wallMs` maps its end to the wall clock.
    data.wallEndMs = Date.now();
    fs.writeFile(
      path.join(dir, `exthost-${process.pid}-${String(piece++).padStart(3, '0')}.cpuprofile`),
      JSON.stringify(data),
      () => {},
    );
  };
  void (async () => {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 1000 });
    await post('Profiler.start');
    setInterval(() => void next().catch(() => {}), PROFILE_PIECE_MS);
  })().catch((error) =>
    fs.appendFileSync(path.join(dir, `exthost-${process.pid}.txt`), `${stamp()} profiler failed: ${error.message}\n`),
  );
}

exports.activate = () => {
  const dir = process.env.REPOGATE_E2E_LOOP_PROBE_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `exthost-${process.pid}.txt`);
  fs.appendFileSync(file, `${stamp()} start\n`);
  if (process.env.REPOGATE_E2E_LOOP_PROBE_PROFILE === '1') profile(dir);
  watchGc();
  let last = performance.now();
  let lastSched = schedstat();
  let lastCpu = process.cpuUsage();
  let lastSteal = steal();
  setInterval(() => {
    const now = performance.now();
    const sched = schedstat();
    const cpu = process.cpuUsage();
    const stolen = steal();
    const late = now - last - INTERVAL_MS;
    if (late > REPORT_MS) {
      const where =
        sched && lastSched
          ? ` ran ${ms(sched[0] - lastSched[0])} waited ${ms(sched[1] - lastSched[1])} process ${(
              (cpu.user + cpu.system - lastCpu.user - lastCpu.system) /
              1000
            ).toFixed(1)}`
          : '';
      const vm = stolen && lastSteal ? ` steal ${stolen.map((t, i) => t - lastSteal[i]).join('/')}` : '';
      const [from, end] = [last, stamp()];
      // The collections' entries reach the observer a little after the stall.
      setTimeout(
        () => fs.appendFileSync(file, `${end} ${late.toFixed(1)}${where}${vm}${gcsIn(from, now)}\n`),
        GC_REPORT_DELAY_MS,
      );
    }
    last = now;
    lastSched = sched;
    lastCpu = cpu;
    lastSteal = stolen;
  }, INTERVAL_MS);
};

exports.deactivate = () => {
  session?.disconnect();
};
