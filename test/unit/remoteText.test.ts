/**
 * Text prompts to an OpenAI-compatible server, against a real llama-server (its /v1/completions takes text with
 * special tokens, as LM Studio, llamafile and TGI do): the server tokenizes the text back into the editor's ids,
 * so P(<cc>) and the completion are the local engine's; code that spells a control token stays text; and 'auto'
 * keeps token ids for a server that takes them.
 */
import { strict as assert } from 'assert';
import { execFile } from 'child_process';
import * as path from 'path';
import { promisify } from 'util';
import { CodeModel } from '../../src/model/codeModel';
import { RemoteModel } from '../../src/model/remote/remoteModel';
import { probabilityOf } from '../../src/model/tokenModel';
import { SHOP } from '../helpers/fixtures';
import { BUILD_TIMEOUT_MS, startLlamaServer, type RunningServer } from '../helpers/llamaServer';
import { engineResults, gatePieces, INJECTION_LEFT, LEFT, RIGHT } from '../helpers/remotePrompts';
import { TINY_MODEL } from '../helpers/tinyModel';

const CLI = path.resolve(__dirname, '../../src/cli.js');
/** The bound for P(<cc>) over text prompts against the local engine. */
const PROBABILITY_TOLERANCE = 1e-3;

describe('text prompts to an OpenAI-compatible server (a real llama-server)', function () {
  this.timeout(120_000);
  let server: RunningServer;
  let local: CodeModel;
  let text: RemoteModel;
  const remotes: RemoteModel[] = [];
  const connect = async (promptFormat: 'auto' | 'text', url = `${server.url}/v1`): Promise<RemoteModel> => {
    const model = await RemoteModel.load({ modelPath: TINY_MODEL }, { engine: 'openai-compatible', url, promptFormat });
    remotes.push(model);
    assert.equal(model.info.server.problem, undefined, model.info.server.problem?.message);
    return model;
  };

  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS);
    server = await startLlamaServer({ model: TINY_MODEL });
    local = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0, contextSize: 1024 });
    text = await connect('text');
  });
  after(async () => {
    for (const m of remotes) await m.dispose();
    await local?.dispose();
    await server?.stop();
  });

  it("'auto' keeps token ids for a server that takes them, and says which format is in use", async () => {
    const model = await connect('auto', server.url);
    assert.equal(model.info.server.promptFormat, 'token-ids');
    assert.equal(text.info.server.promptFormat, 'text');
    assert.equal(text.info.server.url, server.url, 'a URL given with /v1 is the server root');
  });

  it("P(<cc>) and the top of the distribution: the local engine's within 1e-3", async () => {
    const cc = local.info.family.ids.cc!;
    for (const [left, right] of [
      [LEFT, RIGHT],
      ['', ''],
      ['x', '\n'],
    ]) {
      const tokens = local.tokenize(gatePieces(left, right));
      const here = await local.session.probe(tokens);
      const there = await text.session.probe(tokens);
      assert.ok(
        Math.abs(probabilityOf(there, cc) - probabilityOf(here, cc)) < PROBABILITY_TOLERANCE,
        `P(<cc>) ${probabilityOf(there, cc)} vs ${probabilityOf(here, cc)}`,
      );
      for (const [id, p] of there.probabilities)
        assert.ok(Math.abs(p - (here.probabilities.get(id) ?? 0)) < PROBABILITY_TOLERANCE, `token ${id}`);
    }
  });

  it('the same greedy completion as the local engine, streamed', async () => {
    const tokens = local.tokenize([...gatePieces(LEFT, RIGHT), { special: 'fimMiddle' }]);
    const options = { maxTokens: 24, stopIds: local.info.family.stopIds };
    const here = await local.session.generate(tokens, options);
    const texts: string[] = [];
    const there = await text.session.generate(tokens, { ...options, onText: (t) => void texts.push(t) });
    assert.equal(there.text, here.text);
    assert.deepEqual(there.tokens, here.tokens);
    assert.ok(texts.length > 1, 'the text arrived in pieces');
  });

  it("the server tokenizes the prompt text back into the editor's ids; code that spells a control token stays text", async () => {
    const specials = new Set(Object.values(text.info.family.ids));
    for (const pieces of [gatePieces(LEFT, RIGHT), gatePieces(INJECTION_LEFT, '";\n')]) {
      const ids = text.tokenize(pieces);
      const sent = promptTextOf(text, ids);
      const back = (await postJson(`${server.url}/tokenize`, { content: sent, parse_special: true })) as number[];
      const controls = (list: number[]) => list.filter((id) => specials.has(id));
      // The control tokens the editor laid out, and no others: the spelled ones reached the model as text.
      assert.deepEqual(controls(back), controls(ids));
      if (pieces[1] !== undefined && 'text' in pieces[1] && pieces[1].text === LEFT) assert.deepEqual(back, ids);
    }
  });

  it('the completion engine gives the same gate score and completion over text prompts as locally', async () => {
    const [here, there] = await engineResults([local, text]);
    assert.ok(Math.abs(here.gate.score - there.gate.score) < PROBABILITY_TOLERANCE);
    assert.equal(there.gate.fire, here.gate.fire);
    assert.equal(there.text, here.text);
  });

  it("`repogate complete --engine openai-compatible --server URL/v1 --text-prompts`: the local engine's text and P(<cc>)", async () => {
    const complete = async (...flags: string[]) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [CLI, 'complete', SHOP, 'src/services/userService.ts:9:38', '--model', TINY_MODEL, '--json', ...flags],
        { timeout: 120_000 },
      );
      return JSON.parse(stdout) as {
        text: string;
        gate: { score: number };
        model: { server?: { promptFormat?: string } };
      };
    };
    const here = await complete('--engine', 'local', '--threads', '1');
    const there = await complete('--engine', 'openai-compatible', '--server', `${server.url}/v1`, '--text-prompts');
    assert.equal(there.model.server?.promptFormat, 'text');
    assert.equal(there.text, here.text);
    assert.ok(
      Math.abs(there.gate.score - here.gate.score) < PROBABILITY_TOLERANCE,
      `${there.gate.score} vs ${here.gate.score}`,
    );
  });

  it("reuses the slot's cache between keystrokes as token ids do (the server's own counts)", async () => {
    const ids = await connect('auto', server.url);
    const typed = 'findById(id);';
    const evaluated = { text: [] as number[], ids: [] as number[] };
    for (const [name, model] of [
      ['text', text],
      ['ids', ids],
    ] as const) {
      await model.session.reset();
      for (let i = 1; i <= typed.length; i++) {
        const tokens = model.tokenize(gatePieces(LEFT + typed.slice(0, i), RIGHT));
        evaluated[name].push((await model.session.probe(tokens)).evaluated);
      }
    }
    // After the first keystroke each prompt shares all but its last few tokens with the one before.
    const later = (list: number[]) => list.slice(1);
    assert.ok(Math.max(...later(evaluated.text)) < 20, `text: ${evaluated.text.join(' ')}`);
    assert.deepEqual(later(evaluated.text), later(evaluated.ids));
  });
});

/** The text the remote model sends for `ids` (what the server receives). */
function promptTextOf(model: RemoteModel, ids: number[]): string {
  return model.promptTextFor(ids);
}

async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await response.json()) as { tokens: unknown }).tokens;
}
