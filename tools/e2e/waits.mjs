#!/usr/bin/env node
// What ran while the extension host waited for a CPU: joins the loop probe's stalls (exthost-<pid>.txt in the probe's
// folder, test/e2e/README.md) with the samples of tools/e2e/cpu-roles.mjs. For each stall whose main thread waited at
// least the threshold (runnable, with no CPU: the probe's `waited`), it prints the stall and the CPU ticks each role
// used over it; then each role's share of the ticks in those stalls against its share over the whole run, which
// tells whether a role was merely busy all along or busy exactly when the host waited.
// Usage: node tools/e2e/waits.mjs <probe dir> <cpu-roles.txt> [minWaitedMs=30]
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

/** Ticks after the stall's end still count: a tick is charged when the kernel's timer fires, up to 10 ms late. */
const TICK_SLACK_MS = 20;

const [dir, samplesFile, minWaited = '30'] = process.argv.slice(2);
if (!dir || !samplesFile) {
  console.error('usage: node tools/e2e/waits.mjs <probe dir> <cpu-roles.txt> [minWaitedMs=30]');
  process.exit(2);
}

const samples = readFileSync(samplesFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [at, ...used] = line.split(' ');
    return {
      at: Number(at),
      used: used
        .filter((u) => u.includes(':'))
        .map((u) => [u.slice(0, u.lastIndexOf(':')), Number(u.slice(u.lastIndexOf(':') + 1))]),
    };
  });

const add = (into, used) => {
  for (const [role, ticks] of used) into.set(role, (into.get(role) ?? 0) + ticks);
};
const shares = (ticks) => {
  const total = [...ticks.values()].reduce((a, b) => a + b, 0);
  return new Map([...ticks].map(([role, n]) => [role, total ? n / total : 0]));
};
const top = (ticks, n = 6) =>
  [...ticks]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([role, t]) => `${role}:${t}`)
    .join(' ');

const inStalls = new Map();
let count = 0;
let span = 0;
for (const name of readdirSync(dir).filter((n) => /^exthost-\d+\.txt$/.test(n))) {
  for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
    // "2026-12-03 17:53:24.831 158.9 ran 1.7 waited 162.0 process 1.8 steal 0/0 …", in local time.
    const m = /^(\S+) (\S+) ([\d.]+) ran [\d.]+ waited ([\d.]+)/.exec(line);
    if (!m || Number(m[4]) < Number(minWaited)) continue;
    const end = new Date(`${m[1]}T${m[2]}`).getTime();
    const from = end - Number(m[3]);
    const used = new Map();
    for (const s of samples) if (s.at >= from && s.at <= end + TICK_SLACK_MS) add(used, s.used);
    add(inStalls, used);
    count += 1;
    span += Number(m[3]);
    console.log(`${line.slice(0, 100)} | ${top(used)}`);
  }
}
const whole = new Map();
for (const s of samples) add(whole, s.used);
const inShare = shares(inStalls);
const wholeShare = shares(whole);
console.log(`\n${count} stalls with >= ${minWaited} ms waited, ${Math.round(span)} ms in all`);
console.log('role: share of the CPU ticks in those stalls / over the whole run');
for (const [role] of [...inStalls].sort((a, b) => b[1] - a[1]))
  console.log(
    `  ${role}: ${(100 * inShare.get(role)).toFixed(1)} % / ${(100 * (wholeShare.get(role) ?? 0)).toFixed(1)} %`,
  );
