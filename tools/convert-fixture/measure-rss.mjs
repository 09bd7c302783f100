#!/usr/bin/env node
// Peak RSS of `repogate convert` on a synthetic GPTBigCode checkpoint of at least 1 GB (fp32 safetensors), for
// F16 and Q8_0, against the bound 1.5 x the largest tensor + 200 MB. Run after `npm run build:tests`:
//
//   node tools/convert-fixture/measure-rss.mjs [work dir, default a temp folder]
//
// The checkpoint is made by test/helpers/syntheticCheckpoint.ts (compiled under out/); the converter runs as the
// CLI in its own process, and its peak RSS is read by /usr/bin/time -v (the kernel's maxrss).
import { spawnSync } from 'child_process';
import { mkdtempSync, rmSync, statSync } from 'fs';
import { createRequire } from 'module';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { fileURLToPath } from 'url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const { writeSyntheticCheckpoint } = require(join(root, 'out/test/helpers/syntheticCheckpoint.js'));

// StarCoderBase-1B's width and context (n_embd 2048, n_positions 8192) with 6 blocks: just over 1 GB of fp32.
const SHAPE = { nEmbd: 2048, nHead: 16, nLayer: 6, nPositions: 8192 };
const MB = 1024 * 1024;

const work = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'repogate-rss-'));
const dir = join(work, 'checkpoint');
const { largestTensorBytes, fileBytes } = await writeSyntheticCheckpoint(dir, SHAPE);
const bound = 1.5 * largestTensorBytes + 200 * MB;
console.log(
  `checkpoint: ${(fileBytes / MB).toFixed(0)} MiB, largest tensor ${(largestTensorBytes / MB).toFixed(0)} MiB, ` +
    `bound ${(bound / MB).toFixed(0)} MiB`,
);
let failed = false;
for (const type of ['q8_0', 'f16']) {
  const out = join(work, `synthetic.${type}.gguf`);
  const started = Date.now();
  const run = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, join(root, 'out/src/cli.js'), 'convert', dir, '--out', out, '--type', type],
    { encoding: 'utf8', maxBuffer: 64 * MB },
  );
  if (run.status !== 0) throw new Error(`convert failed: ${run.stderr}`);
  const seconds = (Date.now() - started) / 1000;
  const peakKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]);
  console.log(
    `${type}: peak RSS ${(peakKb / 1024).toFixed(0)} MiB, ${seconds.toFixed(1)} s, ` +
      `output ${(statSync(out).size / MB).toFixed(0)} MiB` +
      ` -> ${peakKb * 1024 < bound ? 'under' : 'OVER'} the bound`,
  );
  failed ||= peakKb * 1024 >= bound;
  rmSync(out);
}
if (!process.argv[2]) rmSync(work, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
