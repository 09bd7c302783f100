/**
 * Timing-only shape models: a small shape written by the real writer loads in node-llama-cpp with the demo
 * model's tokenizer padded to its vocabulary, says it is timing-only, is reused from the cache, and generates
 * text tokens (not padding or stop tokens) through the FIM session.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { ensureShapeModel, familyTokens, findShape, shapeBytes, SHAPES } from '../../src/bench/shapeModel';
import { CodeModel } from '../../src/model/codeModel';
import { readGguf } from '../../src/model/gguf';
import { tempDir } from '../helpers/fixtures';
import { smallShape } from '../helpers/smallShape';
import { TINY_MODEL } from '../helpers/tinyModel';

const SMALL = smallShape('test-small', 'repoformer', 2048);

describe('timing-only shape models', function () {
  this.timeout(120_000);
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => ({ dir, cleanup } = await tempDir()));
  after(async () => cleanup?.());

  it('sizes the real shapes as their Q8_0 files (Qwen2.5-Coder-0.5B about 0.5 GB, 7B about 8 GB)', () => {
    assert.ok(Math.abs(shapeBytes(findShape('qwen2.5-coder-0.5b')) / 1e9 - 0.53) < 0.03);
    assert.ok(Math.abs(shapeBytes(findShape('qwen2.5-coder-7b')) / 1e9 - 8.1) < 0.2);
    assert.throws(() => findShape('gpt-5'), /unknown shape "gpt-5"; known: qwen2.5-coder-0.5b/);
  });

  it('writes a GGUF with the shape, the padded tokenizer and the timing-only label, and reuses it', async () => {
    const file = await ensureShapeModel(SMALL, TINY_MODEL, path.join(dir, 'small.gguf'));
    const header = await readGguf(file);
    const meta = header.metadata;
    assert.equal(meta.get('repogate.timing_only'), true);
    assert.match(String(meta.get('general.description')), /^TIMING ONLY/);
    assert.equal((meta.get('tokenizer.ggml.tokens') as string[]).length, SMALL.vocab);
    assert.equal(meta.get('llama.vocab_size'), SMALL.vocab);
    assert.equal(meta.get('repogate.format'), 'repoformer');
    assert.equal(meta.get('repogate.train.steps'), undefined);
    assert.deepEqual(header.tensors.find((t) => t.name === 'blk.1.ffn_down.weight')?.dims, [256, 128]);
    assert.equal(header.fileSize, Number(header.tensors.at(-1)!.offset) + header.dataOffset + ((128 * 5000) / 32) * 34);
    const { mtimeMs } = await fs.stat(file);
    await ensureShapeModel(SMALL, TINY_MODEL, file);
    assert.equal((await fs.stat(file)).mtimeMs, mtimeMs, 'a current file is not rewritten');
  });

  it("carries each real model's family: its special tokens, so the engine builds that family's prompt", async () => {
    const expected = new Map([
      ['qwen2.5-coder-0.5b', 'qwen2.5-coder'],
      ['repoformer-1b', 'repoformer'],
      ['starcoder2-3b', 'starcoder2'],
      ['deepseek-coder-1.3b', 'deepseek-coder'],
    ]);
    for (const [name, family] of expected) assert.equal(findShape(name).family, family, name);
    assert.ok(SHAPES.every((s) => s.name.startsWith(s.family.replace(/-coder$/, ''))));
    const demo = ['<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<eof>', '<cc>', 'a'];
    assert.deepEqual(familyTokens(demo, 'qwen2.5-coder').slice(0, 6), [
      '<|endoftext|>',
      '<|fim_prefix|>',
      '<|fim_suffix|>',
      '<|fim_middle|>',
      '<|file_sep|>',
      '<|repo_name|>',
    ]);
    assert.deepEqual(familyTokens(demo, 'starcoder2').slice(4, 7), ['<file_sep>', '<repo_name>', 'a']);
    assert.deepEqual(familyTokens(demo, 'repoformer'), demo);
    const file = await ensureShapeModel(
      { ...SMALL, name: 'test-qwen', family: 'qwen2.5-coder' },
      TINY_MODEL,
      path.join(dir, 'qwen.gguf'),
    );
    const meta = (await readGguf(file)).metadata;
    const tokens = meta.get('tokenizer.ggml.tokens') as string[];
    assert.ok(tokens.includes('<|file_sep|>') && !tokens.includes('<cc>') && !tokens.includes('<fim_prefix>'));
    assert.equal(meta.get('repogate.format'), undefined, "no Repoformer layout in a Qwen shape's metadata");
    assert.equal(meta.get('repogate.shape_family'), 'qwen2.5-coder');
    const model = await CodeModel.load({ modelPath: file, threads: 1, gpuLayers: 0 });
    try {
      assert.equal(model.info.family.family.id, 'qwen2.5-coder');
      assert.equal(model.info.family.hasGate, false);
    } finally {
      await model.dispose();
    }
  });

  it('loads in node-llama-cpp and generates text tokens through the FIM session', async () => {
    const file = await ensureShapeModel(SMALL, TINY_MODEL, path.join(dir, 'small.gguf'));
    const model = await CodeModel.load({ modelPath: file, threads: 1, gpuLayers: 0 });
    try {
      assert.equal(model.info.family.family.id, 'repogate-tiny');
      assert.equal(model.info.totalLayers, SMALL.layers + 1);
      const prompt = model.promptTokens([
        { special: 'fimPrefix' },
        { text: 'const x = ' },
        { special: 'fimSuffix' },
        { text: ';\n' },
        { special: 'eof' },
        { special: 'fimMiddle' },
      ]);
      const result = await model.session.generate(prompt, { maxTokens: 12, stopIds: model.info.family.stopIds });
      assert.equal(result.stoppedBy, 'max-tokens');
      assert.ok(
        result.tokens.every((t) => t < 4096 && t > 5),
        `text tokens only: ${result.tokens.join(',')}`,
      );
      assert.ok(result.text.length > 0);
    } finally {
      await model.dispose();
    }
  });
});
