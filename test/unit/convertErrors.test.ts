/**
 * What `repogate convert` refuses, each with its own error and no output file left behind: pickles that would run
 * code, truncated weights, a missing shard, a config of another architecture, a tokenizer of another size; and the
 * number formats it writes (f16 rounding, ggml's Q8_0 blocks).
 */
import { strict as assert } from 'assert';
import { execFile } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { promisify } from 'util';
import { CheckpointError, convertCheckpoint, type CheckpointErrorCode } from '../../src/convert';
import { encode, f32ToF16 } from '../../src/convert/numbers';
import { tempDir } from '../helpers/fixtures';
import { layOut, METADATA_FILES, REPOFORMER_TINY } from '../helpers/repoformerFixture';

/**
 * The torch zip rewritten with zip64 records, as torch writes archives past 4 GB (the 1B checkpoint): every central
 * directory entry's sizes and offset saturated and given in a zip64 extra field, and the end record pointing to a
 * zip64 end record through its locator. Local headers and data stay as they are.
 */
function toZip64(zip: Buffer): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  const dirOffset = zip.readUInt32LE(eocd + 16);
  const entries: Buffer[] = [];
  let p = dirOffset;
  for (let i = 0; i < count; i++) {
    const [nameLength, extraLength, commentLength] = [28, 30, 32].map((o) => zip.readUInt16LE(p + o));
    const fixed = Buffer.from(zip.subarray(p, p + 46));
    const extra64 = Buffer.alloc(28);
    extra64.writeUInt16LE(1, 0);
    extra64.writeUInt16LE(24, 2);
    extra64.writeBigUInt64LE(BigInt(fixed.readUInt32LE(24)), 4); // uncompressed, compressed, local header offset
    extra64.writeBigUInt64LE(BigInt(fixed.readUInt32LE(20)), 12);
    extra64.writeBigUInt64LE(BigInt(fixed.readUInt32LE(42)), 20);
    for (const o of [20, 24, 42]) fixed.writeUInt32LE(0xffffffff, o);
    fixed.writeUInt16LE(extraLength + extra64.length, 30);
    const name = zip.subarray(p + 46, p + 46 + nameLength);
    const rest = zip.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength + commentLength);
    entries.push(fixed, name, extra64, rest);
    p += 46 + nameLength + extraLength + commentLength;
  }
  const dir = Buffer.concat(entries);
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(dir.length), 40);
  record.writeBigUInt64LE(BigInt(dirOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(dirOffset + dir.length), 8);
  locator.writeUInt32LE(1, 16);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12);
  end.writeUInt32LE(0xffffffff, 16);
  return Buffer.concat([zip.subarray(0, dirOffset), dir, record, locator, end]);
}

/** What the malicious fixtures would touch if anything unpickled them the Python way (make_fixture.py MARKER). */
const MARKER = '/tmp/repogate-convert-pwned';
const CLI = path.resolve(__dirname, '../../src/cli.js');

describe('repogate convert: refusals and number formats', function () {
  this.timeout(60_000);
  let temp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;

  beforeEach(async () => {
    temp = await tempDir('repogate-convert-err-');
  });
  afterEach(async () => temp.cleanup());

  /** A checkpoint folder made by `prepare`, converted; asserts the error code and that no output exists. */
  async function expectRefusal(prepare: (dir: string) => Promise<void>, code: CheckpointErrorCode, pattern: RegExp) {
    const dir = path.join(temp.dir, `case-${n++}`);
    await prepare(dir);
    const out = path.join(temp.dir, 'out', 'model.gguf');
    await assert.rejects(convertCheckpoint({ dir, out }), (error: unknown) => {
      assert.ok(error instanceof CheckpointError, String(error));
      assert.equal(error.code, code, error.message);
      assert.match(error.message, pattern);
      return true;
    });
    const left = await fs.readdir(path.dirname(out)).catch(() => []);
    assert.deepEqual(left, [], 'no output or partial file');
  }

  for (const [file, global] of [
    ['os-system.bin', 'posix.system'],
    ['builtins-eval.bin', '__builtin__.eval'],
  ]) {
    it(`refuses a pickle that calls ${global}, and nothing runs`, async () => {
      await fs.rm(MARKER, { force: true });
      await expectRefusal(
        async (dir) => {
          await layOut(dir, 'bin');
          await fs.copyFile(path.join(REPOFORMER_TINY, 'malicious', file), path.join(dir, 'pytorch_model.bin'));
        },
        'unsafe-pickle',
        new RegExp(`${global.replace('.', '\\.')}, which a weights file never needs: refused, nothing was run`),
      );
      await assert.rejects(fs.stat(MARKER), 'the command in the pickle did not run');
    });
  }

  it('reports a truncated .bin', async () => {
    await expectRefusal(
      async (dir) => {
        await layOut(dir, 'bin');
        const file = path.join(dir, 'pytorch_model.bin');
        await fs.truncate(file, Math.floor((await fs.stat(file)).size * 0.6));
      },
      'truncated',
      /pytorch_model\.bin .*truncated/,
    );
  });

  it('reports a truncated .safetensors', async () => {
    await expectRefusal(
      async (dir) => {
        await layOut(dir, 'safetensors');
        const file = path.join(dir, 'model.safetensors');
        await fs.truncate(file, (await fs.stat(file)).size - 1000);
      },
      'truncated',
      /model\.safetensors is truncated/,
    );
  });

  it('reports a missing shard by name before writing anything', async () => {
    await expectRefusal(
      async (dir) => {
        await layOut(dir, 'sharded');
        await fs.rm(path.join(dir, 'pytorch_model-00002-of-00002.bin'));
      },
      'missing-file',
      /Shard pytorch_model-00002-of-00002\.bin listed in pytorch_model\.bin\.index\.json is missing/,
    );
  });

  it('refuses a config of another architecture', async () => {
    await expectRefusal(
      async (dir) => {
        await layOut(dir, 'bin');
        const config = JSON.parse(await fs.readFile(path.join(dir, 'config.json'), 'utf8'));
        await fs.writeFile(
          path.join(dir, 'config.json'),
          JSON.stringify({ ...config, model_type: 'llama', architectures: ['LlamaForCausalLM'] }),
        );
      },
      'architecture',
      /describes a llama model \(LlamaForCausalLM\), not GPTBigCode/,
    );
  });

  it('refuses a tokenizer whose size does not match the embedding', async () => {
    await expectRefusal(
      async (dir) => {
        await layOut(dir, 'bin');
        const file = path.join(dir, 'tokenizer.json');
        const json = JSON.parse(await fs.readFile(file, 'utf8'));
        const vocab = Object.entries(json.model.vocab as Record<string, number>).sort((a, b) => a[1] - b[1]);
        json.model.vocab = Object.fromEntries(vocab.slice(0, -5));
        await fs.writeFile(file, JSON.stringify(json));
        await fs.rm(path.join(dir, 'added_tokens.json'));
      },
      'tokenizer',
      /has \d+ tokens but the model's embedding has \d+ rows/,
    );
  });

  it('adds <cc> and <eof> when the tokenizer files stop at the base vocabulary (as the 16b files may)', async () => {
    const dir = path.join(temp.dir, 'base-only');
    await layOut(
      dir,
      'safetensors',
      METADATA_FILES.filter((f) => f !== 'added_tokens.json'),
    );
    const result = await convertCheckpoint({ dir, out: path.join(temp.dir, 'base.gguf'), type: 'f16' });
    assert.equal(result.hasGate, true);
  });

  it('the CLI converts, and reports a refusal with exit code 1 and the message', async () => {
    const dir = path.join(temp.dir, 'cli');
    await layOut(dir, 'sharded');
    const out = path.join(temp.dir, 'cli.gguf');
    const ok = await promisify(execFile)(process.execPath, [CLI, 'convert', dir, '--out', out, '--type', 'f16']);
    assert.match(ok.stderr, /wrote .*cli\.gguf: 28 tensors, .* with the <cc> gate/);
    await fs.copyFile(path.join(REPOFORMER_TINY, 'malicious', 'os-system.bin'), path.join(dir, 'pytorch_model.bin'));
    await fs.rm(path.join(dir, 'pytorch_model.bin.index.json'));
    const failed = await promisify(execFile)(process.execPath, [CLI, 'convert', dir, '--out', `${out}.2`]).then(
      () => assert.fail('the CLI accepted a malicious pickle'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /repogate: .*posix\.system, which a weights file never needs: refused/);
  });

  it('stops when cancelled, leaving no file', async () => {
    const dir = path.join(temp.dir, 'cancel');
    await layOut(dir, 'bin');
    const out = path.join(temp.dir, 'out', 'cancelled.gguf');
    const abort = new AbortController();
    const converting = convertCheckpoint({ dir, out, signal: abort.signal, onProgress: () => abort.abort() });
    await assert.rejects(
      converting,
      (error: unknown) => error instanceof CheckpointError && error.code === 'cancelled',
    );
    assert.deepEqual(await fs.readdir(path.dirname(out)), []);
  });

  it('reads a .bin whose zip uses zip64 records (torch past 4 GB) into the same GGUF', async () => {
    const plain = path.join(temp.dir, 'plain');
    const zip64 = path.join(temp.dir, 'zip64');
    await layOut(plain, 'bin');
    await layOut(zip64, 'bin');
    const bin = path.join(zip64, 'pytorch_model.bin');
    await fs.writeFile(bin, toZip64(await fs.readFile(bin)));
    await convertCheckpoint({ dir: plain, out: path.join(temp.dir, 'plain.gguf'), name: 'x' });
    await convertCheckpoint({ dir: zip64, out: path.join(temp.dir, 'zip64.gguf'), name: 'x' });
    const [a, b] = await Promise.all(['plain.gguf', 'zip64.gguf'].map((f) => fs.readFile(path.join(temp.dir, f))));
    assert.ok(a.equals(b));
  });

  it('rounds f32 to f16 to nearest even, with subnormals and overflow', () => {
    assert.equal(f32ToF16(1), 0x3c00);
    assert.equal(f32ToF16(-2), 0xc000);
    assert.equal(f32ToF16(65504), 0x7bff);
    assert.equal(f32ToF16(65520), 0x7c00); // halfway to the next power: rounds up to infinity
    assert.equal(f32ToF16(2 ** -24), 0x0001);
    assert.equal(f32ToF16(2 ** -25), 0x0000); // halfway between 0 and the smallest subnormal: even is 0
    assert.equal(f32ToF16(3 * 2 ** -26), 0x0001);
    assert.equal(f32ToF16(1 + 2 ** -11), 0x3c00); // halfway, even mantissa stays
    assert.equal(f32ToF16(1 + 3 * 2 ** -11), 0x3c02); // halfway, odd mantissa rounds up
  });

  it('writes Q8_0 blocks as ggml does: f16 scale amax/127, then 32 values rounded half away from zero', () => {
    const x = new Float32Array(64);
    x[0] = 127;
    x[1] = 2.5;
    x[2] = -2.5;
    x[3] = -127;
    x[4] = 0.49;
    const out = Buffer.alloc(68);
    assert.equal(encode('Q8_0', x, 64, out), 68);
    assert.equal(out.readUInt16LE(0), 0x3c00); // d = 1
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((i) => out.readInt8(2 + i)),
      [127, 3, -3, -127, 0],
    );
    assert.equal(out.readUInt16LE(34), 0, 'an all-zero block has scale 0');
  });
});
