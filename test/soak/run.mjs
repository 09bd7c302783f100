#!/usr/bin/env node
// The soak: a long session of scripted editing in code-server on the large real-code repository of the e2e run
// (test/e2e/bigRepo.mjs, 2,937 indexed files, made a git repository here) with the demo model
// (test/fixtures/models/repogate-tiny.gguf). It types real lines (taken from the repository's own files), accepts
// and rejects ghost text, undoes, switches files and saves; on a schedule it changes 50 files from outside (a
// `git checkout` of another commit), reindexes twice and changes settings (gate, contextTokens, model). Every
// SAMPLE_MS it records the RSS of the extension host, the engine process and the index process (reported, no
// target of its own: it is not the editor's memory), and the host's longest event-loop delay
// (tools/e2e/null-completion's monitor); at the end RepoGate's requests (answered, empty, cancelled, failed, the
// slowest), the errors in its log and the extension host's, the live index against a fresh build of the same
// folder (`repogate index --fresh`), and `git status`. Then the same editing again in a new code-server without
// RepoGate, the null extension answering the completions (its ghost text taken or rejected), the external change the
// only scheduled event: the baseline, what VS Code's own host does over the same time. The host's RSS growth counts
// against RepoGate only beyond the baseline's (decision S5). Prints the figures and a verdict per target; exits 1 on
// a missed one. Results: test/soak/artifacts/soak.json (and each session's logs under artifacts/<session>/).
// Usage: node test/soak/run.mjs [--minutes N] [--without-baseline | --baseline] [--all-extensions] [file.vsix]
// (default 20 minutes a session, RepoGate's session then the baseline's; --baseline runs the baseline alone; only
// the built-in extensions that run no code beside RepoGate and the null extension; the newest repogate-*.vsix).
// REPOGATE_E2E_LOOP_PROBE=1 adds the e2e run's loop probe (test/e2e/README.md) to both. REPOGATE_E2E_CPU_ROLES=1
// also samples which processes use the CPUs (tools/e2e/cpu-roles.mjs) into artifacts/cpu-roles.txt, for
// tools/e2e/waits.mjs: what ran while the host waited.
// `npm run test:soak` packages and installs first. Not part of CI: it takes as long as it says.
import { execFileSync, spawn } from 'child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { parseArgs } from 'util';
import { buildBigRepo } from '../e2e/bigRepo.mjs';
import { root } from '../e2e/codeServer.mjs';
import { newestVsix, openSession, SETTINGS } from '../e2e/session.mjs';
import { episode, realLines } from './editing.mjs';
import { processRss, sessionErrors } from './observe.mjs';

/** The issue's targets. */
const TARGETS = { rssGrowth: 0.1, maxDelayMs: 100, hangMs: 10_000 };
/** RSS growth is measured from this far in (the issue: "after the first 5 minutes"), scaled for short runs. */
const WARM_UP_SHARE = 0.25;
const SAMPLE_MS = 15_000;
/** --baseline: how long the window is left to start before editing (RepoGate's runs wait for its build and model). */
const BASELINE_START_MS = 15_000;
/** Files the external change touches (the issue: "an external change of 50 files"). */
const CHANGED_FILES = 50;
/** When each scheduled event happens, as a share of the run. */
const SCHEDULE = [
  [0.15, 'settings', { 'repogate.gate': 'always' }],
  [0.3, 'reindex'],
  [0.4, 'settings', { 'repogate.contextTokens': 1024 }],
  [0.5, 'external change'],
  [0.6, 'settings', { 'repogate.modelPath': 'copy' }],
  [0.7, 'reindex'],
  [0.8, 'settings', { 'repogate.gate': 'heuristic', 'repogate.contextTokens': 512, 'repogate.modelPath': 'demo' }],
];

const { values: flags, positionals } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    'all-extensions': { type: 'boolean', default: false },
    baseline: { type: 'boolean', default: false },
    'without-baseline': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const durationMs = Number(flags.minutes) * 60_000;
const artifactsDir = join(root, 'test', 'soak', 'artifacts');
const started = Date.now();
const say = (line) => console.log(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=soak', '-c', 'user.email=soak@localhost', ...args], { cwd, encoding: 'utf8' });
const demoModel = join(root, 'test', 'fixtures', 'models', 'repogate-tiny.gguf');

/** The large repository as two commits: the second changes CHANGED_FILES files (a helper appended to each). */
function makeRepository(dir) {
  const copied = buildBigRepo(join(root, 'node_modules'), dir);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'the copied sources');
  const files = git(dir, 'ls-files', '*.js').split('\n').filter(Boolean);
  const stride = Math.floor(files.length / CHANGED_FILES);
  for (let i = 0; i < CHANGED_FILES; i++) {
    const file = join(dir, files[i * stride]);
    writeFileSync(file, `${readFileSync(file, 'utf8')}\nfunction soakHelper${i}(value) {\n  return value + ${i};\n}\n`);
  }
  git(dir, 'commit', '-q', '-am', 'another commit: 50 files changed');
  git(dir, 'checkout', '-q', 'HEAD~1');
  return copied;
}

let failed = true;
let cpuRoles;
try {
  const vsix = flags.baseline ? undefined : resolve(positionals[0] ?? newestVsix());
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });
  const sampler = join(root, 'tools', 'e2e', 'cpu-roles.mjs');
  if (process.env.REPOGATE_E2E_CPU_ROLES === '1')
    cpuRoles = spawn(process.execPath, [sampler, join(artifactsDir, 'cpu-roles.txt')], { stdio: 'inherit' });
  const runs = {};
  if (!flags.baseline) runs.repogate = await run(vsix);
  if (flags.baseline || !flags['without-baseline']) runs.baseline = await run(undefined);
  failed = report(runs);
} catch (error) {
  console.log(`soak failed: ${error.stack ?? error}`);
}
if (cpuRoles?.exitCode === null) await new Promise((done) => cpuRoles.once('exit', done).kill('SIGTERM'));
process.exit(failed ? 1 : 0);

/**
 * One session in a new code-server on a fresh copy of the repository: with RepoGate (`vsix`), or the baseline
 * without it. Its logs go to artifacts/<name>/.
 */
async function run(vsix) {
  const name = vsix ? 'repogate' : 'baseline';
  const work = mkdtempSync(join(tmpdir(), 'repogate-soak-'));
  const s = {
    baseline: !vsix,
    repo: join(work, 'big-repo'),
    copyModel: join(work, 'models', 'repogate-tiny-copy.gguf'),
    /** `model ready` lines so far: a model change is done when the next one is logged. */
    modelLoads: 1,
    work,
  };
  const dir = join(artifactsDir, name);
  let session;
  try {
    mkdirSync(join(work, 'models'));
    copyFileSync(demoModel, s.copyModel);
    say(`${name}: ${makeRepository(s.repo)} files copied into ${s.repo} (a git repository of two commits)`);
    // REPOGATE_E2E_LOOP_PROBE=1, as in the e2e run: every stall of the host over 30 ms, with its time, in
    // artifacts/<name>/event-loop/exthost-<pid>.txt, to be read beside RepoGate's log.
    const probe = process.env.REPOGATE_E2E_LOOP_PROBE === '1';
    const env = {
      ...process.env,
      REPOGATE_E2E_BASELINE_DIR: join(work, 'requests'),
      REPOGATE_TEST_HOOKS: '1',
      ...(probe && { REPOGATE_E2E_LOOP_PROBE_DIR: join(dir, 'event-loop') }),
    };
    session = await openSession({
      work,
      workspace: s.repo,
      extensions: [...(vsix ? [vsix] : []), ...(probe ? ['loop-probe'] : []), 'null-completion'],
      artifactsDir: dir,
      env,
      // Old editors close as new ones open: twenty minutes of files left open would be the test's memory, not RepoGate's.
      // Only the built-in extensions that run no code share the host (as REPOGATE_E2E_OTHER_EXTENSIONS=off in the e2e
      // run): git's status runs after every save of a 3,000-file repository, and its process starts (fork of a
      // 600 MB host) would be counted as the host's stalls. --all-extensions keeps them.
      isolate: !flags['all-extensions'],
      settings: {
        ...SETTINGS,
        'workbench.editor.limit.enabled': true,
        'workbench.editor.limit.value': 5,
        ...(s.baseline && { 'repogateE2eBaseline.nullCompletions': true }),
      },
      say,
    });
    // A machine-scoped setting: code-server reads it from the remote side, so it is set through the API, as a user would.
    if (vsix) await session.editor.configure({ 'repogate.modelPath': demoModel });
    return await soak(session.editor, s);
  } finally {
    for (const [from, to] of [
      [join(work, 'user-data', 'logs'), 'logs'],
      [join(work, 'code-server.log'), 'code-server.log'],
    ])
      if (existsSync(from)) cpSync(from, join(dir, to), { recursive: true });
    await session?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The session itself: start-up, then episodes of editing with the schedule's events between them, then the end checks. */
async function soak(editor, s) {
  const indexed = (t) => t.split('\n').filter((l) => /indexed \d+ files/.test(l));
  if (s.baseline) await editor.page.waitForTimeout(BASELINE_START_MS);
  else await editor.waitForLog((t) => indexed(t).length > 0 && /model ready: /.test(t), { timeout: 300_000 });
  await editor.loopWindow(); // start-up's stalls are not the soak's
  const begun = Date.now();
  const startUp = s.baseline ? 'the null extension alone' : indexed(editor.readExtensionLog())[0].replace(/^.*\] /, '');
  say(`start-up done: ${startUp}; editing for ${flags.minutes} min`);
  const lines = realLines(s.repo);
  const samples = [];
  const events = [];
  let nextSample = 0;
  let n = 0;
  const pending = SCHEDULE.filter(([, kind]) => !s.baseline || kind === 'external change');
  while (Date.now() - begun < durationMs) {
    const share = (Date.now() - begun) / durationMs;
    if (Date.now() >= nextSample) {
      samples.push(await sample(editor, Date.now() - begun));
      nextSample = Date.now() + SAMPLE_MS;
    }
    if (pending.length && share >= pending[0][0]) {
      const [, kind, settings] = pending.shift();
      events.push({ atS: Math.round((Date.now() - begun) / 1000), kind, ...(settings && { settings }) });
      say(`${kind}${settings ? ` ${JSON.stringify(settings)}` : ''}`);
      await scheduled(editor, s, kind, settings, indexed);
      continue;
    }
    const done = await episode(editor, { repo: s.repo, lines, n: n++, git: (...a) => git(s.repo, ...a) });
    if (n % 20 === 0) say(`${n} episodes; last: ${done}`);
  }
  // Let the last edits reach the index (the editor forwards them 400 ms after the last keystroke).
  await editor.page.waitForTimeout(5_000);
  samples.push(await sample(editor, Date.now() - begun));
  return { minutes: Number(flags.minutes), episodes: n, samples, events, ...(await endChecks(editor, s)) };
}

async function scheduled(editor, s, kind, settings, indexed) {
  if (kind === 'settings') {
    const resolved = Object.fromEntries(
      Object.entries(settings).map(([k, v]) => [k, v === 'copy' ? s.copyModel : v === 'demo' ? demoModel : v]),
    );
    await editor.configure(resolved);
    if ('repogate.modelPath' in settings)
      await editor.waitForLog((t) => t.split('model ready: ').length > 1 + s.modelLoads, { timeout: 120_000 });
    s.modelLoads = editor.readExtensionLog().split('model ready: ').length - 1;
  } else if (kind === 'reindex') {
    const before = indexed(editor.readExtensionLog()).length;
    await editor.commandPalette('RepoGate: Reindex Repository');
    await editor.waitForLog((t) => indexed(t).length > before, { timeout: 300_000 });
  } else if (kind === 'external change') {
    const dirty = git(s.repo, 'status', '--porcelain').trim();
    if (dirty) throw new Error(`the workspace changed before the checkout:\n${git(s.repo, 'diff').slice(0, 3000)}`);
    git(s.repo, 'checkout', '-q', 'main');
  }
}

/** RSS of the extension host, the engine and the index processes, and the host's longest event-loop delay since the last sample. */
async function sample(editor, atMs) {
  const { maxDelayMs, pid, heapUsedMb } = await editor.loopWindow();
  const rss = processRss(pid);
  return {
    atS: Math.round(atMs / 1000),
    maxDelayMs: Math.round(maxDelayMs * 10) / 10,
    ...rss,
    hostHeapUsedMb: heapUsedMb,
  };
}

/** Requests, errors, the live index against a fresh build, and git status. */
async function endChecks(editor, s) {
  const status = git(s.repo, 'status', '--porcelain', '--untracked-files=all').trimEnd();
  if (status)
    writeFileSync(join(artifactsDir, `git-diff-${s.baseline ? 'baseline' : 'repogate'}.txt`), git(s.repo, 'diff'));
  const gitStatus = status ? status.split('\n') : [];
  const loadavg = readFileSync('/proc/loadavg', 'utf8').trim();
  if (s.baseline) return { gitStatus, errors: [], loadavg };
  const requests = await editor.hook('requests');
  const live = await editor.hook('indexStats');
  const fresh = JSON.parse(
    execFileSync(
      process.execPath,
      [join(root, 'dist', 'cli.js'), 'index', s.repo, '--fresh', '--json', '--cache', join(s.work, 'fresh-cache')],
      { encoding: 'utf8' },
    ),
  );
  return {
    requests,
    errors: sessionErrors(join(s.work, 'user-data', 'logs')),
    index: { live, fresh: { files: fresh.files, symbols: fresh.symbols, chunks: fresh.chunks } },
    gitStatus,
    loadavg,
  };
}

/** A run's samples from the end of the warm-up on, and the relative and absolute growth of a figure over them. */
function growthOf(r) {
  const after = r.samples.filter((s) => s.atS * 1000 >= durationMs * WARM_UP_SHARE);
  return {
    after,
    growth(key) {
      const values = after.map((s) => s[key]).filter((v) => v > 0);
      if (values.length < 2) return null;
      return { relative: Math.round((values.at(-1) / values[0] - 1) * 1000) / 1000, mb: values.at(-1) - values[0] };
    },
  };
}

/**
 * The verdicts. The extension host's RSS growth is RepoGate's only beyond what the same editing grows it without
 * RepoGate (decision S5, docs/decisions-reliability.md): with a baseline run, the difference of the two growths in
 * MB, against RepoGate's host at the end of the warm-up; without one, the growth itself.
 */
function verdictsOf(runs) {
  const r = runs.repogate ?? runs.baseline;
  const { after, growth } = growthOf(r);
  const own = growth('hostRssMb');
  const base = runs.repogate && runs.baseline && growthOf(runs.baseline).growth('hostRssMb');
  const beyond = base && own ? Math.round(((own.mb - base.mb) / after[0].hostRssMb) * 1000) / 1000 : null;
  const host = {
    ...(base === undefined
      ? { extensionHostRssGrowth: [own?.relative ?? null, (g) => g !== null && g <= TARGETS.rssGrowth] }
      : { extensionHostRssGrowthBeyondBaseline: [beyond, (g) => g !== null && g <= TARGETS.rssGrowth] }),
    maxEventLoopDelayMs: [Math.max(...r.samples.map((x) => x.maxDelayMs)), (d) => d <= TARGETS.maxDelayMs],
    gitStatusClean: [r.gitStatus.length === 0, (clean) => clean],
  };
  if (!runs.repogate) return host;
  return {
    ...host,
    engineRssGrowth: [growth('engineRssMb')?.relative ?? null, (g) => g !== null && g <= TARGETS.rssGrowth],
    requestsHanging: [r.requests.overSlow + r.requests.open, (h) => h === 0],
    requestsFailed: [r.requests.failed, (f) => f === 0],
    errors: [r.errors.length, (e) => e === 0],
    indexEqualsFresh: [
      ['files', 'symbols', 'chunks'].every((k) => r.index.live[k] === r.index.fresh[k]),
      (same) => same,
    ],
  };
}

/** Prints the figures of each run and the verdicts; writes soak.json. Returns true when a target was missed. */
function report(runs) {
  const result = { ...runs, verdicts: {} };
  for (const [name, r] of Object.entries(runs)) {
    const { after, growth } = growthOf(r);
    r.indexRssGrowth = growth('indexRssMb')?.relative ?? null;
    const [first, last] = [after[0], r.samples.at(-1)];
    console.log(
      `soak, ${name}: ${r.minutes} min, ${r.episodes} episodes; extension host RSS ${first?.hostRssMb} → ${last.hostRssMb} MB ` +
        `(anonymous ${first?.hostAnonMb} → ${last.hostAnonMb}, files ${first?.hostFileMb} → ${last.hostFileMb}), ` +
        `longest event-loop delay ${Math.max(...r.samples.map((x) => x.maxDelayMs))} ms; ` +
        (r.index
          ? `engine RSS ${first?.engineRssMb} → ${last.engineRssMb} MB, index RSS ${first?.indexRssMb} → ${last.indexRssMb} MB; ` +
            `requests ${JSON.stringify(r.requests)}; index live ${JSON.stringify(r.index.live)} fresh ${JSON.stringify(r.index.fresh)}; `
          : '') +
        `(growth from ${Math.round(WARM_UP_SHARE * 100)} % of the run); load at the end ${r.loadavg}`,
    );
    for (const e of r.errors.slice(0, 10)) console.log(`  error: ${e}`);
    for (const line of r.gitStatus.slice(0, 10)) console.log(`  git status: ${line}`);
  }
  let missed = false;
  for (const [name, [value, ok]] of Object.entries(verdictsOf(runs))) {
    result.verdicts[name] = { value, met: ok(value) };
    missed ||= !ok(value);
    console.log(`  ${ok(value) ? 'met    ' : 'NOT MET'} ${name}: ${JSON.stringify(value)}`);
  }
  writeFileSync(join(artifactsDir, 'soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(missed ? 'soak: a target was missed' : 'soak: every target met');
  return missed;
}
