/** The request bookkeeping the index client, the engine client and the engine process share. */
import { strict as assert } from 'assert';
import { PendingRequests } from '../../src/index/pendingRequests';

describe('pending requests', () => {
  it('numbers requests and settles each by its id, once', async () => {
    const requests = new PendingRequests<string, string>();
    const sent: number[] = [];
    const a = requests.request((id) => sent.push(id), 'a');
    const b = requests.request((id) => sent.push(id), 'b');
    assert.deepEqual(sent, [1, 2]);
    assert.equal(requests.extra(2), 'b');
    requests.reject(2, new Error('no'));
    requests.resolve(1, 'one');
    requests.resolve(1, 'again');
    assert.equal(await a, 'one');
    await assert.rejects(b, /no/);
    assert.equal(requests.has(1), false);
    assert.equal(requests.extra(2), undefined);
  });

  it('fails every open request when the other side goes away, and a request whose send throws', async () => {
    const requests = new PendingRequests<number>();
    const open = [requests.request(() => undefined, undefined), requests.request(() => undefined, undefined)];
    requests.rejectAll(new Error('worker exited'));
    for (const p of open) await assert.rejects(p, /worker exited/);
    await assert.rejects(
      requests.request(() => {
        throw new Error('channel closed');
      }, undefined),
      /channel closed/,
    );
    assert.equal(requests.has(3), false);
  });
});
