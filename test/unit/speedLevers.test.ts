/**
 * The per-keystroke levers on the real tiny model: the 'line' layout (typing within a line appends to the prompt,
 * so a keystroke evaluates a few tokens even with cross-file context, which is retrieved once per line), the time
 * budget for cold prompts (a short prompt first, the full one grown into the cache during a pause), and the
 * first-token statistics behind the slow-machine notice.
 */
import { strict as assert } from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { CompletionEngine, type CompletionRequest } from '../../src/engine/completionEngine';
import { CompletionStats } from '../../src/engine/stats';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { CodeModel } from '../../src/model/codeModel';
import { leftEnd } from '../../src/model/promptBudget';
import { retrieve } from '../../src/retrieval/retrieve';
import { SHOP } from '../helpers/fixtures';
import { TINY_MODEL } from '../helpers/tinyModel';

const FILE = 'src/services/userService.ts';
const CURSOR_LINE = 8;

describe('per-keystroke speed levers on the tiny model', function () {
  this.timeout(180_000);
  let model: CodeModel;
  let index: RepoIndex;
  let text: string;
  let retrievals = 0;
  const engine = (options: Partial<ConstructorParameters<typeof CompletionEngine>[0]> = {}): CompletionEngine =>
    new CompletionEngine({
      generator: model,
      gate: 'never',
      retrieve: async (r) => {
        retrievals++;
        return retrieve(index, r);
      },
      ...options,
    });
  /** The document while the cursor line is typed up to `column` (the rest of the line not yet there). */
  const typedTo = (column: number): CompletionRequest => {
    const lines = text.split('\n');
    lines[CURSOR_LINE] = lines[CURSOR_LINE].slice(0, column);
    return { path: FILE, text: lines.join('\n'), cursor: { line: CURSOR_LINE, character: column }, mode: 'line' };
  };
  const indent = (): number => text.split('\n')[CURSOR_LINE].search(/\S/);

  before(async () => {
    model = await CodeModel.load({ modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 });
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
    text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
  });
  after(async () => {
    index?.dispose();
    await model?.dispose();
  });

  it('ends the left context at the line start, or at the cursor for the cursor layout and very long lines', () => {
    const doc = 'a\n  const x = 1';
    assert.equal(leftEnd(doc, doc.length, 'line'), 2);
    assert.equal(leftEnd(doc, doc.length, 'cursor'), doc.length);
    assert.equal(leftEnd(doc, 0, 'line'), 0);
    const long = `a\n${'x'.repeat(1000)}`;
    assert.equal(leftEnd(long, long.length, 'line'), long.length);
  });

  it('measures the prompt speed at load', () => {
    const ms = model.session.promptMsPerToken;
    assert.ok(ms !== undefined && ms > 0 && ms < 1000, `${ms} ms per token`);
  });

  for (const gate of ['never', 'always'] as const) {
    it(`${gate}: a keystroke within a line evaluates a few tokens${gate === 'always' ? ', the context retrieved once per line' : ''}`, async () => {
      await model.session.reset();
      retrievals = 0;
      const e = engine({ gate, firstPromptMs: 0, layout: 'line' });
      const start = await e.complete(typedTo(indent() + 2));
      const evaluated: number[] = [];
      for (let k = 3; k <= 8; k++) evaluated.push((await e.complete(typedTo(indent() + k))).prompt.evaluated);
      assert.ok(start.prompt.evaluated > 100, `the line start evaluates the prompt (${start.prompt.evaluated})`);
      assert.ok(Math.max(...evaluated) <= 4, `keystrokes evaluated ${evaluated.join(', ')}`);
      if (gate === 'always') {
        assert.ok(start.prompt.contextTokens > 0);
        assert.equal(retrievals, 1, 'retrieved at the line start only');
      }
    });
  }

  it('the cursor layout re-evaluates what follows the cursor on every keystroke', async () => {
    await model.session.reset();
    const e = engine({ firstPromptMs: 0, layout: 'cursor' });
    await e.complete(typedTo(indent() + 2));
    const next = await e.complete(typedTo(indent() + 3));
    assert.ok(
      next.prompt.evaluated > next.prompt.rightTokens,
      `${next.prompt.evaluated} evaluated, right context ${next.prompt.rightTokens}`,
    );
  });

  it('cuts a cold prompt to the time budget, then grows the cached prompt during a pause', async () => {
    await model.session.reset();
    const full = await engine({ firstPromptMs: 0, layout: 'line' }).complete(typedTo(indent() + 2));
    await model.session.reset();
    // A budget for about twenty tokens: a keystroke fits, the whole prompt does not.
    const e = engine({ firstPromptMs: model.session.promptMsPerToken! * 20, layout: 'line' });
    const quick = await e.complete(typedTo(indent() + 2));
    assert.ok(
      quick.prompt.tokens < full.prompt.tokens / 2,
      `cut to ${quick.prompt.tokens} of ${full.prompt.tokens} tokens`,
    );
    await e.settled();
    const grown = await e.complete(typedTo(indent() + 3));
    // The full left context, with one more character typed (which may or may not add a token).
    assert.ok(
      Math.abs(grown.prompt.leftTokens - full.prompt.leftTokens) <= 1,
      `${grown.prompt.leftTokens} vs ${full.prompt.leftTokens}`,
    );
    assert.ok(grown.prompt.evaluated <= 4, `${grown.prompt.evaluated} evaluated after the growth`);
  });

  it('shows an unfinished first line once generation runs past showWithinMs, and stops a line completion there', async () => {
    await model.session.reset();
    const whole = await engine({ firstPromptMs: 0, layout: 'line', showWithinMs: 0 }).complete(typedTo(indent()));
    await model.session.reset();
    const shown: string[] = [];
    // Late from the second piece of text on: the line is cut after a token or two.
    const capped = await engine({ firstPromptMs: 0, layout: 'line', showWithinMs: 1e-3 }).complete(typedTo(indent()), {
      onPartial: (text) => shown.push(text),
    });
    assert.ok(capped.raw.length < whole.raw.length, `${JSON.stringify(capped.raw)} vs ${JSON.stringify(whole.raw)}`);
    assert.ok(whole.raw.startsWith(capped.raw), 'greedy: the capped text is the start of the whole one');
    assert.ok(!capped.aborted && capped.text !== '', 'the capped line is a completion');
    assert.equal(shown.at(-1), capped.text);
  });

  it('warms the cache for the cursor line (a file opened): the first request there evaluates only its tail', async () => {
    await model.session.reset();
    const cold = await engine({ firstPromptMs: 0, layout: 'cursor' }).complete(typedTo(indent() + 4));
    await model.session.reset();
    const e = engine({ firstPromptMs: 0, layout: 'cursor' });
    e.warm(typedTo(0));
    await e.settled();
    const warmed = await e.complete(typedTo(indent() + 4));
    assert.equal(warmed.prompt.tokens, cold.prompt.tokens, 'the same prompt');
    // Only the cursor line's start and what follows the cursor: the left context up to the line was cached.
    const tail = cold.prompt.evaluated - cold.prompt.leftTokens;
    assert.ok(
      warmed.prompt.evaluated <= tail + 8,
      `${warmed.prompt.evaluated} evaluated after the warm-up, ${cold.prompt.evaluated} cold (left ${cold.prompt.leftTokens})`,
    );
  });

  /** The document with a new line after the cursor line, typed up to `typed` (the finished line above it). */
  const newLine = (typed: string): CompletionRequest => {
    const lines = text.split('\n');
    const line = `${' '.repeat(indent())}${typed}`;
    lines.splice(CURSOR_LINE + 1, 0, line);
    return {
      path: FILE,
      text: lines.join('\n'),
      cursor: { line: CURSOR_LINE + 1, character: line.length },
      mode: 'line',
    };
  };
  /** The cursor at the end of the finished cursor line (it ends with `;`). */
  const lineEnd = (): CompletionRequest => typedTo(text.split('\n')[CURSOR_LINE].length);
  /** The time budget on (it also enables the background work), but far above what any prompt here takes. */
  const NO_CUT_MS = 60_000;

  it('prepares the next line during a pause at the end of a finished line: its start evaluates only the typed part', async () => {
    await model.session.reset();
    const e = engine({ gate: 'always', firstPromptMs: NO_CUT_MS, layout: 'line' });
    await e.complete(lineEnd());
    await e.settled();
    retrievals = 0;
    const start = await e.complete(newLine('if'));
    assert.ok(start.prompt.contextTokens > 0 && start.snippets.length > 0, 'with cross-file context');
    assert.equal(retrievals, 0, 'retrieved during the pause');
    // The same line start from an empty cache (its gate decision and context are known by now).
    await model.session.reset();
    const unprepared = await engine({ gate: 'always', firstPromptMs: NO_CUT_MS, layout: 'line' }).complete(
      newLine('if'),
    );
    assert.equal(unprepared.prompt.tokens, start.prompt.tokens, 'the same prompt');
    assert.ok(
      start.prompt.evaluated <= 4,
      `${start.prompt.evaluated} evaluated after the pause, ${unprepared.prompt.evaluated} without it`,
    );
    assert.ok(unprepared.prompt.evaluated > 100, `${unprepared.prompt.evaluated} evaluated without the pause`);
  });

  it('heuristic: decides once per line start, not per keystroke, even when the time budget grows the prompt', async () => {
    await model.session.reset();
    const trials: string[][] = [];
    const e = engine({
      gate: 'heuristic',
      firstPromptMs: model.session.promptMsPerToken! * 20,
      layout: 'line',
      retrieve: async (r) => {
        if (r.names) trials.push([...r.names]);
        return retrieve(index, r);
      },
    });
    const start = await e.complete(typedTo(indent() + 2));
    await e.settled();
    const keystrokes = [];
    for (let k = 3; k <= 6; k++) keystrokes.push(await e.complete(typedTo(indent() + k)));
    assert.ok(keystrokes[0].prompt.leftTokens > start.prompt.leftTokens, 'the prompt grew during the pause');
    assert.equal(trials.length, 1, 'one trial retrieval (and draft) for the line');
    for (const k of keystrokes) {
      assert.equal(k.gate.score, start.gate.score, 'the line start decision');
      assert.ok(k.timings.gateMs < 1, `${k.timings.gateMs} ms in the gate`);
    }
  });

  it('reports the median first-token time after five requests (the slow-machine notice)', () => {
    const stats = new CompletionStats();
    for (const ms of [1200, 1500, 1300, 1400]) stats.recordFirstToken(ms);
    assert.equal(stats.snapshot().firstTokenP50Ms, undefined);
    stats.recordFirstToken(1100);
    assert.equal(stats.snapshot().firstTokenP50Ms, 1300);
  });
});
