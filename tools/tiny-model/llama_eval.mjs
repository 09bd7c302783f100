// Runs token sequences through llama.cpp (node-llama-cpp 3.21.1, CPU, one thread) and reports, at the requested
// positions, the top-5 next tokens with probabilities and the probabilities of chosen tokens; optionally greedy
// generation after a sequence.
// usage: node llama_eval.mjs MODEL.gguf IN.json OUT.json
// IN: {watch: [tokenIds], items: [{ids, positions: [i...] | "all", generate?: N, stop?: [ids]}]}
// OUT: [{positions: [{i, top5: [[id, p]...], watch: {id: p}}], generated?: [ids]}]
import { readFileSync, writeFileSync } from 'node:fs';
import { getLlama } from 'node-llama-cpp';

const [modelPath, input, output] = process.argv.slice(2);
const job = JSON.parse(readFileSync(input, 'utf8'));
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const context = await model.createContext({ contextSize: 1024, batchSize: 1024, threads: 1, sequences: 1 });
const sequence = context.getSequence();
const results = [];
for (const item of job.items) {
  await sequence.clearHistory();
  const want = new Set(item.positions === 'all' ? item.ids.map((_, i) => i) : item.positions);
  if (item.generate) want.add(item.ids.length - 1);
  const input = item.ids.map((t, i) => (want.has(i) ? [t, { generateNext: { probabilities: true } }] : t));
  const res = await sequence.controlledEvaluate(input);
  const positions = [];
  for (const i of [...want].sort((a, b) => a - b)) {
    const probs = res[i]?.next?.probabilities;
    if (!probs) {
      positions.push({ i, top5: [], watch: {} });
      continue;
    }
    const top5 = [...probs.entries()].slice(0, 5);
    const watch = Object.fromEntries((job.watch ?? []).map((id) => [id, probs.get(id) ?? 0]));
    positions.push({ i, top5, watch });
  }
  const out = { positions };
  if (item.generate) {
    const generated = [];
    let last = res[item.ids.length - 1]?.next?.probabilities;
    for (let k = 0; k < item.generate && last; k++) {
      const next = last.entries().next().value[0];
      if ((item.stop ?? []).includes(next)) break;
      generated.push(next);
      const r = await sequence.controlledEvaluate([[next, { generateNext: { probabilities: true } }]]);
      last = r[0]?.next?.probabilities;
    }
    out.generated = generated;
  }
  results.push(out);
}
writeFileSync(output, JSON.stringify(results));
await context.dispose();
await model.dispose();
await llama.dispose();
