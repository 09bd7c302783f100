/**
 * The pure parts of `npm run bench:scale` (tools/bench/scale.mjs, an ES module, so run in a Node process of its own):
 * sizes are nested prefixes of one file order, recall is probed for the repositories a size holds whole and
 * counted against their recall alone, and the SVG has a point per size and the targets.
 */
import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import { readFileSync } from 'fs';
import * as path from 'path';

const SCRIPT = path.resolve(__dirname, '../../../tools/bench/scale.mjs');

function runWith(code: string): { status: number | null; stdout: string; stderr: string } {
  const module = `const { prefix, recallSummary, svgPlot, wholeInPlan } = await import(${JSON.stringify(`file://${SCRIPT}`)});\n${code}`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', module], { encoding: 'utf8' });
}

const ORDER = `[{ name: 'a', files: ['a1', 'a2', 'a3'] }, { name: 'b', files: ['b1', 'b2'] }]`;

/**
 * The repositories DESIGN.md reserves for independent evaluation, by the npm packages they publish: never fetched,
 * benchmarked on or tuned to, so never an input of the scale workspace either.
 */
const RESERVED_PACKAGES = [/^hono$/, /^zod$/, /^drizzle-/, /^@trpc\//, /^typeorm$/, /^@?excalidraw/];

describe('bench:scale', () => {
  it('takes no package of a reserved repository as an input', () => {
    const inputs = JSON.parse(readFileSync(path.resolve(__dirname, '../../../tools/bench/scale-inputs.json'), 'utf8'));
    const names: string[] = [...inputs.repos, ...inputs.packages.map((p: { name: string }) => p.name)];
    assert.deepEqual(
      names.filter((name) => RESERVED_PACKAGES.some((r) => r.test(name))),
      [],
    );
  });

  it('cuts each size from the front of one order: whole inputs, then part of the next', () => {
    const run = runWith(
      `console.log(JSON.stringify([2, 4, 5].map((n) => prefix(${ORDER}, n).map((p) => [p.name, p.take]))));`,
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [
      [['a', 2]],
      [
        ['a', 3],
        ['b', 1],
      ],
      [
        ['a', 3],
        ['b', 2],
      ],
    ]);
  });

  it('stops with the count the inputs hold when a size is larger', () => {
    const run = runWith(`prefix(${ORDER}, 6);`);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /the inputs hold 5 indexed files, fewer than 6/);
  });

  it('probes the recall of the repositories a size takes whole, not of one it cuts', () => {
    const tasks = `[{ name: 'a' }, { name: 'b' }]`;
    const run = runWith(
      `console.log(JSON.stringify([4, 5].map((n) => wholeInPlan(prefix(${ORDER}, n), ${tasks}).map((t) => t.name))));`,
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [['a'], ['a', 'b']]);
  });

  it('counts the repositories within 0.02 of their recall alone and names the one that falls furthest', () => {
    const figures = `{ a: { warm: { recall: { a: { recall: 0.8 } } } }, b: { warm: { recall: { b: { recall: 0.6 } } } },
      c: { warm: { recall: { c: { recall: 0.5 } } } } }`;
    const run = runWith(
      `console.log(recallSummary({ a: { recall: 0.78 }, b: { recall: 0.55 }, c: { recall: 0.51 } }, ${figures}));` +
        `console.log(recallSummary({}, ${figures}));`,
    );
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '2 of 3 (worst b -0.05)\n-\n');
  });

  it('plots a point per size in each panel, and the targets', () => {
    const rows = [10000, 25000].map((files, i) => ({ cold: { files, rss_mb: 800 + i * 700, ms: 38000 + i * 50000 } }));
    const run = runWith(`process.stdout.write(svgPlot(${JSON.stringify(rows)}));`);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^<svg [^>]*>[\s\S]*<\/svg>\n$/);
    assert.equal(run.stdout.match(/<circle /g)?.length, 4);
    for (const label of ['>1500<', '>88<', 'target 250', 'target 500', 'target 180'])
      assert.ok(run.stdout.includes(label));
  });
});
