import { strict as assert } from 'assert';
import { SkipMemory } from '../../src/index/skipMemory';

describe('skip memory', () => {
  it('answers for a file only while its stat is the one it was left out at, and only for lasting reasons', () => {
    const memory = new SkipMemory();
    assert.equal(memory.remember('a.js', { mtimeMs: 1, size: 2 }, 'minified'), true);
    assert.equal(memory.remember('a.js', { mtimeMs: 1, size: 2 }, 'minified'), false, 'nothing new');
    assert.equal(memory.remember('gone.js', { mtimeMs: 1, size: 2 }, 'vanished'), false, 'a failed read is retried');
    assert.equal(memory.reasonFor('a.js', { mtimeMs: 1, size: 2 }), 'minified');
    assert.equal(memory.reasonFor('a.js', { mtimeMs: 3, size: 2 }), undefined);
    assert.equal(memory.reasonFor('a.js', { mtimeMs: 1, size: 4 }), undefined);
    assert.equal(memory.reasonFor('gone.js', { mtimeMs: 1, size: 2 }), undefined);
    memory.keepOnly(new Set(['b.js']));
    assert.equal(memory.reasonFor('a.js', { mtimeMs: 1, size: 2 }), undefined, 'no longer in the workspace');
  });

  it("takes a cache's entries and passes over any not of their shape", () => {
    const memory = new SkipMemory();
    memory.remember('old.js', { mtimeMs: 1, size: 1 }, 'binary');
    memory.restore([['a.js', 1, 2, 'minified'], ['b.js', '1', 2, 'binary'], 'c.js', ['d.js', 1, 2, 'secret'], null]);
    assert.deepEqual(memory.entries(), [['a.js', 1, 2, 'minified']]);
    memory.restore(undefined);
    assert.deepEqual(memory.entries(), []);
  });
});
