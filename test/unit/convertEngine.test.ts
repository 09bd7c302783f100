/**
 * A converted Repoformer-shaped model in RepoGate's own pipeline, as the demo model is used in engine.test.ts: the
 * token gate reads P(<cc>) from it, it decides as a policy model for a generator without the token, and Explain
 * Last Completion describes its decision.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { CompletionEngine, type CompletionRequest } from '../../src/engine/completionEngine';
import { explainCompletion } from '../../src/engine/explain';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { CodeModel } from '../../src/model/codeModel';
import { convertCheckpoint, GATE_THRESHOLD } from '../../src/convert';
import { retrieve } from '../../src/retrieval/retrieve';
import { SHOP, tempDir } from '../helpers/fixtures';
import { layOut } from '../helpers/repoformerFixture';
import { writeGatelessTinyModel } from '../helpers/tinyModel';

const FILE = 'src/services/userService.ts';

describe('a converted Repoformer model in the completion engine', function () {
  this.timeout(180_000);
  let temp: { dir: string; cleanup: () => Promise<void> };
  let converted: CodeModel;
  let index: RepoIndex;
  let request: CompletionRequest;
  let retrievals = 0;
  const engine = (options: Partial<ConstructorParameters<typeof CompletionEngine>[0]>): CompletionEngine =>
    new CompletionEngine({
      generator: converted,
      gate: 'token',
      retrieve: async (r) => {
        retrievals++;
        return retrieve(index, r);
      },
      ...options,
    });

  before(async () => {
    temp = await tempDir('repogate-convert-engine-');
    await layOut(path.join(temp.dir, 'ckpt'), 'bin');
    const out = path.join(temp.dir, 'repoformer-tiny.q8_0.gguf');
    await convertCheckpoint({ dir: path.join(temp.dir, 'ckpt'), out, type: 'q8_0' });
    converted = await CodeModel.load({ modelPath: out, threads: 1, gpuLayers: 0 });
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
    const text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
    const line = text.split('\n')[8];
    request = { path: FILE, text, cursor: { line: 8, character: line.indexOf('this.repo.') + 'this.repo.'.length } };
  });
  after(async () => {
    index?.dispose();
    await converted?.dispose();
    await temp?.cleanup();
  });
  beforeEach(() => {
    retrievals = 0;
  });

  it("is a Repoformer-family model with the gate and the paper's threshold", () => {
    assert.equal(converted.info.family.family.id, 'repoformer');
    assert.equal(converted.info.family.hasGate, true);
    assert.ok(Math.abs(converted.info.gateThreshold! - GATE_THRESHOLD) < 1e-6);
  });

  it('token gate: reads P(<cc>) from the converted model and retrieves iff it exceeds the threshold', async () => {
    // No time budget: on a slow machine it cuts the two requests' prompts differently, and this compares one prompt.
    const open = await engine({ gateThreshold: 0, firstPromptMs: 0 }).complete(request);
    assert.equal(open.gate.source, 'generator');
    assert.ok(open.gate.score > 0 && open.gate.score < 1, `P(<cc>) ${open.gate.score}`);
    assert.equal(open.gate.fire, true);
    assert.equal(retrievals, 1);
    retrievals = 0;
    const closed = await engine({ gateThreshold: 1, firstPromptMs: 0 }).complete(request);
    assert.equal(closed.gate.fire, false);
    assert.equal(retrievals, 0);
    assert.ok(Math.abs(closed.gate.score - open.gate.score) < 1e-6, 'same prompt, same probability');
    assert.equal(engine({}).thresholds.line, converted.info.gateThreshold);
  });

  it('decides as a policy model for a generator without a gate token, and Explain shows it', async () => {
    const plainPath = path.join(temp.dir, 'no-gate.gguf');
    await writeGatelessTinyModel(plainPath);
    const plain = await CodeModel.load({ modelPath: plainPath, threads: 1, gpuLayers: 0 });
    try {
      assert.equal(plain.info.family.hasGate, false);
      const result = await engine({ generator: plain, policyModel: converted }).complete(request);
      assert.equal(result.gate.policy, 'token');
      assert.equal(result.gate.source, 'policy-model');
      assert.ok(result.gate.score > 0 && result.gate.score < 1);
      assert.equal(result.gate.threshold, converted.info.gateThreshold, "the policy model's threshold");
      const text = explainCompletion(plain.info, result, converted.info);
      assert.match(text, /gate: token/);
      assert.match(text, /repoformer-tiny|ckpt/);
    } finally {
      await plain.dispose();
    }
  });
});
