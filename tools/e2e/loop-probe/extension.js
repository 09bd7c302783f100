// Test-only extension (installed by test/e2e/run.mjs when REPOGATE_E2E_LOOP_PROBE=1): it shares the extension host
// with RepoGate, so its 10 ms timer fires late whenever anything blocks that event loop. Each lateness over 30 ms
// is appended to $REPOGATE_E2E_LOOP_PROBE_DIR/exthost-<pid>.txt as "<local time at the end of the stall> <ms>", in
// the RepoGate log's time format, so a stall can be placed next to its lines (model loading, indexing, completions).
const fs = require('fs');
const path = require('path');

const INTERVAL_MS = 10;
const REPORT_MS = 30;

/** "2026-11-30 03:07:13.688": local time, like VS Code's log files. */
function stamp(date = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}.${p(date.getMilliseconds(), 3)}`;
}

exports.activate = () => {
  const dir = process.env.REPOGATE_E2E_LOOP_PROBE_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `exthost-${process.pid}.txt`);
  fs.appendFileSync(file, `${stamp()} start\n`);
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - INTERVAL_MS;
    last = now;
    if (late > REPORT_MS) fs.appendFileSync(file, `${stamp()} ${late.toFixed(1)}\n`);
  }, INTERVAL_MS);
};

exports.deactivate = () => {};
