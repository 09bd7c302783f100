import { strict as assert } from 'assert';
import { describeTimeLeft, timeLeftMs } from '../../src/index/progressEstimate';

describe("a build's time left (Reindex Repository's progress)", () => {
  it('is the mean time per file done times the files left, once enough is known', () => {
    assert.equal(timeLeftMs(1000, 4000, 10_000), 30_000);
    assert.equal(describeTimeLeft(timeLeftMs(1000, 4000, 10_000)), 'about 30 s left');
    assert.equal(describeTimeLeft(timeLeftMs(1000, 100_000, 10_000)), 'about 17 min left');
  });

  it('says nothing while too few files or too little time have gone by, and nothing left when done', () => {
    assert.equal(timeLeftMs(10, 4000, 10_000), undefined);
    assert.equal(timeLeftMs(1000, 4000, 500), undefined);
    assert.equal(describeTimeLeft(undefined), '');
    assert.equal(timeLeftMs(4000, 4000, 10_000), 0);
    assert.equal(describeTimeLeft(0), '');
  });
});
