/**
 * The Ollama engine against a FAKE Ollama (test/helpers/fakeOllama.ts: Ollama cannot be installed here; the fake
 * replays its documented wire format, with the real tiny model behind it): the model's GGUF found through
 * /api/show, raw text prompts, P(<cc>) from top_logprobs, the same completion as the local engine, streaming and
 * a cancel in mid-stream, and each failure a user meets with its message and what to do.
 */
import { strict as assert } from 'assert';
import { mkdtemp, rm } from 'fs/promises';
import { tmpdir } from 'os';
import * as path from 'path';
import { CodeModel } from '../../src/model/codeModel';
import { RemoteModel, type ServerOptions } from '../../src/model/remote/remoteModel';
import { probabilityOf } from '../../src/model/tokenModel';
import { startFakeOllama, type FakeOllama } from '../helpers/fakeOllama';
import { rewriteGguf } from '../helpers/ggufWrite';
import { freePort } from '../helpers/llamaServer';
import { gatePieces, LEFT, RIGHT } from '../helpers/remotePrompts';
import { TINY_MODEL } from '../helpers/tinyModel';

/** The bound for P(<cc>) read over another path than the local engine's. */
const PROBABILITY_TOLERANCE = 1e-3;
const TINY = 'repogate-tiny:latest';

describe('ollama engine on a fake Ollama (its documented wire format; the real tiny model behind it)', function () {
  this.timeout(120_000);
  let local: CodeModel;
  let dir: string;
  let noFim: string;
  const servers: FakeOllama[] = [];
  const models: RemoteModel[] = [];
  const fake = async (options: Partial<Parameters<typeof startFakeOllama>[0]> = {}): Promise<FakeOllama> => {
    const server = await startFakeOllama({ models: { [TINY]: TINY_MODEL }, ...options });
    servers.push(server);
    return server;
  };
  const connect = async (server: Partial<ServerOptions> & { url: string }, modelPath = ''): Promise<RemoteModel> => {
    const model = await RemoteModel.load({ modelPath }, { engine: 'ollama', ...server });
    models.push(model);
    return model;
  };
  const loadError = async (server: Partial<ServerOptions> & { url: string }): Promise<Error & { hint?: string }> => {
    try {
      await connect(server);
    } catch (error) {
      return error as Error & { hint?: string };
    }
    throw new Error('the model loaded');
  };

  before(async () => {
    local = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0, contextSize: 1024 });
    dir = await mkdtemp(path.join(tmpdir(), 'repogate-ollama-'));
    noFim = path.join(dir, 'no-fim.gguf');
    const rename = new Map([
      ['<fim_prefix>', '<unused_p>'],
      ['<fim_suffix>', '<unused_s>'],
      ['<fim_middle>', '<unused_m>'],
    ]);
    await rewriteGguf(TINY_MODEL, noFim, (kvs) =>
      kvs.map((kv) =>
        kv.key === 'tokenizer.ggml.tokens'
          ? { ...kv, value: (kv.value as string[]).map((t) => rename.get(t) ?? t) }
          : kv,
      ),
    );
  });
  after(async () => {
    for (const m of models) await m.dispose();
    for (const s of servers) await s.stop();
    await local?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("finds the model's GGUF through /api/show and sends raw text prompts with the control tokens spelled out", async () => {
    const server = await fake();
    const model = await connect({ url: server.url, model: 'repogate-tiny' });
    assert.equal(model.info.path, TINY_MODEL);
    assert.equal(model.info.server.model, TINY);
    await model.session.probe(model.tokenize(gatePieces(LEFT, RIGHT)));
    assert.equal(model.info.server.promptFormat, 'text');
    const last = server.requests[server.requests.length - 1];
    assert.equal(last.raw, true);
    assert.equal(last.prompt, `<fim_prefix>${LEFT}<fim_suffix>${RIGHT}<eof>`);
    assert.equal(typeof last.keep_alive, 'string', 'keep_alive keeps the model loaded between keystrokes');
    assert.equal((last.options as { num_ctx?: number }).num_ctx, model.info.contextSize);
  });

  it('picks the only pulled model when none is named', async () => {
    const server = await fake();
    const model = await connect({ url: server.url });
    assert.equal(model.info.server.model, TINY);
  });

  it("reads P(<cc>) from top_logprobs: the local engine's within 1e-3", async () => {
    const server = await fake();
    const model = await connect({ url: server.url, model: TINY });
    const cc = local.info.family.ids.cc!;
    assert.ok(model.info.family.hasGate);
    for (const [left, right] of [
      [LEFT, RIGHT],
      ['', ''],
    ]) {
      const tokens = local.tokenize(gatePieces(left, right));
      const here = probabilityOf(await local.session.probe(tokens), cc);
      const there = probabilityOf(await model.session.probe(tokens), cc);
      assert.ok(Math.abs(there - here) < PROBABILITY_TOLERANCE, `P(<cc>) ${there} vs ${here}`);
    }
  });

  it('streams the same greedy completion as the local engine', async () => {
    const server = await fake();
    const model = await connect({ url: server.url, model: TINY });
    const tokens = local.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
    const options = { maxTokens: 24, stopIds: local.info.family.stopIds };
    const here = await local.session.generate(tokens, options);
    const texts: string[] = [];
    const there = await model.session.generate(tokens, { ...options, onText: (text) => void texts.push(text) });
    assert.equal(there.text, here.text);
    assert.ok(texts.length > 1, 'the text arrived in pieces');
    assert.equal(texts[texts.length - 1], there.text);
    assert.ok(server.lastStream.finished);
  });

  it('a cancel in mid-stream closes the connection: the server stops streaming', async () => {
    const server = await fake({ tokenDelayMs: 150 });
    const model = await connect({ url: server.url, model: TINY });
    const tokens = local.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
    const controller = new AbortController();
    const result = await model.session.generate(tokens, {
      maxTokens: 24,
      stopIds: local.info.family.stopIds,
      signal: controller.signal,
      onText: () => void controller.abort(),
    });
    assert.equal(result.stoppedBy, 'abort');
    await waitFor(() => server.lastStream.closedEarly, 'the fake saw the connection close');
    assert.ok(!server.lastStream.finished);
  });

  it('waits while Ollama loads the model, beyond the per-request timeout', async () => {
    const server = await fake({ loadDelayMs: 1500 });
    const model = await connect({ url: server.url, model: TINY, timeoutMs: 500 });
    assert.equal(model.info.server.problem, undefined, model.info.server.problem?.message);
    const load = server.requests[0];
    assert.equal(load.prompt, undefined, 'the first request only loads the model');
  });

  it('a model that is not pulled: says so, with the pull command', async () => {
    const server = await fake();
    const error = await loadError({ url: server.url, model: 'qwen2.5-coder:1.5b-base' });
    assert.match(error.message, /has no model "qwen2\.5-coder:1\.5b-base" \(it has repogate-tiny:latest\)/);
    assert.match(error.hint ?? '', /ollama pull qwen2\.5-coder:1\.5b-base/);
  });

  it('several models and none named: lists them and says which setting picks one', async () => {
    const server = await fake({ models: { [TINY]: TINY_MODEL, 'other:latest': TINY_MODEL } });
    const error = await loadError({ url: server.url });
    assert.match(error.message, /has 2 models \(repogate-tiny:latest, other:latest\)/);
    assert.match(error.hint ?? '', /repogate\.serverModel/);
  });

  it('a model without fill-in-the-middle tokens: says so, with a model that has them', async () => {
    const server = await fake({ models: { 'plain:latest': noFim } });
    const error = await loadError({ url: server.url, model: 'plain' });
    assert.match(error.message, /"plain:latest" on Ollama has no fill-in-the-middle tokens/);
    assert.match(error.hint ?? '', /ollama pull qwen2\.5-coder/);
  });

  it('a server too old for logprobs: the heuristic gate decides, and the editor says why and what to do', async () => {
    const server = await fake({ version: '0.12.3' });
    const model = await connect({ url: server.url, model: TINY });
    assert.equal(model.info.server.problem, undefined);
    assert.match(model.info.server.gateNote ?? '', /Ollama 0\.12\.3 returns no logprobs \(0\.12\.11 or later/);
    assert.match(model.info.server.gateNote ?? '', /update Ollama/);
    assert.equal(model.info.family.hasGate, false, 'the engine uses the heuristic gate');
    const tokens = local.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
    const generated = await model.session.generate(tokens, { maxTokens: 8, stopIds: local.info.family.stopIds });
    assert.ok(generated.text.length > 0, 'completions go on without probabilities');
    await assert.rejects(model.session.probe(tokens), /returned no logprobs: this Ollama is older than 0\.12\.11/);
  });

  it('Ollama not running: says so, with how to start it', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const error = await loadError({ url, model: TINY });
    assert.match(error.message, /Ollama is not running at http:\/\/127\.0\.0\.1:\d+/);
    assert.match(error.hint ?? '', /ollama serve/);
  });

  it('Ollama stopped after loading: the failure is reported and clears when it answers again', async () => {
    const server = await fake();
    const model = await connect({ url: server.url, model: TINY });
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    const tokens = local.tokenize(gatePieces(LEFT, RIGHT));
    await assert.rejects(model.session.probe(tokens), /Ollama is not running/);
    assert.match(model.info.server.problem?.message ?? '', /Ollama is not running/);
    assert.match(model.info.server.problem?.hint ?? '', /ollama serve/);
  });
});

async function waitFor(condition: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
