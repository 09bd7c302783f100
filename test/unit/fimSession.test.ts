/**
 * The KV-cache session on the real tiny model (node-llama-cpp, CPU, one thread): prefix reuse, the gate probe
 * followed by generation on the same sequence, streaming, abort within one token, and the prompt budget.
 */
import { strict as assert } from 'assert';
import { CodeModel } from '../../src/model/codeModel';
import { ModelFileError } from '../../src/model/modelFile';
import { cutLeft, cutRight, fitBudget } from '../../src/model/promptBudget';
import { TINY_MODEL } from '../helpers/tinyModel';

const LEFT = `import { UserRepo } from './repo';\n\nexport class UserService {\n  constructor(private readonly repo: UserRepo) {}\n\n  async find(id: string) {\n    const user = await this.repo.`;
const RIGHT = `\n    return user;\n  }\n}\n`;

describe('FIM session on the tiny model', function () {
  this.timeout(120_000);
  let model: CodeModel;

  before(async () => {
    model = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 });
  });
  after(async () => {
    await model?.dispose();
  });

  const gatePrefix = (left: string, right: string): number[] =>
    model.tokenize([
      { special: 'fimPrefix' },
      { text: left },
      { special: 'fimSuffix' },
      { text: right },
      { special: 'eof' },
    ]);

  it('reports what it loaded: family, backend, threads, context', () => {
    const info = model.info;
    assert.equal(info.family.family.id, 'repogate-tiny');
    assert.equal(info.family.hasGate, true);
    assert.equal(info.backend, 'cpu');
    assert.equal(info.threads, 1);
    assert.equal(info.contextSize, 1024);
    assert.ok(info.gateThreshold! > 0 && info.gateThreshold! < 1);
  });

  it('generates after the gate probe from the same evaluated sequence: only the continuation is evaluated', async () => {
    await model.session.reset();
    const prefix = gatePrefix(LEFT, RIGHT);
    const probe = await model.session.probe(prefix);
    assert.equal(probe.evaluated, prefix.length);
    const middle = model.tokenize([{ special: 'fimMiddle' }]);
    const generated = await model.session.generate([...prefix, ...middle], {
      maxTokens: 6,
      stopIds: model.info.family.stopIds,
    });
    assert.equal(generated.reused, prefix.length);
    assert.equal(generated.evaluated, 1);
    assert.ok(generated.tokens.length > 0 && generated.tokens.length <= 6);
    assert.equal(generated.confidences.length, generated.tokens.length);
  });

  it('re-evaluates only the changed tail when one character is typed', async () => {
    await model.session.reset();
    const before = gatePrefix(LEFT, RIGHT);
    await model.session.probe(before);
    const after = gatePrefix(`${LEFT}f`, RIGHT);
    const probe = await model.session.probe(after);
    assert.ok(
      probe.reused > 0 && probe.reused >= after.length - model.countTokens(RIGHT) - 4,
      `reused ${probe.reused} of ${after.length}`,
    );
    assert.equal(probe.reused + probe.evaluated, after.length);
  });

  it('streams text and stops within one token of an abort', async () => {
    await model.session.reset();
    const controller = new AbortController();
    const seen: string[] = [];
    let tokensAtAbort = -1;
    const prompt = [...gatePrefix(LEFT, RIGHT), ...model.tokenize([{ special: 'fimMiddle' }])];
    // The tiny model may stop early; take the first streamed text as the moment to abort.
    const result = await model.session.generate(prompt, {
      maxTokens: 64,
      stopIds: [],
      signal: controller.signal,
      onText: (text) => {
        seen.push(text);
        if (tokensAtAbort < 0) {
          tokensAtAbort = seen.length;
          controller.abort();
        }
      },
    });
    assert.equal(result.stoppedBy, 'abort');
    assert.ok(
      result.tokens.length <= tokensAtAbort + 1,
      `${result.tokens.length} tokens after an abort at ${tokensAtAbort}`,
    );
    assert.ok(seen.length >= 1);
  });

  it('rejects a prompt longer than the context instead of overflowing it', async () => {
    const long = Array.from({ length: 1100 }, () => model.tokenize([{ text: 'x' }])[0]);
    await assert.rejects(model.session.probe(long), /exceeds the context of 1024/);
  });

  it('cuts left and right context to their token budgets, left at stable line blocks', () => {
    const count = (t: string): number => model.countTokens(t);
    const left = Array.from({ length: 400 }, (_, i) => `const value${i} = compute(${i});`).join('\n');
    const cut = cutLeft(left, 200, count);
    assert.ok(count(cut) <= 200, `left ${count(cut)} tokens`);
    assert.ok(left.endsWith(cut));
    assert.ok(count(cut) > 100, 'gives up at most one block of lines');
    // Typing at the end keeps the start of the cut where it was, so the KV cache keeps the prompt's start.
    const typed = cutLeft(`${left}x`, 200, count);
    assert.equal(typed.slice(0, 40), cut.slice(0, 40));
    const right = cutRight(`)\n${left}`, 50, count);
    assert.ok(count(right) <= 50 && right.startsWith(')\n'));
    const budget = fitBudget(
      { leftTokens: 5000, rightTokens: 5000, contextTokens: 5000, generationTokens: 5000 },
      1024,
    );
    assert.ok(budget.leftTokens + budget.rightTokens + budget.contextTokens + budget.generationTokens <= 1024);
    assert.ok(budget.leftTokens > 0);
  });

  it('turns a context that does not fit in memory into a clear model error', async () => {
    await assert.rejects(
      CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0, contextSize: 1 << 24 }),
      (error: unknown) =>
        error instanceof ModelFileError && error.code === 'context-too-large' && /16777216 tokens/.test(error.message),
    );
  });
});
