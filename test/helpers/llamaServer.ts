/**
 * A real llama-server (built from the llama.cpp source node-llama-cpp ships, by tools/llama-server/build.sh) on
 * 127.0.0.1 with a given GGUF, and a small real HTTP proxy in front of it that misbehaves on demand: the
 * failures a user meets (an error status, garbage, a cut answer, a server that hangs) on otherwise real traffic.
 */
import { execFile, spawn, type ChildProcess } from 'child_process';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { promisify } from 'util';

const ROOT = path.resolve(__dirname, '../../..');
const BUILD_SCRIPT = path.join(ROOT, 'tools', 'llama-server', 'build.sh');

/** A fresh machine compiles llama-server (about half an hour on 2 shared cores); a cached build returns at once. */
export const BUILD_TIMEOUT_MS = 90 * 60_000;
const READY_TIMEOUT_MS = 60_000;

let binary: Promise<string> | undefined;

/** The llama-server binary, built on first use (the build script reuses a finished build). */
export function llamaServerBinary(): Promise<string> {
  binary ??= promisify(execFile)('bash', [BUILD_SCRIPT], { maxBuffer: 64 << 20, timeout: BUILD_TIMEOUT_MS }).then(
    ({ stdout }) => {
      const last = stdout.trim().split('\n').pop();
      if (!last) throw new Error('tools/llama-server/build.sh printed no binary path');
      return last;
    },
  );
  return binary;
}

export interface RunningServer {
  url: string;
  port: number;
  process: ChildProcess;
  /** What the server printed (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface ServerFlags {
  model: string;
  /** Parallel slots (-np); each gets `contextPerSlot` tokens. */
  slots?: number;
  contextPerSlot?: number;
  threads?: number;
  apiKey?: string;
  port?: number;
}

export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startLlamaServer(flags: ServerFlags): Promise<RunningServer> {
  const bin = await llamaServerBinary();
  const port = flags.port ?? (await freePort());
  const slots = flags.slots ?? 1;
  const args = [
    '-m',
    flags.model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-t',
    String(flags.threads ?? 1),
    '-np',
    String(slots),
    '-c',
    String(slots * (flags.contextPerSlot ?? 1024)),
    '--no-webui',
    ...(flags.apiKey ? ['--api-key', flags.apiKey] : []),
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer): void => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited (${child.exitCode}):\n${log}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not become ready in ${READY_TIMEOUT_MS} ms:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, port, process: child, output: () => log, stop };
}

/** The server's slots: whether each is busy (GET /slots). */
export async function slotsBusy(url: string, apiKey?: string): Promise<boolean[]> {
  const response = await fetch(`${url}/slots`, { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
  const slots = (await response.json()) as { is_processing: boolean }[];
  return slots.map((s) => s.is_processing);
}

/**
 * How the proxy answers requests to `path`: pass them on, or one of the misbehaviours. Other paths always pass.
 * 'hang' never answers; 'garbage' answers 200 with an HTML page; 'cut-json' sends half of the real answer;
 * 'cut-stream' forwards the first event of a stream and then ends it.
 */
export type Misbehaviour = 'pass' | 'status-500' | 'status-401' | 'hang' | 'garbage' | 'cut-json' | 'cut-stream';

export interface MisbehavingProxy {
  url: string;
  port: number;
  mode: Misbehaviour;
  path: string;
  close(): Promise<void>;
}

export async function startProxy(target: string, port = 0): Promise<MisbehavingProxy> {
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(req, res, Buffer.concat(chunks)));
  });
  const proxy: MisbehavingProxy = {
    url: '',
    port: 0,
    mode: 'pass',
    path: '/completion',
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> => {
    const mode = req.url?.split('?')[0] === proxy.path ? proxy.mode : 'pass';
    if (mode === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (mode === 'status-500') {
      res
        .writeHead(500, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: { code: 500, message: 'out of memory (misbehaving proxy)' } }));
      return;
    }
    if (mode === 'status-401') {
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: { code: 401, message: 'Invalid API Key' } }));
      return;
    }
    if (mode === 'garbage') {
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end('<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>');
      return;
    }
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: {
        'Content-Type': 'application/json',
        ...(req.headers.authorization ? { Authorization: req.headers.authorization } : {}),
      },
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    }).catch(() => undefined);
    if (!upstream) {
      res.writeHead(502).end('upstream down');
      return;
    }
    res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
    if (mode === 'cut-json') {
      const text = await upstream.text();
      res.end(text.slice(0, Math.floor(text.length / 2)));
      return;
    }
    const reader = upstream.body?.getReader();
    let seen = '';
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      if (res.destroyed) {
        await reader?.cancel();
        return;
      }
      if (mode !== 'cut-stream') {
        res.write(chunk.value);
        continue;
      }
      // One whole event, then the end: several events can arrive in one chunk, so cut at the event boundary.
      seen += Buffer.from(chunk.value).toString();
      const end = seen.indexOf('\n\n');
      if (end >= 0) {
        res.write(seen.slice(0, end + 2));
        await reader?.cancel();
        break;
      }
    }
    res.end();
  };
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.url = `http://127.0.0.1:${proxy.port}`;
  return proxy;
}
