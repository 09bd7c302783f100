#!/usr/bin/env node
// Whose code blocked the extension host: reads the CPU profiles the loop probe records
// (REPOGATE_E2E_LOOP_PROBE=1 REPOGATE_E2E_LOOP_PROBE_PROFILE=1, test/e2e/artifacts/event-loop/*.cpuprofile) and
// prints every busy stretch of the event loop (consecutive samples that are not "(idle)") over the threshold with
// its wall-clock time and the share of each owner: a sample belongs to the innermost frame with a script, named by
// its extension folder (git, typescript-language-features, repogate.repogate-…) or "exthost" for VS Code's extension
// host; Node's own JavaScript and natives (spawn, write…) go to their caller ("node" when it has none, e.g. a
// stream callback), "(garbage collector)"/"(program)" stay.
// Usage: node tools/e2e/stalls.mjs [dir] [thresholdMs=50]   Also exports `stalls(dir, thresholdMs)`.
import { readdirSync, readFileSync } from 'fs';
import { join, resolve } from 'path';
import { fileURLToPath } from 'url';

function owner(url) {
  if (!url) return undefined;
  const ext = /\/extensions\/([^/]+)\//.exec(url);
  if (ext) return ext[1];
  if (url.startsWith('node:') || !url.includes('/')) return 'node';
  if (/\/vs\/|\/out\//.test(url)) return 'exthost';
  return url.replace(/^.*\//, '');
}

/** [{pid, startWall, ms, owners: {owner: ms}, top: [[function, ms]]}] over `thresholdMs`, sorted by time. */
export function stalls(dir, thresholdMs = 50) {
  const found = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.cpuprofile'))
    .sort()) {
    const pid = name.split('-')[1];
    const p = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const ownerOf = new Map();
    const resolveOwner = (id) => {
      if (ownerOf.has(id)) return ownerOf.get(id);
      const n = byId.get(id);
      let o = owner(n.callFrame.url);
      if (!o && ['(idle)', '(program)', '(garbage collector)', '(root)'].includes(n.callFrame.functionName))
        o = n.callFrame.functionName;
      // Node's own JavaScript and natives (spawn, write…) run for someone: the caller is the owner.
      if (!o || o === 'node') {
        const up = parent.has(id) ? resolveOwner(parent.get(id)) : '(root)';
        o = up === '(root)' ? (o ?? '(native)') : up;
      }
      ownerOf.set(id, o);
      return o;
    };
    const toWall = (t) => p.wallEndMs - (p.endTime - t) / 1000;
    let t = p.startTime;
    let run;
    const close = () => {
      if (run && run.ms > thresholdMs) found.push(run);
      run = undefined;
    };
    p.samples.forEach((id, i) => {
      const dt = (p.timeDeltas[i] ?? 0) / 1000;
      t += dt * 1000;
      const o = resolveOwner(id);
      if (o === '(idle)') return close();
      run ??= { pid, startWall: toWall(t), ms: 0, owners: {}, fns: {} };
      run.ms += dt;
      run.owners[o] = (run.owners[o] ?? 0) + dt;
      const f = byId.get(id).callFrame;
      const fn = `${o}:${f.functionName || '(anonymous)'}${f.url ? `@${f.url.replace(/^.*\//, '')}:${f.lineNumber}` : ''}`;
      run.fns[fn] = (run.fns[fn] ?? 0) + dt;
    });
    close();
  }
  return found
    .sort((a, b) => a.startWall - b.startWall)
    .map(({ fns, ...r }) => ({
      ...r,
      ms: Math.round(r.ms),
      owners: Object.fromEntries(
        Object.entries(r.owners)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => [k, Math.round(v)]),
      ),
      top: Object.entries(fns)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([k, v]) => [k, Math.round(v)]),
    }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? 'test/e2e/artifacts/event-loop');
  const list = stalls(dir, Number(process.argv[3] ?? 50));
  const time = (ms) => new Date(ms).toTimeString().slice(0, 8) + `.${String(Math.floor(ms % 1000)).padStart(3, '0')}`;
  for (const s of list) {
    console.log(
      `${time(s.startWall)} exthost ${s.pid} ${s.ms} ms: ${Object.entries(s.owners)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
    console.log(`    ${s.top.map(([k, v]) => `${k} ${v}`).join(' | ')}`);
  }
}
