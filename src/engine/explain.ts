/** A plain-text account of one completion: what the gate saw and decided, which context went in, and what it cost. */
import type { ModelInfo } from '../model/tokenModel';
import type { CompletionResult } from './completionEngine';

export function describeModel(info: ModelInfo): string {
  if (info.server) {
    const served = info.server.model ? ` (${info.server.model})` : '';
    const health = info.server.problem ? `; failing: ${info.server.problem.message}` : '';
    const where = `${info.server.engine} at ${info.server.url}${served}`;
    const prompts = info.server.promptFormat
      ? `, prompts as ${info.server.promptFormat === 'text' ? 'text (the server tokenizes them again)' : 'token ids'}`
      : '';
    const gate = info.server.gateNote ? `; ${info.server.gateNote}` : '';
    return `${info.name ?? info.path} [${info.family.family.label}] on ${where}${prompts}, context ${info.contextSize} tokens${gate}${health}`;
  }
  const offload =
    info.backend === 'cpu'
      ? 'CPU'
      : `${info.backend.toUpperCase()}, ${info.gpuLayers}/${info.totalLayers} layers offloaded`;
  return `${info.name ?? info.path} [${info.family.family.label}] on ${offload}, ${info.threads} thread${info.threads === 1 ? '' : 's'}, context ${info.contextSize} tokens`;
}

export function explainCompletion(model: ModelInfo, result: CompletionResult, policyModel?: ModelInfo): string {
  const g = result.gate;
  const lines = [`model: ${describeModel(model)}`];
  if (policyModel) lines.push(`policy model: ${describeModel(policyModel)}`);
  const reading =
    g.source === 'fixed'
      ? `${g.policy}: ${g.fire ? 'always retrieves' : 'never retrieves'}`
      : `${g.policy}: ${g.source === 'heuristic' ? 'P(retrieval helps)' : `P(<cc>) from the ${g.source}`} = ${g.score.toFixed(3)} ${g.fire ? '>' : '≤'} threshold ${g.threshold.toFixed(3)}`;
  lines.push(`gate: ${reading} → ${g.fire ? 'retrieve cross-file context' : 'no retrieval'}`);
  if (g.features)
    lines.push(
      `  signals: ${Object.entries(g.features)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', ')}`,
    );
  if (g.fire) {
    lines.push(
      `context: ${result.snippets.length} snippet${result.snippets.length === 1 ? '' : 's'}, ${result.prompt.contextTokens} tokens`,
    );
    for (const [i, s] of result.snippets.entries()) {
      lines.push(`  #${i + 1} ${s.path}:${s.range.start + 1}-${s.range.end} [${s.retriever}] ${s.why}`);
    }
  }
  const p = result.prompt;
  const cached = p.tokens - p.evaluated;
  const reuse =
    cached > 0
      ? `${p.evaluated} evaluated, ${cached} from the KV cache`
      : 'all evaluated (nothing reusable in the KV cache)';
  lines.push(
    `prompt: ${p.tokens} tokens (left ${p.leftTokens}, right ${p.rightTokens}, context ${p.contextTokens}); ${reuse}`,
  );
  const t = result.timings;
  const first = t.firstTokenMs === undefined ? 'no token' : `${t.firstTokenMs.toFixed(0)} ms`;
  const speed = t.generationTokS === undefined ? '' : `, generation ${t.generationTokS.toFixed(1)} tokens/s`;
  lines.push(
    `timings: gate ${t.gateMs.toFixed(0)} ms, retrieval ${t.retrievalMs.toFixed(0)} ms, first token ${first}, total ${t.totalMs.toFixed(0)} ms${speed}`,
  );
  lines.push(`completion (${result.mode}${result.aborted ? ', aborted' : ''}):`);
  lines.push(
    result.text
      ? result.text
      : '(nothing usable: the model produced only whitespace, special tokens or a repeat of the code after the cursor)',
  );
  return `${lines.join('\n')}\n`;
}
