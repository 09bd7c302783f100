/**
 * The prompt side's remembered tokenization: a keystroke tokenizes mostly what the previous one did, and each
 * native tokenizer call has a fixed cost however short the text, so every text is tokenized once while it is
 * remembered — short ones too — and what is remembered stays bounded.
 */
import { strict as assert } from 'assert';
import { readFileSync } from 'fs';
import * as path from 'path';
import { detectFamily } from '../../src/model/families';
import { TokenizingModel } from '../../src/model/tokenModel';
import { FIXTURES } from '../helpers/fixtures';

/** A prompt side over a counting tokenizer: one token a character, so the counts are easy to check. */
class CountingModel extends TokenizingModel {
  readonly calls: string[] = [];

  constructor() {
    const fixture = JSON.parse(readFileSync(path.join(FIXTURES, 'vocab', 'qwen2.5-coder.json'), 'utf8')) as {
      tokens: { id: number; text: string }[];
    };
    const family = detectFamily({
      controlTokens: new Map(fixture.tokens.map((t) => [t.text, t.id] as const)),
      metadata: new Map(),
    });
    const calls: string[] = [];
    super(family, (text) => {
      calls.push(text);
      return [...text].map((c) => c.charCodeAt(0));
    });
    this.calls = calls;
  }
}

describe('TokenizingModel', () => {
  it('tokenizes a text once, however short, and answers the same tokens again', () => {
    const model = new CountingModel();
    const pieces = [{ text: 'const ' }, { special: 'fimPrefix' as const }, { text: 'x = 1;\n' }];
    const first = model.tokenize(pieces);
    assert.equal(model.calls.length, 2);
    assert.deepEqual(model.tokenize(pieces), first);
    assert.equal(model.countTokens('const '), 6);
    assert.deepEqual(model.calls, ['const ', 'x = 1;\n'], 'the second prompt and the count were remembered');
    model.tokenize([{ text: 'const y' }]);
    assert.equal(model.calls.length, 3, 'a new text is tokenized');
  });

  it('forgets the oldest texts once about two million characters are remembered', () => {
    const model = new CountingModel();
    const block = (i: number): string => `${i}:`.padEnd(100_000, 'x');
    for (let i = 0; i < 25; i++) model.countTokens(block(i));
    model.countTokens(block(24));
    assert.equal(model.calls.length, 25, 'the newest is still remembered');
    model.countTokens(block(0));
    assert.equal(model.calls.length, 26, 'the oldest was forgotten');
  });
});
