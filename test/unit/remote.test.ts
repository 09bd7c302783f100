/**
 * The remote engine against a real llama-server (built from the llama.cpp source node-llama-cpp ships, started on
 * 127.0.0.1 with the tiny model): the same P(<cc>) and the same greedy completion as the local engine, prompts as
 * token ids, streaming, abort with the slot free at once, and prefix reuse between the gate probe and generation,
 * over both llama-server's /completion and its OpenAI-compatible /v1/completions.
 */
import { strict as assert } from 'assert';
import { CodeModel } from '../../src/model/codeModel';
import { RemoteModel } from '../../src/model/remote/remoteModel';
import { probabilityOf, type RemoteEngine } from '../../src/model/tokenModel';
import { BUILD_TIMEOUT_MS, slotsBusy, startLlamaServer, startProxy, type RunningServer } from '../helpers/llamaServer';
import { engineResults, gatePieces, INJECTION_LEFT, LEFT, RIGHT } from '../helpers/remotePrompts';
import { TINY_MODEL } from '../helpers/tinyModel';

/** node-llama-cpp's prebuilt binary and the server built here run the same ggml; sums may differ in the last bits. */
const PROBABILITY_TOLERANCE = 1e-4;
/** "At once" for a slot after an abort: the server notices a closed connection at its next token. */
const SLOT_FREE_MS = 2000;

describe('remote engine on a real llama-server', function () {
  this.timeout(120_000);
  let server: RunningServer;
  let local: CodeModel;
  const remotes: RemoteModel[] = [];
  const remote = async (engine: RemoteEngine = 'llama-server'): Promise<RemoteModel> => {
    const model = await RemoteModel.load({ modelPath: TINY_MODEL }, { engine, url: server.url });
    remotes.push(model);
    assert.equal(model.info.server.problem, undefined, model.info.server.problem?.message);
    return model;
  };

  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS);
    server = await startLlamaServer({ model: TINY_MODEL });
    local = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0, contextSize: 1024 });
  });
  after(async () => {
    for (const m of remotes) await m.dispose();
    await local?.dispose();
    await server?.stop();
  });

  for (const engine of ['llama-server', 'openai-compatible'] as const) {
    it(`${engine}: P(<cc>) and the top of the distribution equal the local engine's on the same prompts`, async () => {
      const model = await remote(engine);
      const cc = local.info.family.ids.cc!;
      for (const [left, right] of [
        [LEFT, RIGHT],
        ['', ''],
        [INJECTION_LEFT, '";\n'],
      ]) {
        const tokens = local.tokenize(gatePieces(left, right));
        const here = await local.session.probe(tokens);
        const there = await model.session.probe(tokens);
        assert.ok(
          Math.abs(probabilityOf(there, cc) - probabilityOf(here, cc)) < PROBABILITY_TOLERANCE,
          `P(<cc>) ${probabilityOf(there, cc)} vs ${probabilityOf(here, cc)}`,
        );
        for (const [id, p] of there.probabilities)
          assert.ok(Math.abs(p - (here.probabilities.get(id) ?? 0)) < PROBABILITY_TOLERANCE, `token ${id}`);
        // The bound for tokens outside the top k is the k-th probability: no unlisted token exceeds it.
        const bound = there.unlistedAtMost ?? 0;
        for (const [id, p] of here.probabilities)
          if (!there.probabilities.has(id))
            assert.ok(p <= bound + PROBABILITY_TOLERANCE, `token ${id}: ${p} > ${bound}`);
      }
    });

    it(`${engine}: the same greedy completion as the local engine, streamed`, async () => {
      const model = await remote(engine);
      const tokens = local.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
      const options = { maxTokens: 24, stopIds: local.info.family.stopIds };
      const here = await local.session.generate(tokens, options);
      const texts: string[] = [];
      const there = await model.session.generate(tokens, { ...options, onText: (text) => void texts.push(text) });
      assert.deepEqual(there.tokens, here.tokens);
      assert.equal(there.text, here.text);
      assert.ok(texts.length > 1, 'the text arrived in pieces');
      assert.ok(texts.every((t, i) => i === 0 || t.startsWith(texts[i - 1]) || t.length >= texts[i - 1].length));
      assert.equal(texts[texts.length - 1], there.text);
      assert.equal(there.confidences.length, there.tokens.length);
      for (const [i, c] of there.confidences.entries())
        assert.ok(Math.abs(c - here.confidences[i]) < 1e-3, `confidence ${i}: ${c} vs ${here.confidences[i]}`);
    });
  }

  it('sends code that spells control tokens as text: the server sees the same ids as the local tokenizer', async () => {
    const model = await remote();
    const ids = model.tokenize([{ text: INJECTION_LEFT }]);
    const specials = new Set(Object.values(model.info.family.ids));
    assert.ok(!ids.some((id) => specials.has(id)), 'no control token among the text tokens');
    const asText = await postJson(`${server.url}/tokenize`, { content: INJECTION_LEFT, parse_special: false });
    assert.deepEqual(ids, asText.tokens);
    // What a string prompt would have become on the server: control tokens (the reason prompts go as ids).
    const parsed = await postJson(`${server.url}/tokenize`, { content: INJECTION_LEFT, parse_special: true });
    assert.ok((parsed.tokens as number[]).some((id) => specials.has(id)));
  });

  it("generation after the gate probe evaluates only the continuation (the server's own token counts)", async () => {
    const model = await remote();
    await model.session.reset();
    const prefix = model.tokenize(gatePieces(LEFT, RIGHT));
    const probe = await model.session.probe(prefix);
    assert.equal(probe.evaluated, prefix.length, 'after a reset the probe evaluates its whole prompt');
    const continuation = model.tokenize([
      { special: 'cc' },
      { text: '\n\n// the below code fragment can be found in: src/repo.ts\n' },
      { special: 'fimMiddle' },
    ]);
    const generated = await model.session.generate([...prefix, ...continuation], {
      maxTokens: 4,
      stopIds: model.info.family.stopIds,
    });
    assert.equal(generated.reused, prefix.length, `reused ${generated.reused} of ${prefix.length}`);
    assert.equal(generated.evaluated, continuation.length);
  });

  it('the completion engine gives the same gate score and completion remotely as locally', async () => {
    const model = await remote();
    const [here, there] = await engineResults([local, model]);
    assert.ok(
      Math.abs(here.gate.score - there.gate.score) < PROBABILITY_TOLERANCE,
      `${here.gate.score} vs ${there.gate.score}`,
    );
    assert.equal(there.gate.fire, here.gate.fire);
    assert.equal(there.text, here.text);
    assert.equal(there.prompt.tokens, here.prompt.tokens);
    assert.ok(there.prompt.evaluated < there.prompt.tokens + here.prompt.tokens, 'the generation reused the probe');
    assert.equal(there.prompt.evaluated, here.prompt.evaluated);
  });

  it("an abort closes the stream and frees the server's slot at once", async () => {
    const model = await remote();
    await model.session.reset();
    const tokens = model.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
    const controller = new AbortController();
    let shown = 0;
    const result = await model.session.generate(tokens, {
      maxTokens: 900,
      stopIds: [],
      signal: controller.signal,
      onText: () => {
        if (++shown === 2) controller.abort();
      },
    });
    const abortedAt = performance.now();
    assert.equal(result.stoppedBy, 'abort');
    let busy = await slotsBusy(server.url);
    while (busy.some(Boolean) && performance.now() - abortedAt < SLOT_FREE_MS) busy = await slotsBusy(server.url);
    assert.deepEqual(busy, [false], `the slot is idle within ${SLOT_FREE_MS} ms of the abort`);
    const next = await model.session.probe(model.tokenize(gatePieces('x', '')));
    assert.ok(next.probabilities.size > 0);
  });

  it('a new request cancels the one in flight instead of queueing behind it', async () => {
    // The stale request goes to a proxy that holds it (a slow prompt on a busy server); without the cancel it would
    // hang until the timeout, and the new request behind it.
    const proxy = await startProxy(server.url);
    try {
      const model = await RemoteModel.load({ modelPath: TINY_MODEL }, { engine: 'llama-server', url: proxy.url });
      remotes.push(model);
      proxy.mode = 'hang';
      const tokens = model.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
      const stale = model.session.generate(tokens, { maxTokens: 16, stopIds: [] });
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.mode = 'pass';
      const probe = model.session.probe(model.tokenize(gatePieces(`${LEFT}f`, RIGHT)));
      assert.equal((await stale).stoppedBy, 'abort', 'the stale generation was cancelled by the new request');
      assert.ok((await probe).probabilities.size > 0);
    } finally {
      await proxy.close();
    }
  });
});

async function postJson(url: string, body: unknown): Promise<{ tokens: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as { tokens: unknown };
}
