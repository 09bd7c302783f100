/**
 * Model file checks on real files: the shipped tiny model passes; a text file, a saved web page, an empty file,
 * a GGUF v1 header, a download cut in the header or in the tensor data, a model of an unknown architecture, a
 * model without FIM tokens and a folder each fail with their own code and a message naming the file. The bad
 * copies are then handed to node-llama-cpp to show that the defects are real for llama.cpp and that the GGUF
 * writer of the test helpers writes files llama.cpp loads.
 */
import { strict as assert } from 'assert';
import { execFile } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { promisify } from 'util';
import { controlTokens, readGguf, type GgufHeader, type GgufValue } from '../../src/model/gguf';
import {
  LLAMA_CPP_ARCHITECTURES,
  ModelFileError,
  checkModelFile,
  fimTokens,
  tensorByteSize,
  type ModelFileErrorCode,
} from '../../src/model/modelFile';
import { UNKNOWN_ARCHITECTURE, writeBadModels, type BadModels } from '../helpers/badModels';
import { tempDir } from '../helpers/fixtures';
import { rewriteGguf } from '../helpers/ggufWrite';
import { TINY_MODEL } from '../helpers/tinyModel';

const execFileAsync = promisify(execFile);

/** A header holding only a vocabulary whose tokens are all typed NORMAL (1). */
function vocabulary(tokens: string[]): GgufHeader {
  const metadata = new Map<string, GgufValue>([
    ['tokenizer.ggml.tokens', tokens],
    ['tokenizer.ggml.token_type', tokens.map(() => 1)],
  ]);
  return { version: 3, metadata, metadataTypes: new Map(), tensors: [], dataOffset: 0, fileSize: 0 };
}

async function rejection(file: string, code: ModelFileErrorCode): Promise<ModelFileError> {
  const error: unknown = await checkModelFile(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof ModelFileError, `${file}: expected a ModelFileError, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  assert.ok(error.message.startsWith(file), `names the file: ${error.message}`);
  assert.ok(error.hint.length > 0 && error.message.endsWith(error.hint), `ends with its hint: ${error.message}`);
  return error;
}

describe('model file checks', function () {
  this.timeout(60_000);
  let bad: BadModels;

  before(async () => {
    bad = await writeBadModels();
  });
  after(async () => {
    await bad?.cleanup();
  });

  it('accepts the tiny model: llama, context 1024, its control tokens', async () => {
    const info = await checkModelFile(TINY_MODEL);
    assert.equal(info.architecture, 'llama');
    assert.equal(info.name, 'repogate-tiny');
    assert.equal(info.contextLength, 1024);
    assert.equal(info.fileSize, (await fs.stat(TINY_MODEL)).size);
    assert.deepEqual(
      [...controlTokens(info.header)],
      [
        ['<|endoftext|>', 0],
        ['<fim_prefix>', 1],
        ['<fim_suffix>', 2],
        ['<fim_middle>', 3],
        ['<eof>', 4],
        ['<cc>', 5],
      ],
    );
    assert.deepEqual(fimTokens(info.header), { prefix: 1, suffix: 2, middle: 3 });
  });

  it('reads the whole header: typed metadata, vocabulary, tensors laid out to the end of the file', async () => {
    const header = await readGguf(TINY_MODEL);
    assert.equal(header.version, 3);
    assert.equal((header.metadata.get('tokenizer.ggml.tokens') as string[]).length, 4096);
    assert.equal((header.metadata.get('tokenizer.ggml.merges') as string[]).length, 3834);
    assert.deepEqual(header.metadataTypes.get('tokenizer.ggml.token_type'), { type: 9, elementType: 5 });
    assert.equal(header.metadata.get('tokenizer.ggml.add_bos_token'), false);
    assert.equal(header.tensors.length, 2 + 4 * 9, 'token_embd, output_norm and nine tensors a layer');
    assert.deepEqual(header.tensors[0], { name: 'token_embd.weight', dims: [256, 4096], type: 1, offset: 0n });
    assert.equal(header.dataOffset % 32, 0);
    const last = header.tensors[header.tensors.length - 1];
    assert.equal(header.dataOffset + Number(last.offset) + tensorByteSize(last)!, header.fileSize);
  });

  it('sizes quantized tensors by their ggml blocks', () => {
    assert.equal(tensorByteSize({ type: 2, dims: [4096, 11008] }), (4096 / 32) * 18 * 11008); // Q4_0
    assert.equal(tensorByteSize({ type: 12, dims: [4096, 4096] }), (4096 / 256) * 144 * 4096); // Q4_K
    assert.equal(tensorByteSize({ type: 30, dims: [896] }), 896 * 2); // BF16
    assert.equal(tensorByteSize({ type: 999, dims: [1] }), undefined);
  });

  it('finds FIM tokens by their text when the metadata has no ids, and only marker-shaped tokens', () => {
    const codeLlama = vocabulary(['<unk>', '<s>', '</s>', '▁<PRE>', '▁<SUF>', '▁<MID>', '▁<EOT>', '▁<', '<0x0A>']);
    assert.deepEqual(fimTokens(codeLlama), { prefix: 3, suffix: 4, middle: 5 });
    const deepSeek = vocabulary([
      '<｜begin▁of▁sentence｜>',
      '<｜fim▁hole｜>',
      '<｜fim▁begin｜>',
      '<｜fim▁end｜>',
      'Ġ<',
      '<=',
    ]);
    assert.deepEqual(fimTokens(deepSeek), { prefix: 2, suffix: 1, middle: 3 });
    assert.deepEqual(fimTokens(vocabulary(['[INST]', '[SUFFIX]', '[PREFIX]'])), {
      prefix: 2,
      suffix: 1,
      middle: undefined,
    });
    assert.deepEqual(
      [
        ...controlTokens(
          vocabulary(['<s>', 'Ġ<div>', '<0x0A>', '<=', '[i]', '<|im_start|>', '[SEP]', 'plain', '<|fim_pad|>']),
        ),
      ],
      [
        ['<s>', 0],
        ['<|im_start|>', 5],
        ['[SEP]', 6],
        ['<|fim_pad|>', 8],
      ],
    );
  });

  it('rejects a text file named .gguf (not-gguf), quoting how it starts', async () => {
    const e = await rejection(bad.textFile, 'not-gguf');
    assert.match(e.message, /is not a GGUF model file \(it is a text file starting with 'TODO:'\)/);
  });

  it('rejects a saved web page (not-gguf) and says to download the file, not the page', async () => {
    const e = await rejection(bad.htmlPage, 'not-gguf');
    assert.ok(
      e.message.startsWith(`${bad.htmlPage} is not a GGUF model file (it starts with '<!DOCTYPE').`),
      e.message,
    );
    assert.match(e.hint, /Download the \.gguf file itself, not the web page/);
  });

  it('rejects an empty file and a file cut inside its header (truncated)', async () => {
    assert.match((await rejection(bad.empty, 'truncated')).message, /is empty \(0 bytes\)/);
    const e = await rejection(bad.truncatedHeader, 'truncated');
    assert.match(e.message, /is cut short: it ends after .*, inside its GGUF header \(in /);
    assert.match(e.hint, /download it again/);
  });

  it('rejects a download that stopped inside the tensor data (truncated), naming the first tensor cut off', async () => {
    const e = await rejection(bad.truncatedData, 'truncated');
    assert.match(
      e.message,
      /is incomplete: it is 4\.\d MB but its tensors need 8\.7 MB \(tensor 'blk\.1\.ffn_gate\.weight' is cut off\)/,
    );
  });

  it('rejects GGUF version 1 (unsupported-version)', async () => {
    const e = await rejection(bad.versionOne, 'unsupported-version');
    assert.match(e.message, /is a GGUF version 1 file, which llama\.cpp no longer reads/);
  });

  it("rejects an architecture llama.cpp does not know (unsupported-architecture) from llama.cpp's own list", async () => {
    assert.deepEqual([...LLAMA_CPP_ARCHITECTURES], [...LLAMA_CPP_ARCHITECTURES].sort(), 'sorted');
    for (const known of ['llama', 'qwen2', 'qwen3', 'starcoder2', 'deepseek2', 'gemma3', 'codeshell']) {
      assert.ok(LLAMA_CPP_ARCHITECTURES.includes(known), known);
    }
    assert.ok(!LLAMA_CPP_ARCHITECTURES.includes(UNKNOWN_ARCHITECTURE));
    const e = await rejection(bad.unknownArchitecture, 'unsupported-architecture');
    assert.match(
      e.message,
      /is a 'repogate-llama' model, an architecture that the llama\.cpp bundled with node-llama-cpp 3\.21\.1 cannot run/,
    );
  });

  it('rejects a model without FIM tokens (no-fim)', async () => {
    const e = await rejection(bad.noFim, 'no-fim');
    assert.match(e.message, /has no fill-in-the-middle tokens \(neither tokenizer\.ggml\.fim_pre_token_id/);
    assert.match(e.hint, /trained for fill-in-the-middle/);
  });

  it('rejects a missing file and a folder (missing)', async () => {
    const gone = await rejection(path.join(bad.dir, 'no-such-model.gguf'), 'missing');
    assert.match(gone.message, /does not exist/);
    const folder = await rejection(bad.directory, 'missing');
    assert.match(folder.message, /is a folder, not a model file\. It contains repogate-tiny\.gguf\./);
  });

  it('writes GGUFs byte for byte: rewriting the fixture unchanged reproduces it', async () => {
    const temp = await tempDir();
    try {
      const copy = path.join(temp.dir, 'copy.gguf');
      await rewriteGguf(TINY_MODEL, copy, (kvs) => kvs);
      assert.ok((await fs.readFile(copy)).equals(await fs.readFile(TINY_MODEL)));
    } finally {
      await temp.cleanup();
    }
  });

  it('keeps the rewritten copies valid apart from their one defect', async () => {
    const original = await readGguf(TINY_MODEL);
    const fixture = await fs.readFile(TINY_MODEL);
    const sameData = async (file: string, dataOffset: number): Promise<boolean> =>
      (await fs.readFile(file)).subarray(dataOffset).equals(fixture.subarray(original.dataOffset));

    const arch = await readGguf(bad.unknownArchitecture);
    assert.equal(arch.metadata.get('general.architecture'), UNKNOWN_ARCHITECTURE);
    assert.equal(arch.metadata.get(`${UNKNOWN_ARCHITECTURE}.context_length`), 1024);
    assert.ok(![...arch.metadata.keys()].some((k) => k.startsWith('llama.')));
    assert.deepEqual(arch.tensors, original.tensors);
    assert.ok(await sameData(bad.unknownArchitecture, arch.dataOffset));

    const noFim = await readGguf(bad.noFim);
    assert.ok(![...noFim.metadata.keys()].some((k) => k.includes('fim')));
    assert.deepEqual(fimTokens(noFim), { prefix: undefined, suffix: undefined, middle: undefined });
    assert.equal(controlTokens(noFim).get('<hole_prefix>'), 1);
    assert.equal(noFim.dataOffset % 32, 0);
    assert.ok(await sameData(bad.noFim, noFim.dataOffset));
  });

  describe('the same files in node-llama-cpp (CPU)', () => {
    let truncated: LoadResult;
    let unknown: LoadResult;
    let noFim: LoadResult;

    before(async () => {
      [truncated, unknown, noFim] = await loadInChild([
        { modelPath: bad.truncatedData },
        { modelPath: bad.unknownArchitecture },
        { modelPath: bad.noFim, texts: ['<hole_prefix>', '<cc>'] },
      ]);
    });

    it('rejects the download cut in the tensor data, at the tensor the check names', () => {
      assert.equal(truncated.loaded, false);
      assert.ok(
        truncated.logs.some((l) => /tensor 'blk\.1\.ffn_gate\.weight' data is not within the file bounds/.test(l)),
        truncated.logs.join(''),
      );
    });

    it('rejects the unknown architecture', () => {
      assert.equal(unknown.loaded, false);
      assert.ok(
        unknown.logs.some((l) => /unknown model architecture: 'repogate-llama'/.test(l)),
        unknown.logs.join(''),
      );
    });

    it('loads the no-FIM copy, which has no infill tokens but keeps its other control tokens', () => {
      assert.equal(noFim.loaded, true, noFim.logs.join(''));
      assert.deepEqual(noFim.infill, { prefix: null, suffix: null });
      assert.deepEqual(noFim.tokens, { '<hole_prefix>': [1], '<cc>': [5] });
    });
  });
});

interface LoadRequest {
  modelPath: string;
  /** Texts to tokenize with specialTokens = true once loaded. */
  texts?: string[];
}

interface LoadResult {
  loaded: boolean;
  /** llama.cpp's and node-llama-cpp's log lines during this load. */
  logs: string[];
  infill?: { prefix: number | null; suffix: number | null };
  tokens?: Record<string, number[]>;
}

/**
 * Loads models one after the other with node-llama-cpp in a child process, on the CPU, and reports what
 * happened to each. A child because (1) llama.cpp's log lines, which say why a load failed, reach only the first
 * Llama created in a process, and (2) after a rejected loadModel, node-llama-cpp 3.21.1's llama.dispose() never
 * resolves once the failed model object has been garbage-collected (its dispose guard is never released); the
 * child just exits.
 */
async function loadInChild(requests: LoadRequest[]): Promise<LoadResult[]> {
  const script = `
    const [module, requests] = process.argv.slice(1);
    let logs = [];
    // Log lines arrive asynchronously from the native side: wait until none came for 100 ms.
    const settle = async () => {
      for (let seen = -1; seen !== logs.length;) {
        seen = logs.length;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    require(module).importNodeLlamaCpp().then(async ({ getLlama, LlamaLogLevel }) => {
      const llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.warn, logger: (_level, line) => logs.push(line) });
      const results = [];
      for (const { modelPath, texts = [] } of JSON.parse(requests)) {
        await settle();
        logs = [];
        const model = await llama.loadModel({ modelPath, gpuLayers: 0 }).catch(() => undefined);
        await settle();
        if (!model) {
          results.push({ loaded: false, logs });
          continue;
        }
        const { prefix, suffix } = model.tokens.infill;
        const tokens = Object.fromEntries(texts.map((t) => [t, [...model.tokenize(t, true)]]));
        results.push({ loaded: true, logs, infill: { prefix, suffix }, tokens });
        await model.dispose();
      }
      process.stdout.write(JSON.stringify(results));
      process.exit(0);
    });`;
  const { stdout } = await execFileAsync(
    process.execPath,
    ['-e', script, require.resolve('../../src/model/nodeLlamaCpp'), JSON.stringify(requests)],
    { timeout: 50_000 },
  );
  return JSON.parse(stdout) as LoadResult[];
}
