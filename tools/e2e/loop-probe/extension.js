// Test-only extension (installed by test/e2e/run.mjs when REPOGATE_E2E_LOOP_PROBE=1): it shares the extension host
// with RepoGate, so its 10 ms timer fires late whenever anything blocks that event loop. Each lateness over 30 ms
// is appended to $REPOGATE_E2E_LOOP_PROBE_DIR/exthost-<pid>.txt as "<local time at the end of the stall> <ms>", in
// the RepoGate log's time format, so a stall can be placed next to its lines (model loading, indexing, completions).
// With REPOGATE_E2E_LOOP_PROBE_PROFILE=1 it also records the extension host's CPU profile (V8's sampling profiler
// through `inspector`, 1 ms samples) in 10 s pieces, exthost-<pid>-<n>.cpuprofile, so that tools/e2e/stalls.mjs can
// say whose code ran during each stall (which extension's script, or the host's own).
const fs = require('fs');
const inspector = require('inspector');
const path = require('path');

const INTERVAL_MS = 10;
const REPORT_MS = 30;
const PROFILE_PIECE_MS = 10_000;

/** "2026-11-30 03:07:13.688": local time, like VS Code's log files. */
function stamp(date = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}.${p(date.getMilliseconds(), 3)}`;
}

let session;

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
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - INTERVAL_MS;
    last = now;
    if (late > REPORT_MS) fs.appendFileSync(file, `${stamp()} ${late.toFixed(1)}\n`);
  }, INTERVAL_MS);
};

exports.deactivate = () => {
  session?.disconnect();
};
