/**
 * llama-server's prompt cache across line starts: with `cache_prompt` a slot keeps the KV of the prompt it last
 * evaluated, so a new line (the left context grown by the finished line) evaluates from where the prompts first
 * differ, by the server's own count (`timings.prompt_n`), not the whole prompt.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { CompletionEngine, type CompletionRequest } from '../../src/engine/completionEngine';
import { RemoteModel } from '../../src/model/remote/remoteModel';
import { SHOP } from '../helpers/fixtures';
import { BUILD_TIMEOUT_MS, startLlamaServer, type RunningServer } from '../helpers/llamaServer';
import { TINY_MODEL } from '../helpers/tinyModel';

const FILE = 'src/services/userService.ts';
/** A line ending with `;`, followed by a new line written after it. */
const FINISHED_LINE = 8;
const TYPED = 'if';
/** Tokens where the two prompts may first differ inside the left context: the merge at the last line break. */
const BOUNDARY_TOKENS = 2;

describe('llama-server reuses the stable prefix across line starts', function () {
  this.timeout(120_000);
  let server: RunningServer;
  let model: RemoteModel;
  let lines: string[];

  /** The cursor line typed up to `typed`, after the indentation; `inserted`: a new line after FINISHED_LINE. */
  const request = (line: number, typed: string, inserted: boolean): CompletionRequest => {
    const all = [...lines];
    const indent = ' '.repeat(all[FINISHED_LINE].search(/\S/));
    if (inserted) all.splice(line, 0, `${indent}${typed}`);
    else all[line] = `${indent}${typed}`;
    return {
      path: FILE,
      text: all.join('\n'),
      cursor: { line, character: indent.length + typed.length },
      mode: 'line',
    };
  };

  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS);
    server = await startLlamaServer({ model: TINY_MODEL });
    model = await RemoteModel.load({ modelPath: TINY_MODEL }, { engine: 'llama-server', url: server.url });
    lines = (await fs.readFile(path.join(SHOP, FILE), 'utf8')).split('\n');
  });
  after(async () => {
    await model?.dispose();
    await server?.stop();
  });

  it('a new line start evaluates the finished line and what follows, not the left context before it', async () => {
    const engine = new CompletionEngine({ generator: model, gate: 'never', layout: 'line' });
    await model.session.reset();
    const typing = await engine.complete(request(FINISHED_LINE, TYPED, false));
    const next = await engine.complete(request(FINISHED_LINE + 1, TYPED, true));
    await model.session.reset();
    const cold = await engine.complete(request(FINISHED_LINE + 1, TYPED, true));
    assert.equal(cold.prompt.evaluated, cold.prompt.tokens, 'from an empty slot, the whole prompt');
    const cachedLeft =
      typing.prompt.leftTokens -
      model.countTokens(request(FINISHED_LINE, TYPED, false).text.split('\n')[FINISHED_LINE]);
    assert.ok(cachedLeft > 20, `${cachedLeft} tokens of left context before the line`);
    assert.ok(
      next.prompt.evaluated <= next.prompt.tokens - cachedLeft + BOUNDARY_TOKENS,
      `${next.prompt.evaluated} of ${next.prompt.tokens} evaluated; ${cachedLeft} tokens of the left context were cached`,
    );
  });
});
