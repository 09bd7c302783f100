/**
 * A GPTBigCode checkpoint of any shape with pseudo-random weights, written as one model.safetensors in 4 MB steps
 * (so that making a multi-gigabyte one costs little memory), with the tiny fixture's tokenizer files: for the
 * resumed-download test (a weights file past the downloader's 5 MiB chunk) and the converter's memory measurement.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { REPOFORMER_TINY } from './repoformerFixture';

export interface SyntheticShape {
  nEmbd: number;
  nLayer: number;
  nPositions: number;
  nHead: number;
}

const STEP_ELEMENTS = 1 << 20;

/** The fixture's vocabulary size: base tokens plus the two added ones. */
async function fixtureVocabSize(): Promise<number> {
  const config = JSON.parse(await fs.readFile(path.join(REPOFORMER_TINY, 'config.json'), 'utf8'));
  return config.vocab_size as number;
}

/** Writes config.json, tokenizer.json, added_tokens.json and model.safetensors into dir, and returns their sizes. */
export async function writeSyntheticCheckpoint(
  dir: string,
  shape: SyntheticShape,
  seed = 1,
): Promise<{ largestTensorBytes: number; fileBytes: number }> {
  await fs.mkdir(dir, { recursive: true });
  const vocab = await fixtureVocabSize();
  const { nEmbd: d, nLayer, nPositions, nHead } = shape;
  const qkv = d + 2 * (d / nHead);
  const inner = 4 * d;
  const tensors: [string, number[]][] = [
    ['transformer.wte.weight', [vocab, d]],
    ['transformer.wpe.weight', [nPositions, d]],
  ];
  for (let i = 0; i < nLayer; i++) {
    const p = `transformer.h.${i}.`;
    tensors.push(
      [`${p}ln_1.weight`, [d]],
      [`${p}ln_1.bias`, [d]],
      [`${p}attn.c_attn.weight`, [qkv, d]],
      [`${p}attn.c_attn.bias`, [qkv]],
      [`${p}attn.c_proj.weight`, [d, d]],
      [`${p}attn.c_proj.bias`, [d]],
      [`${p}ln_2.weight`, [d]],
      [`${p}ln_2.bias`, [d]],
      [`${p}mlp.c_fc.weight`, [inner, d]],
      [`${p}mlp.c_fc.bias`, [inner]],
      [`${p}mlp.c_proj.weight`, [d, inner]],
      [`${p}mlp.c_proj.bias`, [d]],
    );
  }
  tensors.push(['transformer.ln_f.weight', [d]], ['transformer.ln_f.bias', [d]]);
  const header: Record<string, unknown> = {};
  let offset = 0;
  let largest = 0;
  for (const [name, s] of tensors) {
    const bytes = s.reduce((a, b) => a * b, 1) * 4;
    header[name] = { dtype: 'F32', shape: s, data_offsets: [offset, offset + bytes] };
    offset += bytes;
    largest = Math.max(largest, bytes);
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const fh = await fs.open(path.join(dir, 'model.safetensors'), 'w');
  try {
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    await fh.write(length);
    await fh.write(json);
    const values = new Float32Array(STEP_ELEMENTS);
    let state = seed >>> 0 || 1;
    for (const [name, s] of tensors) {
      const norm = /ln_\d|ln_f/.test(name) && name.endsWith('.weight');
      let left = s.reduce((a, b) => a * b, 1);
      while (left > 0) {
        const n = Math.min(left, STEP_ELEMENTS);
        for (let i = 0; i < n; i++) {
          state ^= state << 13;
          state ^= state >>> 17;
          state ^= state << 5;
          // Uniform in [-0.05, 0.05): small weights keep the random network's activations in range.
          values[i] = norm ? 1 : ((state >>> 0) / 2 ** 32 - 0.5) * 0.1;
        }
        await fh.write(Buffer.from(values.buffer, 0, n * 4));
        left -= n;
      }
    }
  } finally {
    await fh.close();
  }
  const config = JSON.parse(await fs.readFile(path.join(REPOFORMER_TINY, 'config.json'), 'utf8'));
  await fs.writeFile(
    path.join(dir, 'config.json'),
    JSON.stringify(
      {
        ...config,
        n_embd: d,
        n_head: nHead,
        n_layer: nLayer,
        n_positions: nPositions,
        n_inner: inner,
      },
      null,
      2,
    ),
  );
  for (const f of ['tokenizer.json', 'added_tokens.json'])
    await fs.copyFile(path.join(REPOFORMER_TINY, f), path.join(dir, f));
  return { largestTensorBytes: largest, fileBytes: 8 + json.length + offset };
}
