import { strict as assert } from 'assert';
import { RequestLedger } from '../../src/vscode/requestLedger';

describe('RequestLedger', () => {
  it('counts each outcome once, the slowest call, the calls over the limit and the ones still open', () => {
    let now = 0;
    const ledger = new RequestLedger(1000, () => now);
    const a = ledger.begin();
    const b = ledger.begin();
    const c = ledger.begin();
    now = 200;
    ledger.end(a, 'answered');
    ledger.end(a, 'failed'); // a second end of the same call is ignored
    now = 1500;
    ledger.end(b, 'cancelled');
    const d = ledger.begin();
    now = 1600;
    ledger.end(d, 'failed');
    assert.deepEqual(ledger.snapshot(), {
      answered: 1,
      empty: 0,
      cancelled: 1,
      failed: 1,
      open: 1,
      oldestOpenMs: 1600,
      slowestMs: 1500,
      overSlow: 1,
    });
    ledger.end(c, 'empty');
    assert.equal(ledger.snapshot().open, 0);
    assert.equal(ledger.snapshot().oldestOpenMs, 0);
  });
});
