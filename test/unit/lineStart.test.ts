/**
 * Line starts of one editing stretch on a model with Qwen2.5-Coder's layout (a small timing shape carrying its
 * tokens: the cross-file context as `<|file_sep|>` files before the current file): the context stays the same
 * unless retrieval finds clearly better, and the left window stays anchored, so a new line only appends to the
 * prompt the KV cache holds.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { ensureShapeModel } from '../../src/bench/shapeModel';
import { CompletionEngine, type CompletionRequest } from '../../src/engine/completionEngine';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { CodeModel } from '../../src/model/codeModel';
import type { GenerateOptions, GenerateResult } from '../../src/model/tokenModel';
import { retrieve } from '../../src/retrieval/retrieve';
import type { RetrievalRequest, RetrievalResult, Snippet } from '../../src/retrieval/types';
import { SHOP, tempDir } from '../helpers/fixtures';
import { smallShape } from '../helpers/smallShape';
import { TINY_MODEL } from '../helpers/tinyModel';

const QWEN_SMALL = smallShape('test-qwen-line-start', 'qwen2.5-coder', 4096);
const FILE = 'src/services/userService.ts';

describe('line starts of one stretch (Qwen2.5-Coder layout)', function () {
  this.timeout(180_000);
  let model: CodeModel;
  let index: RepoIndex;
  let cleanup: () => Promise<void>;
  /** The prompt of every generation, in order. */
  const prompts: number[][] = [];

  before(async () => {
    const made = await tempDir();
    cleanup = made.cleanup;
    const file = await ensureShapeModel(QWEN_SMALL, TINY_MODEL, path.join(made.dir, 'qwen.gguf'));
    model = await CodeModel.load({ modelPath: file, threads: 1, gpuLayers: 0, contextSize: 4096 });
    const session = model.session as { generate(t: readonly number[], o: GenerateOptions): Promise<GenerateResult> };
    const generate = session.generate.bind(session);
    session.generate = (tokens, options) => {
      prompts.push([...tokens]);
      return generate(tokens, { ...options, maxTokens: 2 });
    };
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
  });
  after(async () => {
    index?.dispose();
    await model?.dispose();
    await cleanup?.();
  });

  /** `text` with its lines from `line` to `end` being written: the ones before `line` there, `line` typed to `column`. */
  const writing = (text: string, filePath: string, line: number, end: number, column: number): CompletionRequest => {
    const all = text.split('\n');
    const doc = [...all.slice(0, line), all[line].slice(0, column), ...all.slice(end + 1)].join('\n');
    return { path: filePath, text: doc, cursor: { line, character: column }, mode: 'line' };
  };
  const ids = () => model.info.family.ids;
  /** Where the current file's part starts: after the last `<|file_sep|>` (the context files come before it). */
  const currentFileAt = (prompt: number[]): number => prompt.lastIndexOf(ids().fileSep!);
  const commonPrefix = (a: number[], b: number[]): number => {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  };

  it('keeps the context of a stretch, byte for byte, while retrieval reorders and trims it', async () => {
    const text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
    let calls = 0;
    // Retrieval that mostly agrees with itself from line to line: the same best snippet, the rest reordered or cut.
    const wobbly = async (r: RetrievalRequest): Promise<RetrievalResult> => {
      const result = await retrieve(index, r);
      const [best, ...rest] = result.snippets;
      const turned = calls++ % 2 ? [...rest].reverse() : rest.slice(0, -1);
      return { ...result, snippets: best ? [best, ...turned] : [] };
    };
    const engine = new CompletionEngine({
      generator: model,
      gate: 'always',
      retrieve: wobbly,
      firstPromptMs: 0,
      layout: 'line',
    });
    await model.session.reset();
    const starts: number[][] = [];
    for (let line = 7; line <= 12; line++) {
      prompts.length = 0;
      await engine.complete(writing(text, FILE, line, 12, text.split('\n')[line].search(/\S/) + 2));
      starts.push(prompts[0]);
    }
    assert.ok(calls >= 4, `retrieval asked at every line start (${calls})`);
    const at = currentFileAt(starts[0]);
    assert.ok(at > 0, 'the context comes first, as <|file_sep|> files');
    for (let i = 1; i < starts.length; i++) {
      assert.deepEqual(starts[i].slice(0, at), starts[0].slice(0, at), `line start ${i}: the same context`);
      // The left context only grew at its end: all of the last prompt's left context but its final token is kept.
      const suffix = starts[i - 1].indexOf(ids().fimSuffix!);
      assert.ok(commonPrefix(starts[i], starts[i - 1]) >= suffix - 1, `line start ${i} only appends`);
    }
  });

  it('takes a clearly better retrieval: a new best snippet with mostly new company', async () => {
    const text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
    const other = (n: number): Snippet => ({
      path: `src/other${n}.ts`,
      range: { start: 0, end: 1 },
      text: `export const other${n} = ${n};\n`,
      retriever: 'lexical',
      why: 'test',
      score: 1,
    });
    let switched = false;
    const engine = new CompletionEngine({
      generator: model,
      gate: 'always',
      retrieve: async (r) => {
        const result = await retrieve(index, r);
        return switched ? { ...result, snippets: [other(1), other(2), other(3)] } : result;
      },
      firstPromptMs: 0,
      layout: 'line',
    });
    const first = await engine.complete(writing(text, FILE, 8, 12, 6));
    switched = true;
    const second = await engine.complete(writing(text, FILE, 9, 12, 6));
    assert.ok(first.snippets.length > 0 && first.snippets.every((s) => !s.path.startsWith('src/other')));
    assert.deepEqual(
      second.snippets.map((s) => s.path),
      ['src/other1.ts', 'src/other2.ts', 'src/other3.ts'],
    );
  });

  it('anchors the left window: twenty new lines move its start at most once (every 8 lines before)', async () => {
    // A file longer than the left budget, written line after line from its middle on.
    const text = Array.from({ length: 600 }, (_, i) => `const value${i} = compute(${i}, "v${i}");`).join('\n');
    const engine = new CompletionEngine({ generator: model, gate: 'never', firstPromptMs: 0, layout: 'line' });
    await model.session.reset();
    const starts: number[][] = [];
    for (let line = 400; line < 420; line++) {
      prompts.length = 0;
      await engine.complete(writing(text, 'src/long.ts', line, 419, 2));
      starts.push(prompts[0]);
    }
    let moves = 0;
    for (let i = 1; i < starts.length; i++) {
      const suffix = starts[i - 1].indexOf(ids().fimSuffix!);
      if (commonPrefix(starts[i], starts[i - 1]) < suffix - 1) moves++;
    }
    assert.ok(starts[0].length > 1000, `the left budget is full (${starts[0].length} tokens)`);
    assert.ok(moves <= 1, `the window's start moved ${moves} times in 20 lines`);
  });
});
