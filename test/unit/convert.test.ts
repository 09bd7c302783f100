/**
 * `repogate convert` on the committed tiny GPTBigCode fixture, checked against two torch forward passes: each weights
 * variant (fp32 .bin with tied lm_head, bf16 safetensors, fp16 sharded .bin) converted to F16 and Q8_0, loaded by
 * node-llama-cpp, and compared on next-token log-probabilities, P(<cc>) and greedy tokens with the plain fp32 pass
 * (the conversion's whole error) and with the pass that rounds as llama.cpp's CPU backend does on that output type
 * (REPOGATE_CONVERT_REPORT=1 prints every measured difference); the tokenizer compared
 * with the source tokenizer.json run by a separate implementation (@huggingface/tokenizers).
 */
import { strict as assert } from 'assert';
import * as path from 'path';
import type { Llama, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { Tokenizer } from '@huggingface/tokenizers';
import { promises as fs, readFileSync } from 'fs';
import { convertCheckpoint, type OutputType } from '../../src/convert';
import { controlTokens, readGguf } from '../../src/model/gguf';
import { detectFamily } from '../../src/model/families';
import { importNodeLlamaCpp } from '../../src/model/nodeLlamaCpp';
import { tempDir } from '../helpers/fixtures';
import {
  layOut,
  readReference,
  REPOFORMER_TINY,
  VARIANTS,
  type Reference,
  type ReferenceOutput,
  type Variant,
} from '../helpers/repoformerFixture';

/**
 * Against the plain fp32 forward pass (reference.outputs): the conversion's total error, quantization included —
 * the largest allowed difference of a log-probability among the reference's top 64 tokens, and of P(<cc>), per
 * output type. Measured over the 3 variants x 4 prompts: F16 (weights and matmul inputs kept to 11 bits) at most
 * 0.0066 and 8.3e-5; Q8_0 (weights and, in llama.cpp's CPU matmuls, activations rounded to 8 bits) at most 0.19
 * and 1.9e-3, on this fixture's deliberately large random weights.
 */
const TOLERANCE: Record<OutputType, { logProb: number; pCc: number }> = {
  f16: { logProb: 0.02, pCc: 1e-3 },
  q8_0: { logProb: 0.3, pCc: 5e-3 },
};

/**
 * Against the forward pass computed as llama.cpp's CPU backend computes the converted GGUF (reference.ggmlOutputs,
 * tools/convert-fixture/ggml_forward.py: the same roundings and summation order as its x86 AVX512 build). Measured
 * over the 3 variants x 4 prompts, either type: at most 7.5e-6 (the stored log-probabilities have 5 decimals) and
 * 7.2e-7. A single activation rounded the other way moves P(<cc>) here by up to 3e-3 and the log-probabilities by
 * 1e-3 or more, so these bounds catch any departure from the emulated arithmetic.
 */
const GGML_TOLERANCE = { logProb: 1e-4, pCc: 1e-3 };

/**
 * The emulated arithmetic is that of the AVX512 CPU backend variant (skylakex to cooperlake builds: tinyBLAS with 16
 * f16 lanes). On a CPU with AMX or AVX512-FP16 node-llama-cpp loads its sapphirerapids build, whose kernels sum
 * differently (measured there: 4e-3 log-probability on F16, 4e-2 on Q8_0), and an AVX2-only CPU sums in 8 lanes:
 * there only the fp32 bound applies. Linux only (the flags are read from /proc/cpuinfo).
 */
function emulatedBackend(): boolean {
  let flags: Set<string>;
  try {
    flags = new Set(/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].trim().split(/\s+/) ?? []);
  } catch {
    return false;
  }
  return process.arch === 'x64' && flags.has('avx512f') && !flags.has('amx_tile') && !flags.has('avx512_fp16');
}

interface Loaded {
  model: LlamaModel;
  sequence: LlamaContextSequence;
  dispose(): Promise<void>;
}

let llama: Llama;

async function load(modelPath: string): Promise<Loaded> {
  const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  const context = await model.createContext({ contextSize: 256, batchSize: 256, threads: 1, sequences: 1 });
  return {
    model,
    sequence: context.getSequence(),
    dispose: async () => {
      await context.dispose();
      await model.dispose();
    },
  };
}

async function nextProbabilities(sequence: LlamaContextSequence, ids: readonly number[]): Promise<Map<Token, number>> {
  await sequence.clearHistory();
  const tokens = ids as Token[];
  const input = tokens.map((t, i) =>
    i === tokens.length - 1 ? ([t, { generateNext: { probabilities: true } }] as const) : t,
  );
  const result = await sequence.controlledEvaluate(input as Parameters<LlamaContextSequence['controlledEvaluate']>[0]);
  const p = result[tokens.length - 1]?.next.probabilities;
  if (!p) throw new Error('no probabilities');
  return p;
}

/** Largest differences from a reference: of a log-probability among its top tokens, and of P(<cc>). */
function difference(p: Map<Token, number>, ref: ReferenceOutput, ccId: number): { logProb: number; pCc: number } {
  let logProb = 0;
  for (const [id, expected] of ref.top)
    logProb = Math.max(logProb, Math.abs(Math.log(p.get(id as Token) ?? 0) - expected));
  return { logProb, pCc: Math.abs((p.get(ccId as Token) ?? 0) - ref.pCc) };
}

async function greedy(sequence: LlamaContextSequence, ids: readonly number[], steps: number): Promise<number[]> {
  const out: Token[] = [];
  let p = await nextProbabilities(sequence, ids);
  for (let i = 0; i < steps; i++) {
    const next = [...p.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
    out.push(next);
    if (i === steps - 1) break;
    const r = await sequence.controlledEvaluate([[next, { generateNext: { probabilities: true } }]]);
    p = r[0]!.next.probabilities!;
  }
  return out;
}

describe('repogate convert: GPTBigCode checkpoint -> starcoder GGUF', function () {
  this.timeout(120_000);
  let reference: Reference;
  let temp: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    reference = await readReference();
    temp = await tempDir('repogate-convert-');
    const { getLlama } = await importNodeLlamaCpp();
    llama = await getLlama({ gpu: false });
  });
  after(async () => {
    await llama?.dispose();
    await temp?.cleanup();
  });

  const emulated = emulatedBackend();
  if (!emulated)
    it('(the ggml-arithmetic reference applies to AVX512 CPUs without AMX or AVX512-FP16; this one: fp32 bound only)');
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    for (const type of ['f16', 'q8_0'] as const) {
      it(`${variant} -> ${type}: log-probabilities, P(<cc>) and greedy tokens match the torch references`, async () => {
        const dir = path.join(temp.dir, variant);
        await layOut(dir, variant).catch(() => undefined);
        const out = path.join(temp.dir, `${variant}-${type}.gguf`);
        const result = await convertCheckpoint({ dir, out, type });
        assert.equal(result.hasGate, true);
        const header = await readGguf(out);
        assert.equal(header.metadata.get('general.architecture'), 'starcoder');
        // Tied: no output.weight in any variant (the .bin's lm_head shares the embedding's storage).
        assert.equal(
          header.tensors.some((t) => t.name === 'output.weight'),
          false,
        );
        const source = VARIANTS[variant].reference;
        const m = await load(out);
        try {
          for (const [i, prompt] of reference.prompts.entries()) {
            const p = await nextProbabilities(m.sequence, prompt.ids);
            const measured = {
              fp32: difference(p, reference.outputs[source][i], reference.ccId),
              ggml: difference(p, reference.ggmlOutputs[type][source][i], reference.ccId),
            };
            if (process.env.REPOGATE_CONVERT_REPORT) console.log(variant, type, prompt.name, JSON.stringify(measured));
            const checks: ['fp32' | 'ggml', { logProb: number; pCc: number }][] = [['fp32', TOLERANCE[type]]];
            if (emulated) checks.push(['ggml', GGML_TOLERANCE]);
            for (const [against, tolerance] of checks) {
              const { logProb, pCc } = measured[against];
              const where = `${prompt.name} vs the ${against} reference`;
              assert.ok(logProb <= tolerance.logProb, `${where}: log-probability off by ${logProb}`);
              assert.ok(pCc <= tolerance.pCc, `${where}: P(<cc>) off by ${pCc}`);
            }
            const { greedy: expected } = reference.outputs[source][i];
            assert.deepEqual(await greedy(m.sequence, prompt.ids, expected.length), expected, `${prompt.name}: greedy`);
          }
        } finally {
          await m.dispose();
        }
      });
    }
  }

  describe('the converted vocabulary', () => {
    let m: Loaded;
    let source: Tokenizer;
    let plainText: Tokenizer;
    let out: string;

    before(async () => {
      const dir = path.join(temp.dir, 'tokenizer');
      await layOut(dir, 'safetensors');
      out = path.join(temp.dir, 'tokenizer.gguf');
      await convertCheckpoint({ dir, out, type: 'f16' });
      m = await load(out);
      const json = JSON.parse(await fs.readFile(path.join(REPOFORMER_TINY, 'tokenizer.json'), 'utf8'));
      source = new Tokenizer(json, {});
      // The same BPE without added tokens: how a text that spells "<fim_prefix>" must come out as plain text.
      plainText = new Tokenizer({ ...json, added_tokens: [] }, {});
    });
    after(async () => m?.dispose());

    const CODE = [
      'function add(a, b) {\n  return a + b;\n}\n',
      'const x = 12345.678e-9; // numbers 007, 0x1F, 1_000_000\n',
      "if (c == ' ' , x .y) {\r\n\treturn 'it''s';\r\n}\r\n",
      'def área(ñ):\n    return ñ ** 2  # ünïcödé — 😀\n',
      '    \n\n\t  indented   spaces    \n',
      'let s = "<fim_prefix>x<fim_suffix>y<fim_middle>"; // <|endoftext|> <cc> <eof> <cfc_info>\n',
    ];

    it('tokenizes code as the source tokenizer.json does, special-token texts staying plain text', () => {
      for (const text of CODE) {
        const ids = [...m.model.tokenize(text, false)];
        assert.deepEqual(ids, plainText.encode(text).ids, JSON.stringify(text));
        assert.equal(m.model.detokenize(ids), text, `round trip of ${JSON.stringify(text)}`);
      }
    });

    it('parses special tokens like the source when asked to, <cc> and <eof> at the added ids', async () => {
      const text = '<fim_prefix>def f():<fim_suffix>\n<fim_middle>  pass<|endoftext|>';
      assert.deepEqual([...m.model.tokenize(text, true)], source.encode(text).ids);
      const reference = await readReference();
      assert.deepEqual([...m.model.tokenize('<cc><eof>', true)], [reference.ccId, reference.eofId]);
    });

    it('declares the Repoformer family, its gate token and thresholds to RepoGate', async () => {
      const header = await readGguf(out);
      const family = detectFamily({ controlTokens: controlTokens(header), metadata: header.metadata });
      assert.equal(family.family.id, 'repoformer');
      assert.equal(family.hasGate, true);
      const reference = await readReference();
      assert.equal(family.ids.cc, reference.ccId);
      assert.equal(family.ids.eof, reference.eofId);
      assert.equal(header.metadata.get('repogate.gate_token_id'), reference.ccId);
      assert.ok(Math.abs((header.metadata.get('repogate.gate_threshold') as number) - 0.2) < 1e-6);
      assert.ok(Math.abs((header.metadata.get('repogate.gate_threshold_multiline') as number) - 0.15) < 1e-6);
      assert.equal(header.metadata.get('tokenizer.ggml.fim_pre_token_id'), 1);
    });
  });
});
