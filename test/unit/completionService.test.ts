/**
 * The cursor cache and the request service over the real engine and tiny model: typing along a completion is
 * served from the cache with no model call, accepting a line serves the next, a diverging keystroke or a
 * cancellation aborts the generation, and the retrieval-rate statistics count what happened.
 */
import { strict as assert } from 'assert';
import { CompletionEngine, type CompletionRequest } from '../../src/engine/completionEngine';
import { CompletionService, cursorContext } from '../../src/engine/completionService';
import { CursorCache } from '../../src/engine/cursorCache';
import { CodeModel } from '../../src/model/codeModel';
import { TINY_MODEL } from '../helpers/tinyModel';

const TEXT = `export function total(items: number[]): number {\n  let sum = 0;\n  for (const item of items) {\n    sum += item;\n  }\n  return \n}\n`;
const AT: CompletionRequest = { path: 'src/total.ts', text: TEXT, cursor: { line: 5, character: 9 } };

/** The request after typing `typed` at AT's cursor. */
function typedAt(typed: string): CompletionRequest {
  const context = cursorContext(AT);
  const text = context.before + typed + context.after;
  const lines = (context.before + typed).split('\n');
  return { ...AT, text, cursor: { line: lines.length - 1, character: lines[lines.length - 1].length } };
}

describe('cursor cache', () => {
  const context = { path: 'a.ts', before: 'const x = ', after: ';\n' };

  it('serves the rest of a cached completion while the typed text matches its start', () => {
    const cache = new CursorCache();
    cache.set(context, 'compute(1, 2)');
    assert.deepEqual(cache.get(context), { text: 'compute(1, 2)', typed: '' });
    assert.deepEqual(cache.get({ ...context, before: 'const x = comp' }), { text: 'ute(1, 2)', typed: 'comp' });
    assert.equal(cache.get({ ...context, before: 'const x = cx' }), undefined, 'diverged');
    assert.equal(cache.get({ ...context, before: 'const x = compute(1, 2)' }), undefined, 'nothing left to serve');
    assert.equal(cache.get({ ...context, path: 'b.ts' }), undefined, 'another file');
    assert.equal(cache.get({ ...context, after: ')\n' }), undefined, 'other text after the cursor');
  });

  it('serves the next lines after a line is accepted', () => {
    const cache = new CursorCache();
    const body = { path: 'a.py', before: 'def f(x):\n    ', after: '\n' };
    cache.set(body, 'y = x * 2\n    return y');
    assert.equal(cache.get({ ...body, before: `${body.before}y = x * 2\n    ` })?.text, 'return y');
  });

  it('forgets the least recently used entries beyond its size', () => {
    const cache = new CursorCache(2);
    for (const x of ['a', 'b', 'c']) cache.set({ ...context, before: x }, 'z');
    assert.equal(cache.size, 2);
    assert.equal(cache.get({ ...context, before: 'a' }), undefined);
  });
});

describe('completion service with the tiny model', function () {
  this.timeout(120_000);
  let model: CodeModel;
  let background = 0;
  let service: CompletionService;

  before(async () => {
    model = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 });
  });
  after(async () => {
    await model?.dispose();
  });
  beforeEach(() => {
    background = 0;
    const engine = new CompletionEngine({ generator: model, gate: 'never' });
    service = new CompletionService(
      () => engine,
      () => background++,
    );
  });

  it('asks the model once, then serves the same place and typing along from the cache', async () => {
    const first = await service.provide(AT);
    assert.ok(first && first.source === 'model' && first.text, 'the tiny model completes "return "');
    assert.equal(service.stats.snapshot().modelCalls, 1);
    const again = await service.provide(AT);
    assert.deepEqual([again?.source, again?.text], ['cache', first.text]);
    const typed = await service.provide(typedAt(first.text[0]));
    if (first.text.length > 1) {
      assert.deepEqual([typed?.source, typed?.text], ['cache', first.text.slice(1)]);
    }
    const stats = service.stats.snapshot();
    assert.equal(stats.modelCalls, 1, 'no new model call');
    assert.ok(stats.cacheHits >= 1);
    assert.equal(stats.retrievalRate, 0, 'the never policy did not retrieve');
    assert.ok(service.lastResult && service.lastResult.gate.policy === 'never');
  });

  it('asks the model again after a keystroke that diverges', async () => {
    const first = await service.provide(AT);
    const diverging = first?.text.startsWith('#') ? '@' : '#';
    const second = await service.provide(typedAt(diverging));
    assert.equal(service.stats.snapshot().modelCalls, second ? 2 : 1);
    assert.notEqual(second?.source, 'cache');
  });

  it('aborts the generation when the request is cancelled before anything is shown', async () => {
    const controller = new AbortController();
    controller.abort();
    assert.equal(await service.provide(AT, controller.signal), undefined);
    const pending = service.provide(typedAt('s'));
    service.abortInFlight();
    assert.equal(await pending, undefined);
    assert.equal(service.stats.snapshot().cancelled, 1);
    assert.equal(service.stats.snapshot().modelCalls, 0);
  });

  it('streams a multi-line completion: answers with the first line, then reports the longer one', async () => {
    const request: CompletionRequest = { ...AT, mode: 'multiline' };
    const first = await service.provide(request);
    await new Promise((r) => setTimeout(r, 2000));
    const full = service.lastResult?.text ?? '';
    if (first && full.length > first.text.length) {
      assert.equal(background, 1, 'the editor is told to ask again');
      assert.equal((await service.provide(request))?.text, full);
    } else {
      assert.equal(background, 0);
    }
  });
});
