/**
 * downloadModel against a real HTTP server on 127.0.0.1 that serves the tiny fixture model with Content-Length,
 * Accept-Ranges and 206 ranges, through node-llama-cpp's real downloader (ipull). The interruption is made
 * deterministic without throttling: ipull fetches the fixture as two parallel ranged requests (5 MiB chunks); the
 * server answers the one from 0 in full, holds the other until the client has that first chunk, then sends half of
 * it and stalls; the test cancels once that half has arrived.
 */
import { strict as assert } from 'assert';
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { DownloadError, RECOMMENDED_MODELS, downloadModel, type DownloadProgress } from '../../src/model/download';
import { importNodeLlamaCpp } from '../../src/model/nodeLlamaCpp';
import { FIXTURES, tempDir } from '../helpers/fixtures';

const FIXTURE = path.join(FIXTURES, 'models', 'repogate-tiny.gguf');

interface Served {
  range: string | undefined;
  headers: http.IncomingHttpHeaders;
}

interface TestServer {
  url: string;
  requests: Served[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function startServer(handler: Handler): Promise<TestServer> {
  const requests: Served[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ range: req.headers.range, headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/models/repogate-tiny.gguf`,
    requests,
    close: () => {
      // ipull leaves the body of its first, size-probing GET unread; drop that socket instead of waiting for it.
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The requested byte range, or the whole body when there is no (valid) Range header. */
function byteRange(req: http.IncomingMessage, size: number): { start: number; end: number; partial: boolean } {
  const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (!m) return { start: 0, end: size - 1, partial: false };
  return { start: Number(m[1]), end: m[2] ? Math.min(Number(m[2]), size - 1) : size - 1, partial: true };
}

function writeHead(res: http.ServerResponse, body: Buffer, r: { start: number; end: number; partial: boolean }): void {
  res.writeHead(r.partial ? 206 : 200, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(r.end - r.start + 1),
    'Accept-Ranges': 'bytes',
    ...(r.partial ? { 'Content-Range': `bytes ${r.start}-${r.end}/${body.length}` } : {}),
  });
}

function serveFile(body: Buffer): Handler {
  return (req, res) => {
    const r = byteRange(req, body.length);
    writeHead(res, body, r);
    res.end(body.subarray(r.start, r.end + 1));
  };
}

const rangeStart = (s: Served): number | undefined =>
  s.range ? Number(/^bytes=(\d+)-/.exec(s.range)?.[1]) : undefined;

async function listDir(dir: string): Promise<string[]> {
  return (await fs.readdir(dir)).sort();
}

describe('model download (node-llama-cpp downloader, real HTTP server)', function () {
  this.timeout(20_000);
  let fixture: Buffer;
  let fixtureSha: string;
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: TestServer | undefined;

  before(async () => {
    await importNodeLlamaCpp(); // its first import takes seconds; keep that out of the first case
    fixture = await fs.readFile(FIXTURE);
    fixtureSha = createHash('sha256').update(fixture).digest('hex');
  });
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('repogate-download-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await cleanup();
  });

  it('downloads a file equal to the source, reporting progress with speed, and verifies its sha256', async () => {
    server = await startServer(serveFile(fixture));
    const progress: DownloadProgress[] = [];
    const result = await downloadModel({
      url: server.url,
      directory: dir,
      sha256: fixtureSha.toUpperCase(),
      headers: { 'X-RepoGate-Test': 'yes' },
      onProgress: (p) => progress.push(p),
    });

    assert.equal(result, path.join(dir, 'repogate-tiny.gguf'));
    assert.ok((await fs.readFile(result)).equals(fixture), 'downloaded bytes differ from the fixture');
    assert.deepEqual(await listDir(dir), ['repogate-tiny.gguf'], 'only the final file is left');
    assert.ok(
      server.requests.every((r) => r.headers['x-repogate-test'] === 'yes'),
      'headers reach every request',
    );

    assert.ok(progress.length > 0, 'progress was reported');
    assert.ok(progress.every((p) => p.totalBytes === fixture.length));
    assert.equal(progress[progress.length - 1].downloadedBytes, fixture.length);
    const moving = progress.filter((p) => p.bytesPerSecond > 0);
    assert.ok(moving.length > 0, 'a speed was measured');
    assert.ok(
      moving.every((p) => p.etaSeconds !== undefined && p.etaSeconds >= 0),
      'a speed gives an ETA',
    );
  });

  it('resumes an interrupted download with a ranged request and gets the same bytes', async () => {
    let firstCall = true;
    // The first call's later range is held back until the range from 0 is complete on the client, then half of it
    // is sent and the connection kept open: the cancel, not a network error (which ipull retries within the call),
    // ends that attempt, with the first chunk done and the second not.
    let held: { start: number; sent: number; release(): void } | undefined;
    let released = false;
    let downloaded = 0;
    const releaseWhenFirstChunkDone = (): void => {
      if (held && !released && downloaded >= held.start) {
        released = true;
        held.release();
      }
    };
    const whole = serveFile(fixture);
    server = await startServer((req, res) => {
      const r = byteRange(req, fixture.length);
      if (!firstCall || !r.partial || r.start === 0) return whole(req, res);
      writeHead(res, fixture, r);
      const sent = Math.floor((r.end - r.start + 1) / 2);
      held = { start: r.start, sent, release: () => res.write(fixture.subarray(r.start, r.start + sent)) };
      releaseWhenFirstChunkDone();
    });

    const controller = new AbortController();
    // ipull writes a finished chunk, then its chunk map (past the file's bytes), without waiting for either, and
    // its cancel does not wait for them: the cancel comes once both are on disk (a moment later, as for a user).
    let aborting = false;
    const abortOnceFirstChunkOnDisk = async (start: number): Promise<void> => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        const part = (await listDir(dir)).find((name) => name.endsWith('.part.ipull'));
        const bytes = part ? await fs.readFile(path.join(dir, part)) : Buffer.alloc(0);
        if (bytes.length > fixture.length && bytes.subarray(0, start).equals(fixture.subarray(0, start))) break;
      }
      controller.abort();
    };
    const first = downloadModel({
      url: server.url,
      directory: dir,
      signal: controller.signal,
      onProgress: (p) => {
        downloaded = p.downloadedBytes;
        if (!(released && held && downloaded >= held.start + held.sent)) releaseWhenFirstChunkDone();
        else if (!aborting) {
          aborting = true;
          void abortOnceFirstChunkOnDisk(held.start);
        }
      },
    });
    await assert.rejects(first, (e: unknown) => e instanceof DownloadError && e.code === 'cancelled');
    assert.ok(held, 'the server saw a ranged request that did not start at 0');
    const kept = await listDir(dir);
    assert.equal(kept.length, 1, `one partial file is kept, found ${kept.join(', ')}`);
    assert.match(kept[0], /^repogate-tiny\.gguf\..+\.part\.ipull$/);
    assert.ok(!kept.includes('repogate-tiny.gguf'), 'nothing under the final name');

    firstCall = false;
    const before = server.requests.length;
    const result = await downloadModel({ url: server.url, directory: dir });
    const second = server.requests.slice(before);
    const starts = second.map(rangeStart).filter((s): s is number => s !== undefined);
    assert.ok(starts.length > 0, 'the second call made ranged requests');
    assert.ok(
      starts.every((s) => s > 0),
      `the second call requested only what was missing, from ${starts.join(', ')}`,
    );
    assert.ok(starts.includes(held.start), 'it re-fetched the interrupted chunk');
    assert.ok((await fs.readFile(result)).equals(fixture), 'the resumed file differs from the fixture');
    assert.deepEqual(await listDir(dir), ['repogate-tiny.gguf']);
  });

  it('rejects a checksum mismatch and leaves neither the final name nor a partial file', async () => {
    server = await startServer(serveFile(fixture));
    await assert.rejects(
      downloadModel({ url: server.url, directory: dir, sha256: '0'.repeat(64) }),
      (e: unknown) =>
        e instanceof DownloadError && e.code === 'checksum' && e.message.includes(fixtureSha) && e.hint.length > 0,
    );
    assert.deepEqual(await listDir(dir), []);
  });

  it('rejects an HTML page served with 200 as not-gguf and leaves nothing behind', async () => {
    const page = Buffer.from('<!doctype html><html><head><title>Sign in</title></head><body>Sign in</body></html>');
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(page.length) });
      res.end(page);
    });
    await assert.rejects(
      downloadModel({ url: server.url, directory: dir, fileName: 'model.gguf' }),
      (e: unknown) => e instanceof DownloadError && e.code === 'not-gguf',
    );
    assert.deepEqual(await listDir(dir), []);
  });

  it('cancels at once while the server has not answered yet', async () => {
    // createModelDownloader takes no signal; the answer comes only after the cancel, and is then discarded.
    server = await startServer((req, res) => setTimeout(() => serveFile(fixture)(req, res), 400));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await assert.rejects(
      downloadModel({ url: server.url, directory: dir, signal: controller.signal }),
      (e: unknown) => e instanceof DownloadError && e.code === 'cancelled',
    );
    assert.ok(Date.now() - started < 350, `cancel took ${Date.now() - started} ms`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.deepEqual(await listDir(dir), []);
  });

  it('recommends direct .gguf links on Hugging Face', () => {
    assert.ok(RECOMMENDED_MODELS.length > 0);
    for (const m of RECOMMENDED_MODELS) {
      const url = new URL(m.url);
      assert.equal(url.hostname, 'huggingface.co', m.id);
      assert.match(url.pathname, /\/resolve\/[0-9a-f]{40}\//, `${m.id} pins a commit`);
      assert.equal(path.posix.basename(url.pathname), m.fileName, m.id);
      assert.match(m.fileName, /\.gguf$/, m.id);
      assert.ok(m.sizeBytes > 100e6, m.id);
      if (m.sha256 !== undefined) assert.match(m.sha256, /^[0-9a-f]{64}$/, m.id);
    }
    assert.equal(new Set(RECOMMENDED_MODELS.map((m) => m.id)).size, RECOMMENDED_MODELS.length);
  });
});
