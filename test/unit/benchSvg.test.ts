/**
 * The benchmark plots (tools/bench/svg.mjs and plots.mjs, ES modules, so run in a Node process of their own): axis
 * ticks, escaping and rounding; recall per repository has a bar per figure in a panel per half; latency per policy
 * has p50 and p95 per policy; the same input gives the same bytes.
 */
import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';

const BENCH = path.resolve(__dirname, '../../../tools/bench');

function runWith(code: string): string {
  const module = [
    `const svg = await import(${JSON.stringify(`file://${BENCH}/svg.mjs`)});`,
    `const plots = await import(${JSON.stringify(`file://${BENCH}/plots.mjs`)});`,
    code,
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', module], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

const json = (code: string): unknown => JSON.parse(runWith(`console.log(JSON.stringify(${code}));`));

const report = (repogate: number, jaccard: number, bm25: number, perRetriever?: Record<string, number>) => ({
  retrieval: { repogate: { recall: repogate }, jaccard: { recall: jaccard }, bm25: { recall: bm25 } },
  ...(perRetriever ? { perRetriever } : {}),
});

describe('bench plots', () => {
  it('steps axes by 1, 2 or 5 times a power of ten, and rounds to one decimal', () => {
    assert.deepEqual(
      json('[svg.niceStep(1000), svg.niceStep(1.15), svg.niceStep(198), svg.niceStep(0)]'),
      [200, 0.2, 50, 1],
    );
    assert.deepEqual(json('svg.ticks(1, 0.2)'), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(json('[svg.num(38.75), svg.num(-0.01), svg.num(2)]'), ['38.8', '0', '2']);
    assert.equal(json(`svg.esc('a<b & "c">')`), 'a&lt;b &amp; &quot;c&quot;&gt;');
  });

  it('draws recall per repository: a panel per half, a bar per figure, the best retriever alone', () => {
    const rows = [
      { repo: { name: 'one', half: 'tuning' }, report: report(0.6, 0.3, 0.25, { definition: 0.5, lexical: 0.45 }) },
      { repo: { name: 'two', half: 'checking' }, report: report(0.7, 0.4, 0.35) },
      { repo: { name: 'a<b', half: 'checking' }, report: report(0.8, 0.5, 0.45, { lexical: 0.55 }) },
    ];
    const out = runWith(`process.stdout.write(plots.recallPlot(${JSON.stringify(rows)}));`);
    assert.match(out, /^<svg [^>]*>[\s\S]*<\/svg>\n$/);
    assert.ok(out.includes('recall, tuning half (1 repository)'));
    assert.ok(out.includes('recall, checking half (2 repositories)'));
    for (const label of ['>one<', '>two<', '>a&lt;b<', '>RepoGate<', '>Jaccard<', '>BM25<', '>best retriever alone<'])
      assert.ok(out.includes(label), label);
    // Four legend swatches, and a bar per figure: 4 + 3 + 4 (`two` has no per-retriever figures).
    assert.equal(out.match(/<rect /g)?.length, 1 + 4 + 11);
    assert.equal(runWith(`process.stdout.write(plots.recallPlot(${JSON.stringify(rows)}));`), out);
  });

  it('draws p50 and p95 latency per gate policy, pooled over packages', () => {
    const reports = [
      { latency_ms: { never: [10, 20, 30, 40], always: [50, 60] } },
      { latency_ms: { never: [50, 60, 70, 80, 90, 100], always: [70] } },
    ];
    const out = runWith(`process.stdout.write(plots.latencyPlot(${JSON.stringify(reports)}, ['never', 'always']));`);
    assert.equal(out.match(/<rect /g)?.length, 1 + 2 + 4);
    // never: 10 values, p50 the 6th (60), p95 the 10th (100); always: 50, 60, 70 -> 60 and 70.
    for (const label of ['>never<', '>always<', '>60<', '>100<', '>70<', '>p50 ms<', '>p95 ms<'])
      assert.ok(out.includes(label), label);
  });
});
