/**
 * Every failure a user of a shared inference server meets: the server down, slow (hanging), refusing the API key,
 * failing (500), answering garbage or cut-off JSON or a cut-off stream, running a model without FIM tokens. Each
 * gives a clear error with a hint, reported once as the model's problem (what the status bar and the log show),
 * never a hung request; and completions come back by themselves when the server does. The real llama-server
 * serves the tiny model; the misbehaviours come from a small real HTTP proxy in front of it (test/helpers).
 */
import { strict as assert } from 'assert';
import { describeModel } from '../../src/engine/explain';
import { ModelHost, type ModelState } from '../../src/engine/modelHost';
import { ServerError } from '../../src/model/remote/http';
import { logprobsOf } from '../../src/model/remote/openaiCompatible';
import { RemoteModel, type ServerOptions } from '../../src/model/remote/remoteModel';
import type { PromptPiece } from '../../src/model/families';
import { writeBadModels, type BadModels } from '../helpers/badModels';
import {
  BUILD_TIMEOUT_MS,
  freePort,
  startLlamaServer,
  startProxy,
  type MisbehavingProxy,
  type RunningServer,
} from '../helpers/llamaServer';
import { TINY_MODEL } from '../helpers/tinyModel';

/** Short, so that the slow-server case fails fast; a real server answers the tiny model in milliseconds. */
const TEST_TIMEOUT_MS = 1500;
const PROMPT: PromptPiece[] = [
  { special: 'fimPrefix' },
  { text: 'const total = ' },
  { special: 'fimSuffix' },
  { text: ';\n' },
  { special: 'eof' },
];

type Problem = { message: string; hint?: string } | undefined;

describe('remote engine failures', function () {
  this.timeout(60_000);
  let server: RunningServer;
  let proxy: MisbehavingProxy;
  const opened: { dispose(): Promise<void> }[] = [];

  const load = async (options: Partial<ServerOptions> = {}): Promise<{ model: RemoteModel; problems: Problem[] }> => {
    const problems: Problem[] = [];
    const model = await RemoteModel.load(
      { modelPath: TINY_MODEL },
      { engine: 'llama-server', url: proxy.url, timeoutMs: TEST_TIMEOUT_MS, ...options },
      (p) => problems.push(p),
    );
    opened.push(model);
    return { model, problems };
  };

  /** The probe fails with `code`; the failure is the model's reported problem, with a hint. */
  const failsWith = async (model: RemoteModel, code: ServerError['code'], pattern: RegExp): Promise<ServerError> => {
    const error = await model.session.probe(model.tokenize(PROMPT)).then(
      () => assert.fail('the request succeeded'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ServerError, String(error));
    assert.equal(error.code, code, error.message);
    assert.match(error.message, pattern);
    assert.ok(error.hint, 'a hint says what to do');
    assert.match(model.info.server.problem?.message ?? '', pattern, "reported as the model's problem");
    return error;
  };

  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS);
    server = await startLlamaServer({ model: TINY_MODEL });
    proxy = await startProxy(server.url);
  });
  beforeEach(() => {
    proxy.mode = 'pass';
    proxy.path = '/completion';
  });
  after(async () => {
    for (const m of opened) await m.dispose();
    await proxy?.close();
    await server?.stop();
  });

  it('server down: a clear "cannot reach" at load and per request, and completions resume when it is up', async () => {
    const port = await freePort();
    const problems: Problem[] = [];
    const model = await RemoteModel.load(
      { modelPath: TINY_MODEL },
      { engine: 'llama-server', url: `http://127.0.0.1:${port}`, timeoutMs: TEST_TIMEOUT_MS },
      (p) => problems.push(p),
    );
    opened.push(model);
    assert.match(model.info.server.problem?.message ?? '', /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    assert.match(describeModel(model.info), /failing: llama-server: cannot reach/);
    await failsWith(model, 'unreachable', /cannot reach/);
    const back = await startProxy(server.url, port);
    try {
      const probe = await model.session.probe(model.tokenize(PROMPT));
      assert.ok(probe.probabilities.size > 0);
      assert.equal(model.info.server.problem, undefined);
      assert.equal(problems[problems.length - 1], undefined, 'the recovery is reported too');
    } finally {
      await back.close();
    }
  });

  it('a slow server: the request times out with a clear message instead of hanging, and recovers', async () => {
    const { model } = await load();
    proxy.mode = 'hang';
    const started = performance.now();
    await failsWith(model, 'timeout', /did not answer within 1\.5 s/);
    assert.ok(performance.now() - started < TEST_TIMEOUT_MS * 4, 'bounded by the timeout');
    proxy.mode = 'pass';
    assert.ok((await model.session.probe(model.tokenize(PROMPT))).probabilities.size > 0);
    assert.equal(model.info.server.problem, undefined);
  });

  it('a server error (500) quotes the server and recovers when it does', async () => {
    const { model, problems } = await load();
    proxy.mode = 'status-500';
    await failsWith(model, 'server-error', /failed on the server \(500: out of memory/);
    await failsWith(model, 'server-error', /500/);
    assert.equal(problems.filter((p) => p !== undefined).length, 1, 'the same problem is reported once');
    proxy.mode = 'pass';
    await model.session.probe(model.tokenize(PROMPT));
    assert.equal(problems[problems.length - 1], undefined);
  });

  it('garbage, cut-off JSON and a cut-off stream are bad responses, not crashes', async () => {
    const { model } = await load();
    proxy.mode = 'garbage';
    await failsWith(model, 'bad-response', /not JSON \("<!DOCTYPE html>/);
    proxy.mode = 'cut-json';
    await failsWith(model, 'bad-response', /not JSON/);
    proxy.mode = 'cut-stream';
    const tokens = model.tokenize([...PROMPT, { special: 'fimMiddle' }]);
    const error = await model.session.generate(tokens, { maxTokens: 200, stopIds: [] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof ServerError && error.code === 'bad-response', String(error));
    assert.match(error.message, /stream ended/);
  });

  it('a wrong or missing API key (401 from a real llama-server --api-key) says how to set it', async () => {
    const guarded = await startLlamaServer({ model: TINY_MODEL, apiKey: 'team-secret-key' });
    try {
      const problems: Problem[] = [];
      const wrong = await RemoteModel.load(
        { modelPath: TINY_MODEL },
        { engine: 'llama-server', url: guarded.url, apiKey: 'wrong-key', timeoutMs: TEST_TIMEOUT_MS },
        (p) => problems.push(p),
      );
      opened.push(wrong);
      const error = await failsWith(wrong, 'unauthorized', /refused the request \(401/);
      assert.match(error.hint ?? '', /Set Server API Key/);
      for (const p of problems)
        assert.doesNotMatch(JSON.stringify(p), /wrong-key|team-secret-key/, 'the key never appears in a message');
      const right = await RemoteModel.load(
        { modelPath: TINY_MODEL },
        { engine: 'llama-server', url: guarded.url, apiKey: 'team-secret-key', timeoutMs: TEST_TIMEOUT_MS },
      );
      opened.push(right);
      assert.equal(right.info.server.problem, undefined);
      assert.ok((await right.session.probe(right.tokenize(PROMPT))).probabilities.size > 0);
    } finally {
      await guarded.stop();
    }
  });

  describe('a server model without FIM tokens', () => {
    let bad: BadModels;
    let noFim: RunningServer;
    before(async () => {
      bad = await writeBadModels();
      noFim = await startLlamaServer({ model: bad.noFim });
    });
    after(async () => {
      await noFim?.stop();
      await bad?.cleanup();
    });

    it('is refused with the missing token named, before any prompt is sent', async () => {
      const model = await RemoteModel.load(
        { modelPath: TINY_MODEL },
        { engine: 'llama-server', url: noFim.url, timeoutMs: TEST_TIMEOUT_MS },
      );
      opened.push(model);
      assert.match(model.info.server.problem?.message ?? '', /has no <fim_prefix> token/);
      await failsWith(model, 'incompatible', /has no <fim_prefix> token/);
    });
  });

  it('the model host stays ready through server failures and reports each change (the status bar)', async () => {
    const states: ModelState[] = [];
    const host = new ModelHost((state) => states.push(state));
    opened.push(host);
    const state = await host.load({
      generator: { modelPath: TINY_MODEL },
      server: { engine: 'llama-server', url: proxy.url, timeoutMs: TEST_TIMEOUT_MS },
    });
    assert.equal(state.kind, 'ready');
    if (state.kind !== 'ready') return;
    proxy.mode = 'status-500';
    await state.generator.session.probe(state.generator.tokenize(PROMPT)).catch(() => undefined);
    assert.equal(host.state.kind, 'ready', 'a failing server does not unload the model');
    const last = states[states.length - 1];
    assert.ok(last.kind === 'ready' && last.generator.info.server?.problem?.message.includes('500'));
    proxy.mode = 'pass';
    await state.generator.session.probe(state.generator.tokenize(PROMPT));
    const recovered = states[states.length - 1];
    assert.ok(recovered.kind === 'ready' && recovered.generator.info.server?.problem === undefined);
  });

  it('an unset or malformed server URL is a load error that says which setting to fix', async () => {
    const host = new ModelHost();
    opened.push(host);
    const state = await host.load({
      generator: { modelPath: TINY_MODEL },
      server: { engine: 'llama-server', url: '' },
    });
    assert.equal(state.kind, 'error');
    assert.ok(
      state.kind === 'error' &&
        /no inference server is set/.test(state.message) &&
        /repogate\.serverUrl/.test(state.hint ?? ''),
    );
  });
});

describe('OpenAI-compatible logprobs shapes', () => {
  it("reads token ids from vLLM's legacy shape (return_tokens_as_token_ids; a documented-format fixture)", () => {
    const logprobs = {
      tokens: ['token_id:17', 'token_id:4'],
      token_logprobs: [-0.1, -0.7],
      top_logprobs: [{ 'token_id:17': -0.1, 'token_id:3': -2.5 }, { 'token_id:4': -0.7 }],
      text_offset: [0, 2],
    };
    const read = logprobsOf(logprobs, 'vllm');
    assert.deepEqual(
      read.map((t) => t.id),
      [17, 4],
    );
    assert.ok(Math.abs(read[0].probability - Math.exp(-0.1)) < 1e-12);
    assert.deepEqual(
      read[0].top.map((t) => t.id),
      [17, 3],
    );
  });

  it('reads tokens a server names by text (LM Studio, llamafile) by their text, for the local vocabulary to map', () => {
    const read = logprobsOf(
      { tokens: ['const'], token_logprobs: [-0.1], top_logprobs: [{ const: -0.1, '<cc>': -1.5 }] },
      'lm-studio',
    );
    assert.equal(read[0].id, undefined);
    assert.equal(read[0].text, 'const');
    assert.deepEqual(
      read[0].top.map((t) => t.text),
      ['const', '<cc>'],
    );
  });
});
