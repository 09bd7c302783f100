// Fits the heuristic gate (src/gate/heuristic.ts): L2-regularised logistic regression of "cross" (needs
// cross-file context) against "infile" over the features that `repogate bench --gate heuristic --features F`
// writes, one JSON line per task. Writes src/gate/heuristicWeights.json. Deterministic: full-batch gradient
// descent from zero. Usage: node tools/gate/fit-heuristic.mjs OUT.json FEATURES.jsonl [...]
import { readFileSync, writeFileSync } from 'fs';
import { createRequire } from 'module';

// The project's own ROC AUC (out/, compiled by tsc: fit.sh runs it first).
const { rocAuc } = createRequire(import.meta.url)('../../out/src/bench/metrics.js');

const [out, ...inputs] = process.argv.slice(2);
if (!out || inputs.length === 0) {
  console.error('usage: fit-heuristic.mjs OUT.json FEATURES.jsonl [...]');
  process.exit(2);
}
const rows = inputs.flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l)),
);
const names = Object.keys(rows[0].features);
const X = rows.map((r) => names.map((n) => r.features[n]));
const y = rows.map((r) => (r.kind === 'cross' ? 1 : 0));
const mean = names.map((_, j) => X.reduce((s, x) => s + x[j], 0) / X.length);
const scale = names.map((_, j) => Math.sqrt(X.reduce((s, x) => s + (x[j] - mean[j]) ** 2, 0) / X.length) || 1);
const Z = X.map((x) => x.map((v, j) => (v - mean[j]) / scale[j]));

// Classes are weighted equally: tasks come as many infile as cross, real keystrokes do not.
const positives = y.filter(Boolean).length;
const weightOf = (label) => (label ? 0.5 / positives : 0.5 / (y.length - positives));
const L2 = 1e-3;
let w = names.map(() => 0);
let b = 0;
const sigmoid = (z) => 1 / (1 + Math.exp(-z));
for (let step = 0; step < 4000; step++) {
  const gw = names.map(() => 0);
  let gb = 0;
  Z.forEach((z, i) => {
    const err = (sigmoid(b + z.reduce((s, v, j) => s + v * w[j], 0)) - y[i]) * weightOf(y[i]);
    z.forEach((v, j) => (gw[j] += err * v));
    gb += err;
  });
  w = w.map((v, j) => v - 0.5 * (gw[j] + L2 * v));
  b -= 0.5 * gb;
}
const scores = Z.map((z) => sigmoid(b + z.reduce((s, v, j) => s + v * w[j], 0)));

// Threshold: the best balanced accuracy (Youden's J) on the fitting tasks.
let threshold = 0.5,
  best = -1;
for (const t of [...new Set(scores)].sort((a, c) => a - c)) {
  const tpr = scores.filter((s, i) => y[i] && s > t).length / positives;
  const fpr = scores.filter((s, i) => !y[i] && s > t).length / (y.length - positives);
  if (tpr - fpr > best) [best, threshold] = [tpr - fpr, t];
}
const record = (values) => Object.fromEntries(names.map((n, j) => [n, Number(values[j].toFixed(6))]));
const model = {
  mean: record(mean),
  scale: record(scale),
  weights: record(w),
  bias: Number(b.toFixed(6)),
  threshold: Number(threshold.toFixed(6)),
  fitted: {
    tasks: rows.length,
    cross: positives,
    files: inputs.map((f) => f.split('/').pop()),
    auc: Number(rocAuc(scores.map((score, i) => ({ score, positive: y[i] === 1 }))).toFixed(3)),
  },
};
writeFileSync(out, `${JSON.stringify(model, null, 2)}\n`);
console.log(
  `fitted on ${rows.length} tasks (${positives} cross): AUC ${model.fitted.auc}, threshold ${model.threshold}`,
);
console.log(names.map((n, j) => `${n} ${w[j].toFixed(3)}`).join(', '));
