/**
 * The completion engine end to end on the real tiny model and the real index of the shop fixture: every gate
 * policy, the token gate's shared sequence, retrieval only when the gate fires, abort, budgets, explanations.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { CompletionEngine, detectMode, type CompletionRequest } from '../../src/engine/completionEngine';
import { explainCompletion } from '../../src/engine/explain';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { CodeModel } from '../../src/model/codeModel';
import { retrieve } from '../../src/retrieval/retrieve';
import type { RetrievalRequest } from '../../src/retrieval/types';
import { SHOP, tempDir } from '../helpers/fixtures';
import { TINY_MODEL, writeGatelessTinyModel } from '../helpers/tinyModel';

const FILE = 'src/services/userService.ts';

describe('completion engine with the tiny model', function () {
  this.timeout(180_000);
  let model: CodeModel;
  let index: RepoIndex;
  let text: string;
  let request: CompletionRequest;
  const retrievals: RetrievalRequest[] = [];
  const engine = (options: Partial<ConstructorParameters<typeof CompletionEngine>[0]> = {}): CompletionEngine =>
    new CompletionEngine({
      generator: model,
      gate: 'token',
      retrieve: async (r) => {
        retrievals.push(r);
        return retrieve(index, r);
      },
      ...options,
    });

  before(async () => {
    model = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 });
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
    text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
    // Line 9 (zero-based 8), after "await this.repo.": the member needs UserRepo from another file.
    const line = text.split('\n')[8];
    request = { path: FILE, text, cursor: { line: 8, character: line.indexOf('this.repo.') + 'this.repo.'.length } };
  });
  after(async () => {
    index?.dispose();
    await model?.dispose();
  });
  beforeEach(() => {
    retrievals.length = 0;
  });

  it('never: no retrieval, a plain FIM completion with timings', async () => {
    const result = await engine({ gate: 'never' }).complete(request);
    assert.equal(result.gate.fire, false);
    assert.equal(result.gate.source, 'fixed');
    assert.equal(retrievals.length, 0);
    assert.deepEqual(result.snippets, []);
    assert.equal(result.prompt.contextTokens, 0);
    assert.equal(result.mode, 'line');
    assert.ok(!result.text.includes('\n'), 'a single line');
    assert.ok(result.timings.totalMs > 0 && result.timings.totalMs >= result.timings.gateMs);
  });

  it('always: retrieves, packs the UserRepo definition within the token cap, and puts it in the prompt', async () => {
    const plain = await engine({ gate: 'never' }).complete(request);
    const result = await engine({ gate: 'always', budget: { contextTokens: 300 } }).complete(request);
    assert.equal(result.gate.fire, true);
    assert.equal(retrievals.length, 1);
    assert.ok(
      result.snippets.some((s) => s.path === 'src/db/userRepo.ts'),
      result.snippets.map((s) => s.path).join(', '),
    );
    assert.ok(
      result.prompt.contextTokens > 0 && result.prompt.contextTokens <= 300,
      `${result.prompt.contextTokens} context tokens`,
    );
    assert.ok(result.prompt.tokens >= plain.prompt.tokens + result.prompt.contextTokens);
    assert.ok(
      result.snippets.every((s) => !/credentials|server\.key/.test(s.path)),
      'secrets never reach a prompt',
    );
  });

  it('token: reads P(<cc>) once and retrieves iff it exceeds the threshold', async () => {
    const open = await engine({ gateThreshold: 0 }).complete(request);
    assert.equal(open.gate.policy, 'token');
    assert.equal(open.gate.source, 'generator');
    assert.ok(open.gate.score > 0 && open.gate.score < 1, `P(<cc>) ${open.gate.score}`);
    assert.equal(open.gate.fire, true);
    assert.equal(retrievals.length, 1);
    retrievals.length = 0;
    const closed = await engine({ gateThreshold: 1 }).complete(request);
    assert.equal(closed.gate.fire, false);
    assert.equal(retrievals.length, 0);
    assert.ok(Math.abs(closed.gate.score - open.gate.score) < 1e-6, 'same prompt, same probability');
    // The default threshold is the model's recommended one, from its GGUF metadata.
    assert.equal(engine().thresholds.line, model.info.gateThreshold);
    assert.ok(engine().thresholds.multiline < engine().thresholds.line);
  });

  it('token: the gate prefix is evaluated once — generation adds only the continuation', async () => {
    await model.session.reset();
    const plain = await engine({ gate: 'never' }).complete(request);
    await model.session.reset();
    const gated = await engine({ gateThreshold: 1 }).complete(request);
    assert.equal(gated.gate.fire, false);
    assert.equal(gated.prompt.tokens, plain.prompt.tokens, 'the same prompt as plain FIM');
    assert.equal(gated.prompt.evaluated, plain.prompt.evaluated, 'no second pass over the prompt');
  });

  it('heuristic: cheap signals, a trial retrieval and a draft; the draft becomes the query when it fires', async () => {
    const result = await engine({ gate: 'heuristic' }).complete(request);
    assert.equal(result.gate.policy, 'heuristic');
    assert.ok(result.gate.features, 'features are reported');
    assert.equal(result.gate.features!.local_imports, 2, 'two relative imports');
    assert.ok(result.gate.features!.imported_near > 0, 'normalizeEmail, imported, is used on the line above');
    assert.ok(result.gate.score > 0 && result.gate.score < 1);
    assert.equal(result.gate.fire, result.gate.score > result.gate.threshold);
    assert.equal(retrievals[0].draft, undefined, 'the trial retrieval has no draft');
    if (result.gate.fire)
      assert.ok(retrievals.length === 2 && retrievals[1].draft !== undefined, 'RepoCoder iteration 2 uses the draft');
  });

  it('a policy model decides for a generator without a gate token; without one, token falls back to the heuristic', async () => {
    const { dir, cleanup } = await tempDir();
    const plainPath = path.join(dir, 'no-gate.gguf');
    await writeGatelessTinyModel(plainPath);
    const plain = await CodeModel.load({ modelPath: plainPath, threads: 1, gpuLayers: 0 });
    try {
      assert.equal(plain.info.family.hasGate, false);
      const decided = await engine({ generator: plain, policyModel: model }).complete(request);
      assert.equal(decided.gate.policy, 'token');
      assert.equal(decided.gate.source, 'policy-model');
      assert.ok(decided.gate.score > 0 && decided.gate.score < 1);
      assert.equal(decided.gate.threshold, model.info.gateThreshold, "the policy model's recommended threshold");
      const fallback = await engine({ generator: plain }).complete(request);
      assert.equal(fallback.gate.policy, 'heuristic');
      assert.ok(fallback.gate.features);
    } finally {
      await plain.dispose();
      await cleanup();
    }
  });

  it('never retrieves without a retriever (an untrusted workspace), even when the gate fires', async () => {
    const untrusted = await engine({ gate: 'always', retrieve: undefined }).complete(request);
    assert.equal(untrusted.gate.fire, true);
    assert.deepEqual(untrusted.snippets, []);
  });

  it('completes without context when retrieval fails (the index rebuilding or its worker lost)', async () => {
    const failing = engine({
      gate: 'always',
      retrieve: async () => {
        throw new Error('index worker exited with code 1');
      },
    });
    const result = await failing.complete(request);
    assert.equal(result.gate.fire, true);
    assert.deepEqual(result.snippets, []);
    assert.equal(result.prompt.contextTokens, 0);
  });

  it('stops at once when cancelled, and streams the first line as soon as it is complete', async () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = await engine({ gate: 'never' }).complete(request, { signal: controller.signal });
    assert.equal(aborted.aborted, true);
    assert.equal(aborted.text, '');
    const partials: string[] = [];
    const streamed = await engine({ gate: 'never' }).complete(
      { ...request, mode: 'multiline' },
      { onPartial: (t) => partials.push(t) },
    );
    for (const partial of partials) assert.ok(partial.length > 0);
    if (streamed.text) assert.ok(partials.length > 0 && streamed.text.startsWith(partials[0].split('\n')[0]));
  });

  it('keeps a huge file within the context window', async () => {
    const huge = `${Array.from({ length: 3000 }, (_, i) => `export const value${i} = ${i};`).join('\n')}\n${text}`;
    const lines = huge.split('\n');
    const cursorLine = lines.length - text.split('\n').length + 8;
    // No time budget: it cuts the prompt by the machine's measured speed, and this test is about the window.
    const result = await engine({ gate: 'always', firstPromptMs: 0 }).complete({
      path: FILE,
      text: huge,
      cursor: { line: cursorLine, character: lines[cursorLine].length },
    });
    assert.ok(result.prompt.tokens + 64 <= model.info.contextSize, `${result.prompt.tokens} prompt tokens`);
    assert.ok(result.prompt.leftTokens > 100);
  });

  it('reuses the cache while typing: one more character evaluates a small tail', async () => {
    // No time budget: on a slow machine it cuts the two prompts at different rungs, which is not what this tests.
    const e = engine({ gate: 'never', firstPromptMs: 0 });
    await e.complete(request);
    const lines = text.split('\n');
    lines[8] = `${lines[8].slice(0, request.cursor.character)}f${lines[8].slice(request.cursor.character)}`;
    const next = await e.complete({
      ...request,
      text: lines.join('\n'),
      cursor: { line: 8, character: request.cursor.character + 1 },
    });
    assert.ok(
      next.prompt.evaluated < next.prompt.tokens / 2,
      `${next.prompt.evaluated} of ${next.prompt.tokens} evaluated`,
    );
  });

  it('explains a completion: gate reading, snippets with reasons, token counts, timings', async () => {
    const result = await engine({ gate: 'always' }).complete(request);
    const text = explainCompletion(model.info, result);
    assert.match(text, /gate: always: always retrieves → retrieve/);
    assert.match(text, /#1 src\/\S+:\d+-\d+ \[\w+\] /);
    assert.match(text, /prompt: \d+ tokens \(left \d+, right \d+, context \d+\)/);
    assert.match(text, /timings: gate \d+ ms, retrieval \d+ ms, first token/);
  });

  it('chooses multi-line mode for an empty block body and single-line elsewhere', () => {
    assert.equal(detectMode('function f() {\n  \n}', { line: 1, character: 2 }), 'multiline');
    assert.equal(detectMode('def f(x):\n    ', { line: 1, character: 4 }), 'multiline');
    assert.equal(detectMode('const a = b.', { line: 0, character: 12 }), 'line');
    assert.equal(detectMode('const a = 1;\n', { line: 1, character: 0 }), 'line');
  });
});
