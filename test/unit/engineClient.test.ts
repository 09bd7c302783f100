/**
 * The engine in its own process, driven like the extension drives it: the real tiny model loads there, completions
 * stream back, retrieval is a round trip to this side, aborts reach it, bad files become error states, and a crash
 * of that process fails the pending request and leaves this one running.
 */
import { strict as assert } from 'assert';
import { execFileSync } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import type { CompletionRequest } from '../../src/engine/completionEngine';
import { EngineClient } from '../../src/engine/engineClient';
import type { RemoteModelState } from '../../src/engine/engineProtocol';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import { retrieve } from '../../src/retrieval/retrieve';
import type { RetrievalRequest } from '../../src/retrieval/types';
import { SHOP, tempDir } from '../helpers/fixtures';
import { TINY_MODEL } from '../helpers/tinyModel';

const FILE = 'src/services/userService.ts';

/** The engine processes this test process has forked (through the launcher thread, so they are its children). */
function engineProcesses(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('engineProcess.js'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('engine process', function () {
  this.timeout(120_000);
  let client: EngineClient;
  let index: RepoIndex;
  let request: CompletionRequest;
  const states: RemoteModelState['kind'][] = [];
  const retrievals: RetrievalRequest[] = [];

  before(async () => {
    index = new RepoIndex(SHOP);
    await buildIndex(index, { root: SHOP });
    const text = await fs.readFile(path.join(SHOP, FILE), 'utf8');
    const line = text.split('\n')[8];
    request = { path: FILE, text, cursor: { line: 8, character: line.indexOf('this.repo.') + 'this.repo.'.length } };
    client = new EngineClient((state) => states.push(state.kind));
    client.retrieve = async (r) => {
      retrievals.push(r);
      return retrieve(index, r);
    };
  });
  after(async () => {
    await client?.dispose();
    index?.dispose();
  });

  it('loads the model in the child and reports its info', async () => {
    const state = await client.load({ generator: { modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 } });
    assert.equal(state.kind, 'ready');
    assert.deepEqual(states.slice(-2), ['loading', 'ready']);
    if (state.kind === 'ready') {
      assert.equal(state.generator.family.family.id, 'repogate-tiny');
      assert.equal(state.generator.backend, 'cpu');
    }
  });

  it('completes there, asking this side for retrieval when the gate fires', async () => {
    client.configure({ gate: 'always', retrieval: true });
    const result = await client.complete(request);
    assert.equal(result.gate.fire, true);
    assert.equal(retrievals.length, 1);
    assert.ok(result.snippets.some((s) => s.path === 'src/db/userRepo.ts'));
    client.configure({ gate: 'never', retrieval: true });
    const plain = await client.complete(request);
    assert.equal(plain.gate.fire, false);
    assert.equal(retrievals.length, 1);
  });

  it('streams partial text and honours an abort', async () => {
    client.configure({ gate: 'never', retrieval: false });
    const partials: string[] = [];
    const streamed = await client.complete({ ...request, mode: 'multiline' }, { onPartial: (t) => partials.push(t) });
    if (streamed.text) assert.ok(partials.length > 0);
    const controller = new AbortController();
    controller.abort();
    const aborted = await client.complete(request, { signal: controller.signal });
    assert.equal(aborted.aborted, true);
  });

  it('loads another model in a fresh process: the one that held the old model has exited', async () => {
    const before = engineProcesses();
    assert.equal(before.length, 1);
    assert.equal((await client.load({ generator: { modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 } })).kind, 'ready');
    const after = engineProcesses();
    assert.equal(after.length, 1);
    assert.notEqual(after[0], before[0]);
    assert.equal(typeof (await client.complete(request)).text, 'string');
  });

  it("turns a bad model file into an error state with the file check's message", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const bad = path.join(dir, 'page.gguf');
      await fs.writeFile(bad, '<!DOCTYPE html><html><body>Not found</body></html>');
      const state = await client.load({ generator: { modelPath: bad, threads: 1, gpuLayers: 0 } });
      assert.equal(state.kind, 'error');
      if (state.kind === 'error') {
        assert.match(state.message, /is not a GGUF model file/);
        assert.ok(state.hint);
      }
      await assert.rejects(client.complete(request), /no model is loaded/);
    } finally {
      await cleanup();
    }
  });

  it('survives the engine process dying: the request fails, the state says so, a new load recovers', async () => {
    assert.equal((await client.load({ generator: { modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 } })).kind, 'ready');
    const child = (client as unknown as { child: { kill(): void } }).child;
    const pending = client.complete({ ...request, mode: 'multiline' });
    child.kill();
    await assert.rejects(pending, /engine process exited/);
    assert.equal(client.state.kind, 'error');
    assert.equal((await client.load({ generator: { modelPath: TINY_MODEL, threads: 1, gpuLayers: 0 } })).kind, 'ready');
    assert.equal(typeof (await client.complete(request)).text, 'string');
  });
});
