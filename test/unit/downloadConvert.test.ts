/**
 * Download Model… → Repoformer: download → convert → validate against a real HTTP server on 127.0.0.1 serving
 * the tiny GPTBigCode fixture in the Hugging Face hub's layout (/{repo}/resolve/main/{file} and the tree API with
 * LFS sha256), through the project's real downloader and node-llama-cpp; with a download interrupted and resumed,
 * and a checksum mismatch.
 */
import { strict as assert } from 'assert';
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { DownloadError } from '../../src/model/download';
import { fetchAndConvert } from '../../src/convert/hubCheckpoint';
import { readGguf } from '../../src/model/gguf';
import { tempDir } from '../helpers/fixtures';
import { readReference, REPOFORMER_TINY } from '../helpers/repoformerFixture';
import { writeSyntheticCheckpoint } from '../helpers/syntheticCheckpoint';

const WEIGHTS_REPO = 'xiaowu0162/repoformer-1b';
const TOKENIZER_REPO = 'xiaowu0162/repoformer-16b';
/** The files the hub stores in LFS (with a sha256 in the tree API); the small JSON files are plain git blobs. */
/** ipull's chunk: it resumes a file by whole chunks. */
const CHUNK = 5 * 2 ** 20;
const LFS = /\.(bin|safetensors)$/;

interface Hub {
  base: string;
  requests: { path: string; range?: string }[];
  /** Ranged requests for this file that start past 0 get half their bytes, then the connection stays open. */
  stall: Set<string>;
  /** Files whose sha256 the tree API reports wrongly. */
  wrongSha: Set<string>;
  /** Sizes the tree API reports instead of the real ones. */
  reportedSize: Map<string, number>;
  close(): Promise<void>;
}

/** repo -> file name -> local path of its bytes. */
type Repos = Record<string, Record<string, string>>;

async function startHub(repos: Repos): Promise<Hub> {
  const REPOS = Object.fromEntries(Object.entries(repos).map(([repo, files]) => [repo, Object.keys(files)]));
  const files = new Map<string, Buffer>();
  for (const repoFiles of Object.values(repos)) {
    for (const [n, file] of Object.entries(repoFiles)) files.set(n, await fs.readFile(file));
  }
  const hub: Omit<Hub, 'base' | 'close'> = {
    requests: [],
    stall: new Set(),
    wrongSha: new Set(),
    reportedSize: new Map(),
  };
  let sentFromZero = (): void => undefined;
  const fromZeroSent = new Promise<void>((resolve) => (sentFromZero = resolve));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hub.requests.push({ path: url.pathname, range: req.headers.range });
    const tree = /^\/api\/models\/(.+)\/tree\/main$/.exec(url.pathname);
    if (tree && REPOS[tree[1]]) {
      const entries = REPOS[tree[1]].map((name) => {
        const body = files.get(name)!;
        const size = hub.reportedSize.get(name) ?? body.length;
        const sha = createHash('sha256').update(body).digest('hex');
        return {
          type: 'file',
          path: name,
          size,
          ...(LFS.test(name)
            ? {
                lfs: {
                  oid: hub.wrongSha.has(name) ? sha.replace(/^./, (c) => (c === '0' ? '1' : '0')) : sha,
                  size,
                },
              }
            : {}),
        };
      });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(entries));
      return;
    }
    const m = /^\/(.+)\/resolve\/main\/([^/]+)$/.exec(url.pathname);
    const body = m && REPOS[m[1]]?.includes(m[2]) ? files.get(m[2]) : undefined;
    if (!m || !body) {
      res.writeHead(404).end('not found');
      return;
    }
    const r = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const start = r ? Number(r[1]) : 0;
    const end = r && r[2] ? Math.min(Number(r[2]), body.length - 1) : body.length - 1;
    res.writeHead(r ? 206 : 200, {
      'Content-Length': end - start + 1,
      'Accept-Ranges': 'bytes',
      'Content-Type': 'application/octet-stream',
      ...(r ? { 'Content-Range': `bytes ${start}-${end}/${body.length}` } : {}),
    });
    if (req.method === 'HEAD') return void res.end();
    if (hub.stall.has(m[2]) && r && start > 0) {
      // Once the chunk from 0 is complete, half of this one, and never the rest: the client cancels.
      void fromZeroSent.then(() => res.write(body.subarray(start, start + Math.floor((end - start) / 2))));
      return;
    }
    res.end(body.subarray(start, end + 1), () => {
      if (start === 0 && r) sentFromZero();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...hub,
    base: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Download Model… → Repoformer: download, convert, validate', function () {
  this.timeout(120_000);
  let hub: Hub;
  let temp: { dir: string; cleanup: () => Promise<void> };

  const fixture = (...names: string[]) => Object.fromEntries(names.map((n) => [n, path.join(REPOFORMER_TINY, n)]));
  const tokenizerRepo = { [TOKENIZER_REPO]: fixture('tokenizer.json', 'added_tokens.json') };

  beforeEach(async () => {
    temp = await tempDir('repogate-hub-');
    hub = await startHub({ [WEIGHTS_REPO]: fixture('config.json', 'pytorch_model.bin'), ...tokenizerRepo });
  });
  afterEach(async () => {
    await hub.close();
    await temp.cleanup();
  });

  const options = (signal?: AbortSignal) => ({
    hubBaseUrl: hub.base,
    repo: WEIGHTS_REPO,
    tokenizerRepo: TOKENIZER_REPO,
    directory: path.join(temp.dir, 'repoformer-1b-source'),
    out: path.join(temp.dir, 'models', 'repoformer-1b.q8_0.gguf'),
    signal,
  });

  it('resumes an interrupted weights download, converts, and validates a model with the <cc> gate', async () => {
    // A weights file past the downloader's 5 MiB chunks (ipull resumes whole chunks), served as safetensors.
    const synthetic = path.join(temp.dir, 'synthetic');
    await writeSyntheticCheckpoint(synthetic, { nEmbd: 256, nHead: 4, nLayer: 2, nPositions: 256 });
    await hub.close();
    const served = {
      'config.json': path.join(synthetic, 'config.json'),
      'model.safetensors': path.join(synthetic, 'model.safetensors'),
    };
    hub = await startHub({ [WEIGHTS_REPO]: served, ...tokenizerRepo });
    hub.stall.add('model.safetensors');
    const size = (await fs.stat(served['model.safetensors'])).size;
    const sent = CHUNK + Math.floor((size - 1 - CHUNK) / 2);
    const abort = new AbortController();
    let seen = 0;
    await assert.rejects(
      fetchAndConvert({
        ...options(abort.signal),
        onDownloadProgress: (p) => {
          seen = Math.max(seen, p.downloadedBytes);
          // The first chunk is complete and the half of the second that the server sends has arrived.
          if (p.file === 'model.safetensors' && p.downloadedBytes >= sent) abort.abort();
        },
      }),
      (error: unknown) => error instanceof DownloadError && error.code === 'cancelled',
    );
    assert.ok(seen > CHUNK && seen < size, `interrupted part-way (${seen} of ${size} bytes)`);
    await assert.rejects(fs.stat(options().out), 'no model after a cancelled download');

    hub.stall.clear();
    const before = hub.requests.length;
    const stages: string[] = [];
    const result = await fetchAndConvert({ ...options(), onStage: (stage) => stages.push(stage) });
    assert.deepEqual([...new Set(stages)], ['download', 'convert', 'validate']);
    const again = hub.requests.slice(before).filter((r) => r.path.endsWith('/model.safetensors') && r.range);
    const starts = again.map((r) => Number(/=(\d+)/.exec(r.range!)![1]));
    assert.ok(
      starts.length > 0 && starts.every((s) => s > 0),
      `only the unfinished part was fetched again: ${JSON.stringify(again)}`,
    );
    const source = await fs.readFile(served['model.safetensors']);
    assert.ok(source.equals(await fs.readFile(path.join(result.sourceDirectory, 'model.safetensors'))));
    const header = await readGguf(result.modelPath);
    assert.equal(header.metadata.get('general.architecture'), 'starcoder');
    assert.equal(header.metadata.get('repogate.gate_token'), '<cc>');
    assert.ok(hub.requests.some((r) => r.path === `/${TOKENIZER_REPO}/resolve/main/tokenizer.json`));
  });

  it('downloads a .bin checkpoint (the 1b layout), converts and validates it', async () => {
    const result = await fetchAndConvert(options());
    assert.equal(
      (await readGguf(result.modelPath)).metadata.get('repogate.gate_token_id'),
      (await readReference()).ccId,
    );
  });

  it('rejects a checksum mismatch: no weights file under its name, no model', async () => {
    hub.wrongSha.add('pytorch_model.bin');
    await assert.rejects(fetchAndConvert(options()), (error: unknown) => {
      assert.ok(error instanceof DownloadError);
      assert.equal(error.code, 'checksum');
      assert.match(error.message, /pytorch_model\.bin has sha256 [0-9a-f]{64}, expected/);
      return true;
    });
    await assert.rejects(fs.stat(path.join(options().directory, 'pytorch_model.bin')));
    await assert.rejects(fs.stat(options().out));
  });

  it('checks free disk space before downloading anything', async () => {
    hub.reportedSize.set('pytorch_model.bin', 1e16);
    await assert.rejects(fetchAndConvert(options()), (error: unknown) => {
      assert.ok(error instanceof DownloadError);
      assert.equal(error.code, 'disk');
      assert.match(error.message, /Not enough disk space: .* needed .* free in /);
      return true;
    });
    assert.equal(hub.requests.filter((r) => r.path.includes('/resolve/')).length, 0, 'no file was requested');
  });

  it('names a missing repository', async () => {
    await assert.rejects(
      fetchAndConvert({ ...options(), repo: 'xiaowu0162/repoformer-9z' }),
      /Listing xiaowu0162\/repoformer-9z failed: HTTP 404/,
    );
  });
});
