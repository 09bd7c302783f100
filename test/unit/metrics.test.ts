import { strict as assert } from 'assert';
import { editSimilarity, exactMatch, rocAuc } from '../../src/bench/metrics';

describe('generation metrics (CrossCodeEval)', () => {
  it('exact match ignores surrounding whitespace only', () => {
    assert.equal(exactMatch('  foo(bar);  ', 'foo(bar);'), true);
    assert.equal(exactMatch('foo(bar)', 'foo(bar);'), false);
  });

  it('edit similarity is thefuzz ratio: 2·LCS / total length', () => {
    assert.equal(editSimilarity('abc', 'abc'), 1);
    assert.equal(editSimilarity('', ''), 1);
    assert.equal(editSimilarity('abc', ''), 0);
    // fuzz.ratio("kitten", "sitting") = 62 (LCS "ittn" = 4; 2·4/13)
    assert.equal(Math.round(editSimilarity('kitten', 'sitting') * 100), 62);
    assert.equal(editSimilarity(' user.id ', 'user.id'), 1);
  });

  it('ROC AUC counts ties as half and is 0.5 without both classes', () => {
    const s = (score: number, positive: boolean) => ({ score, positive });
    assert.equal(rocAuc([s(0.9, true), s(0.8, true), s(0.2, false), s(0.1, false)]), 1);
    assert.equal(rocAuc([s(0.1, true), s(0.9, false)]), 0);
    assert.equal(rocAuc([s(0.5, true), s(0.5, false)]), 0.5);
    assert.equal(rocAuc([s(0.7, true), s(0.4, false), s(0.6, true), s(0.65, false)]), 0.75);
    assert.throws(() => rocAuc([s(Number.NaN, true), s(0.4, false)]), /not numbers/);
    assert.equal(rocAuc([s(1, true)]), 0.5);
  });
});
