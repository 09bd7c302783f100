// The benchmark figures drawn as SVG (svg.mjs), pure functions of the reports the scripts keep: recall per repository
// against the baselines (`npm run bench`, run.mjs) and latency percentiles per gate policy (`npm run
// bench:generation`, generation.mjs). bench:scale draws its own (scale.mjs, svgPlot).
import { COLORS, barPanel, legend, svgDocument } from './svg.mjs';

/** The `p`th percentile of `values` (nearest rank, as the tables give it); 0 for none. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0;
}

const RECALL_SERIES = [
  { label: 'RepoGate', color: COLORS[0], pick: (r) => r.retrieval.repogate.recall },
  { label: 'Jaccard', color: COLORS[1], pick: (r) => r.retrieval.jaccard.recall },
  { label: 'BM25', color: COLORS[2], pick: (r) => r.retrieval.bm25.recall },
  {
    label: 'best retriever alone',
    color: COLORS[3],
    pick: (r) => (r.perRetriever ? Math.max(...Object.values(r.perRetriever)) : null),
  },
];

/**
 * Recall per repository, a panel per half (tuning, then checking; a half without repositories left out): RepoGate,
 * RepoCoder's Jaccard, BM25 and the best of RepoGate's retrievers alone. `rows`: `{ repo: { name, half }, report }`
 * as run.mjs keeps them, in table order.
 */
export function recallPlot(rows) {
  const halves = ['tuning', 'checking']
    .map((half) => ({ half, rows: rows.filter((r) => r.repo.half === half) }))
    .filter((h) => h.rows.length > 0);
  const width = 50 + 84 * Math.max(1, ...halves.map((h) => h.rows.length));
  const panelHeight = 280;
  const panels = halves.map(({ half, rows: inHalf }, i) =>
    barPanel({
      y: 30 + i * panelHeight,
      width,
      title: `recall, ${half} half (${inHalf.length} ${inHalf.length === 1 ? 'repository' : 'repositories'})`,
      yMax: 1,
      yStep: 0.2,
      series: RECALL_SERIES,
      groups: inHalf.map(({ repo, report }) => ({
        label: repo.name,
        values: RECALL_SERIES.map((s) => s.pick(report)),
      })),
    }),
  );
  return svgDocument(width + 70, 30 + halves.length * panelHeight, [legend(50, 20, RECALL_SERIES), ...panels]);
}

/**
 * Completion latency p50 and p95 per gate policy, all packages' tasks pooled (generation.mjs's table). `reports`: the
 * per-package reports of `repogate bench --gate` (`latency_ms[gate]`: a time per task), `gates` in table order.
 */
export function latencyPlot(reports, gates) {
  const series = [
    { label: 'p50 ms', color: COLORS[0] },
    { label: 'p95 ms', color: COLORS[2] },
  ];
  const groups = gates.map((gate) => {
    const latencies = reports.flatMap((r) => r.latency_ms?.[gate] ?? []);
    return { label: gate, values: [percentile(latencies, 50), percentile(latencies, 95)] };
  });
  const width = Math.max(300, 110 * gates.length);
  return svgDocument(width + 70, 310, [
    legend(50, 20, series),
    barPanel({ y: 30, width, title: 'completion latency per gate policy, ms', groups, series, valueLabels: true }),
  ]);
}
