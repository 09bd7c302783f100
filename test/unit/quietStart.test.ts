import { strict as assert } from 'assert';
import { whenQuiet } from '../../src/vscode/quietStart';

describe('whenQuiet', () => {
  it('resolves once the event loop has kept time for the quiet span', async () => {
    const waited = await whenQuiet({ quietMs: 300, maxWaitMs: 5_000 });
    assert.ok(waited >= 300 && waited < 5_000, `waited ${waited} ms`);
  });

  it('waits until the limit while the loop keeps stalling', async () => {
    // A 60 ms block every 80 ms: every sampling tick comes late.
    const busy = setInterval(() => {
      const until = performance.now() + 60;
      while (performance.now() < until);
    }, 80);
    try {
      const waited = await whenQuiet({ quietMs: 300, maxWaitMs: 1_200 });
      assert.ok(waited >= 1_200, `waited only ${waited} ms`);
    } finally {
      clearInterval(busy);
    }
  });
});
