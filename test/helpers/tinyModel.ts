/**
 * The shipped tiny Repoformer-style model (test/fixtures/models/repogate-tiny.gguf, built by tools/tiny-model)
 * loaded through node-llama-cpp on the CPU with one thread, and the prompt layout it was trained on:
 * <fim_prefix>L<fim_suffix>R<eof>[<cc>CC]<fim_middle>Y<|endoftext|>.
 */
import * as path from 'path';
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { importNodeLlamaCpp } from '../../src/model/nodeLlamaCpp';
import { FIXTURES } from './fixtures';
import { rewriteGguf } from './ggufWrite';

export const TINY_MODEL = path.join(FIXTURES, 'models', 'repogate-tiny.gguf');

/**
 * The tiny model with <cc>/<eof> renamed and its repogate.* metadata removed, written to dest: a plain
 * StarCoder-style FIM model without the gate.
 */
export async function writeGatelessTinyModel(dest: string): Promise<void> {
  const rename = new Map([
    ['<cc>', '<unused_a>'],
    ['<eof>', '<unused_b>'],
  ]);
  await rewriteGguf(TINY_MODEL, dest, (kvs) =>
    kvs
      .filter((kv) => !kv.key.startsWith('repogate.'))
      .map((kv) =>
        kv.key === 'tokenizer.ggml.tokens'
          ? { ...kv, value: (kv.value as string[]).map((t) => rename.get(t) ?? t) }
          : kv,
      ),
  );
}

export interface TinyModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  /** Ids of the special tokens, found by name. */
  special: Record<'endoftext' | 'fimPrefix' | 'fimSuffix' | 'fimMiddle' | 'eof' | 'cc', Token>;
  dispose(): Promise<void>;
}

export async function loadTinyModel(): Promise<TinyModel> {
  const { getLlama } = await importNodeLlamaCpp();
  const llama = await getLlama({ gpu: false });
  const model = await llama.loadModel({ modelPath: TINY_MODEL, gpuLayers: 0 });
  const context = await model.createContext({ contextSize: 1024, batchSize: 1024, threads: 1, sequences: 1 });
  const sequence = context.getSequence();
  const one = (text: string): Token => {
    const ids = model.tokenize(text, true);
    if (ids.length !== 1) throw new Error(`${text} is not one special token (${ids.length} tokens)`);
    return ids[0];
  };
  const special = {
    endoftext: one('<|endoftext|>'),
    fimPrefix: one('<fim_prefix>'),
    fimSuffix: one('<fim_suffix>'),
    fimMiddle: one('<fim_middle>'),
    eof: one('<eof>'),
    cc: one('<cc>'),
  };
  return {
    llama,
    model,
    context,
    sequence,
    special,
    async dispose() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

/** <fim_prefix>L<fim_suffix>R<eof>: the self-assessment prompt; P(<cc>) is read as the next token. */
export function gatePrompt(m: TinyModel, left: string, right: string): Token[] {
  const s = m.special;
  return [s.fimPrefix, ...m.model.tokenize(left, false), s.fimSuffix, ...m.model.tokenize(right, false), s.eof];
}

/** The generation prompt: ...<eof><fim_middle> without CC, ...<eof><cc>CC<fim_middle> with it. */
export function generationPrompt(m: TinyModel, left: string, right: string, cc?: string): Token[] {
  const s = m.special;
  const withCc = cc ? [s.cc, ...m.model.tokenize(cc, false)] : [];
  return [...gatePrompt(m, left, right), ...withCc, s.fimMiddle];
}

/** The full next-token distribution after `tokens` (plain softmax: no sampling options). */
export async function nextProbabilities(m: TinyModel, tokens: Token[]): Promise<Map<Token, number>> {
  await m.sequence.clearHistory();
  const input = tokens.map((t, i) =>
    i === tokens.length - 1 ? ([t, { generateNext: { probabilities: true } }] as const) : t,
  );
  const result = await m.sequence.controlledEvaluate(
    input as Parameters<LlamaContextSequence['controlledEvaluate']>[0],
  );
  const probabilities = result[tokens.length - 1]?.next.probabilities;
  if (!probabilities) throw new Error('no probabilities returned');
  return probabilities;
}

/** Greedy decoding of up to `maxTokens` after `tokens`, stopping at <|endoftext|>; returns the text. */
export async function greedy(m: TinyModel, tokens: Token[], maxTokens: number): Promise<string> {
  let probabilities = await nextProbabilities(m, tokens);
  const out: Token[] = [];
  for (let i = 0; i < maxTokens; i++) {
    const next = probabilities.entries().next().value![0];
    if (next === m.special.endoftext) break;
    out.push(next);
    const result = await m.sequence.controlledEvaluate([[next, { generateNext: { probabilities: true } }]]);
    const p = result[0]?.next.probabilities;
    if (!p) break;
    probabilities = p;
  }
  return m.model.detokenize(out, false);
}
