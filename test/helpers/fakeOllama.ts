/**
 * A FAKE Ollama server: Ollama cannot be installed on these machines (no network but the npm registry and
 * Debian's packages), so this replays its documented wire format (ollama/ollama docs/api.md; logprobs as
 * ollama-python 0.6.1 reads them) on 127.0.0.1: /api/version, /api/tags, /api/show with a Modelfile naming the
 * GGUF, and /api/generate with `raw` prompts, NDJSON streaming, `logprobs`/`top_logprobs` named by token text, a
 * load request without a prompt, and Ollama's error bodies. Behind it runs the real tiny model through
 * node-llama-cpp: the raw text is tokenized with special-token parsing, as Ollama does, so what comes back is a
 * real model's answer to what a real Ollama would have evaluated.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { CodeModel, getSharedLlama } from '../../src/model/codeModel';
import { olderThan } from '../../src/model/remote/ollama';

export interface FakeOllamaOptions {
  /** Model name to GGUF path: what /api/tags lists and /api/show points at. */
  models: Record<string, string>;
  /** What /api/version says; before 0.12.11 no logprobs are returned, as with a real Ollama of that age. */
  version?: string;
  /** The first request for a model waits this long, as Ollama does while it loads the weights. */
  loadDelayMs?: number;
  /** A pause before each streamed line (to cancel in mid-stream). */
  tokenDelayMs?: number;
}

export interface FakeOllama {
  url: string;
  /** Every /api/generate body received, in order. */
  requests: Record<string, unknown>[];
  /** Lines streamed by the latest streaming request, and whether its client closed the connection first. */
  lastStream: { lines: number; closedEarly: boolean; finished: boolean };
  stop(): Promise<void>;
}

const DEFAULT_VERSION = '0.13.1';

export async function startFakeOllama(options: FakeOllamaOptions): Promise<FakeOllama> {
  const loaded = new Map<string, { model: CodeModel; vocabulary: LlamaModel }>();
  const requests: Record<string, unknown>[] = [];
  const lastStream = { lines: 0, closedEarly: false, finished: false };
  const version = options.version ?? DEFAULT_VERSION;
  const logprobs = !olderThan(version, '0.12.11');
  let queue = Promise.resolve();

  const load = async (name: string): Promise<{ model: CodeModel; vocabulary: LlamaModel }> => {
    let entry = loaded.get(name);
    if (entry) return entry;
    await sleep(options.loadDelayMs ?? 0);
    entry = loaded.get(name);
    if (entry) return entry;
    const modelPath = options.models[name];
    const model = await CodeModel.load({ modelPath, threads: 1, gpuLayers: 0, contextSize: 1024 });
    const vocabulary = await (await getSharedLlama()).loadModel({ modelPath, vocabOnly: true });
    entry = { model, vocabulary };
    loaded.set(name, entry);
    return entry;
  };
  const piece = (vocabulary: LlamaModel, id: number): string => vocabulary.detokenize([id as Token], true);

  const generate = async (
    body: Record<string, unknown>,
    res: http.ServerResponse,
    closed: AbortSignal,
  ): Promise<void> => {
    const name = String(body.model);
    if (!(name in options.models)) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: `model '${name}' not found` }));
      return;
    }
    const { model, vocabulary } = await load(name);
    const created_at = new Date().toISOString();
    if (typeof body.prompt !== 'string' || body.prompt === '') {
      json(res, { model: name, created_at, response: '', done: true, done_reason: 'load' });
      return;
    }
    const opts = (body.options ?? {}) as Record<string, unknown>;
    const tokens = vocabulary.tokenize(body.prompt, true).map(Number);
    const top = Number(body.top_logprobs ?? 0);
    const entry = (id: number, p: number, k: number) => ({
      token: piece(vocabulary, id),
      logprob: Math.log(p),
      bytes: [...Buffer.from(piece(vocabulary, id))],
      ...(k > 0 ? { top_logprobs: [] } : {}),
    });
    if (body.stream === false) {
      const probe = await model.session.probe(tokens);
      const ranked = [...probe.probabilities].sort((a, b) => b[1] - a[1]);
      const [best] = ranked;
      json(res, {
        model: name,
        created_at,
        response: piece(vocabulary, best[0]),
        done: true,
        done_reason: 'length',
        prompt_eval_count: probe.evaluated,
        eval_count: 1,
        ...(logprobs && body.logprobs
          ? {
              logprobs: [
                {
                  ...entry(best[0], best[1], 0),
                  top_logprobs: ranked.slice(0, top).map(([id, p]) => entry(id, p, 0)),
                },
              ],
            }
          : {}),
      });
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    Object.assign(lastStream, { lines: 0, closedEarly: false, finished: false });
    const stops = (Array.isArray(opts.stop) ? opts.stop : []).map(String);
    const stopIds = stops
      .map((s) => vocabulary.tokenize(s, true).map(Number))
      .filter((t) => t.length === 1)
      .map((t) => t[0]);
    let sent = '';
    const pending: string[] = [];
    const result = await model.session.generate(tokens, {
      maxTokens: Number(opts.num_predict ?? 16),
      stopIds,
      signal: closed,
      onText: (text) => {
        pending.push(text.slice(sent.length));
        sent = text;
      },
    });
    for (const [i, text] of pending.entries()) {
      if (closed.aborted) break;
      await sleep(options.tokenDelayMs ?? 0);
      if (closed.aborted) break;
      const p = result.confidences[i] ?? 1;
      res.write(
        `${JSON.stringify({ model: name, created_at, response: text, done: false, ...(logprobs && body.logprobs ? { logprobs: [{ token: text, logprob: Math.log(p), bytes: [...Buffer.from(text)] }] } : {}) })}\n`,
      );
      lastStream.lines++;
    }
    if (closed.aborted) {
      lastStream.closedEarly = true;
      return;
    }
    res.end(
      `${JSON.stringify({
        model: name,
        created_at,
        response: '',
        done: true,
        done_reason: result.stoppedBy === 'stop-token' ? 'stop' : 'length',
        prompt_eval_count: result.evaluated,
        eval_count: result.tokens.length,
      })}\n`,
    );
    lastStream.finished = true;
  };

  const server = http.createServer((req, res) => {
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      const route = `${req.method} ${req.url}`;
      if (route === 'GET /api/version') return json(res, { version });
      if (route === 'GET /api/tags')
        return json(res, {
          models: Object.keys(options.models).map((name) => ({
            name,
            model: name,
            modified_at: new Date(0).toISOString(),
            size: 1,
            digest: 'sha256:0',
            details: { format: 'gguf', family: 'starcoder', parameter_size: '4M', quantization_level: 'F32' },
          })),
        });
      if (route === 'POST /api/show') {
        const file = options.models[String(body.model)];
        if (!file) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ error: `model '${String(body.model)}' not found` }));
        }
        return json(res, {
          modelfile: `# Modelfile generated by "ollama show"\nFROM ${file}\nPARAMETER stop <|endoftext|>\n`,
          parameters: 'stop "<|endoftext|>"',
          template: '{{ .Prompt }}',
          details: { format: 'gguf', family: 'starcoder' },
          capabilities: ['completion', 'insert'],
        });
      }
      if (route === 'POST /api/generate') {
        requests.push(body);
        // One model, one sequence: requests run one at a time, as Ollama's single slot (OLLAMA_NUM_PARALLEL=1).
        queue = queue.then(() =>
          generate(body, res, closed.signal).catch((error: unknown) => {
            if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ error: (error as Error).message }));
          }),
        );
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('404 page not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    lastStream,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      for (const { model, vocabulary } of loaded.values()) {
        await model.dispose();
        await vocabulary.dispose();
      }
    },
  };
}

function json(res: http.ServerResponse, value: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
