/**
 * The tiny GPTBigCode checkpoint made by tools/convert-fixture/make_fixture.py (test/fixtures/repoformer-tiny) and
 * the reference outputs of its torch forward pass, with helpers that lay out one weights variant in a folder.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { FIXTURES } from './fixtures';

export const REPOFORMER_TINY = path.join(FIXTURES, 'repoformer-tiny');

/** Each weights variant of the fixture: its files and the dtype of the reference outputs that fit it. */
export const VARIANTS = {
  bin: { files: ['pytorch_model.bin'], reference: 'f32' },
  safetensors: { files: ['model.safetensors'], reference: 'bf16' },
  sharded: {
    files: ['pytorch_model.bin.index.json', 'pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'],
    reference: 'f16',
  },
} as const;
export type Variant = keyof typeof VARIANTS;

export const METADATA_FILES = ['config.json', 'tokenizer.json', 'added_tokens.json'];

export interface ReferenceOutput {
  name: string;
  pCc: number;
  /** [token id, log-probability] of the most probable tokens, best first. */
  top: [number, number][];
  greedy: number[];
  greedyMargins: number[];
}

export type SourceDtype = 'f32' | 'f16' | 'bf16';

export interface Reference {
  ccId: number;
  eofId: number;
  vocabSize: number;
  prompts: { name: string; ids: number[] }[];
  /** A plain fp32 forward pass on each source file's weights. */
  outputs: Record<SourceDtype, ReferenceOutput[]>;
  /** The same, computed as llama.cpp's CPU backend computes the GGUF converted to each output type. */
  ggmlOutputs: Record<'f16' | 'q8_0', Record<SourceDtype, ReferenceOutput[]>>;
}

export async function readReference(): Promise<Reference> {
  return JSON.parse(await fs.readFile(path.join(REPOFORMER_TINY, 'reference.json'), 'utf8')) as Reference;
}

/** Copies the metadata files and one variant's weights into dir (a checkpoint folder as the hub serves it). */
export async function layOut(dir: string, variant: Variant, files: readonly string[] = METADATA_FILES): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (const f of [...files, ...VARIANTS[variant].files])
    await fs.copyFile(path.join(REPOFORMER_TINY, f), path.join(dir, f));
}
