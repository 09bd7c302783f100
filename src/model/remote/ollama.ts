/**
 * Ollama (its REST API, docs/api.md of ollama/ollama): /api/generate with `raw: true` takes the prompt as text
 * with the model's own special tokens, streams one JSON object a line, and (from 0.12.11) returns `logprobs`
 * with `top_logprobs` named by token text. /api/tags lists the pulled models, /api/show says where a model's
 * GGUF lies, and a generate request without a prompt loads the model. `keep_alive` keeps it loaded between
 * keystrokes. Never the `suffix` field or a template: the editor lays out the family's FIM prompt itself.
 */
import { HttpClient, ServerError } from './http';
import { costFromCached, expectShape, isRecord, PROBE_TOP_K, topFromTexts } from './protocol';
import type {
  ServerFacts,
  ServerProtocol,
  ServerRequest,
  StreamEvent,
  TopProbabilities,
  Vocabulary,
  VocabularyCheck,
} from './protocol';

/** The first Ollama release that returns logprobs from /api/generate. */
export const OLLAMA_LOGPROBS_VERSION = '0.12.11';
/** How long Ollama keeps the model loaded after a request: a pause in typing must not unload it. */
const KEEP_ALIVE = '30m';
/** The longest wait for Ollama to load a model before its first answer (a 7B model from a cold disk). */
export const OLLAMA_LOAD_TIMEOUT_MS = 180_000;

const START_HINT =
  'Start Ollama ("ollama serve" or its app), or fix "repogate.serverUrl" (Ollama: http://127.0.0.1:11434).';

/** A pulled model and where its GGUF lies on the server's disk. */
export interface OllamaModel {
  name: string;
  /** The GGUF blob from /api/show's Modelfile (`FROM /…/blobs/sha256-…`), when it names a file. */
  gguf?: string;
}

export class Ollama implements ServerProtocol {
  readonly engine = 'ollama' as const;
  private vocabulary: Vocabulary | undefined;

  constructor(
    private readonly http: HttpClient,
    private readonly model: string,
    /** The context Ollama is asked for: without num_ctx it cuts prompts at its own default (2,048–4,096). */
    private readonly contextSize: () => number,
  ) {}

  /** The model to use (the named one, or the only one pulled) and its GGUF, before any vocabulary is loaded. */
  static async locate(http: HttpClient, wanted: string | undefined, signal?: AbortSignal): Promise<OllamaModel> {
    const names = await pulledModels(http, signal);
    let name: string;
    if (wanted) {
      const found = names.find((n) => n === wanted || n === `${wanted}:latest`);
      if (!found) throw notPulled(http, wanted, names);
      name = found;
    } else if (names.length === 1) {
      name = names[0];
    } else {
      throw new ServerError(
        'incompatible',
        names.length === 0
          ? `Ollama at ${http.url} has no model pulled`
          : `Ollama at ${http.url} has ${names.length} models (${names.join(', ')}); RepoGate needs to know which`,
        names.length === 0
          ? 'Pull a code model with fill-in-the-middle tokens, e.g. "ollama pull qwen2.5-coder:1.5b-base".'
          : 'Set "repogate.serverModel" to one of them ("RepoGate: Select Model…" lists them).',
      );
    }
    const show = await call(http, () => http.postJson('/api/show', { model: name }, signal));
    const modelfile = isRecord(show) && typeof show.modelfile === 'string' ? show.modelfile : '';
    const from = /^FROM\s+(\/\S+|[A-Za-z]:\\\S+)\s*$/m.exec(modelfile);
    return { name, gguf: from?.[1] };
  }

  /** Learns the vocabulary after RemoteModel has read it (it tokenizes here, and maps texts back to ids). */
  bind(vocabulary: Vocabulary): void {
    this.vocabulary = vocabulary;
  }

  /** The model is still pulled, loaded (waiting while Ollama loads it), and whether the server returns logprobs. */
  async check(_expected: VocabularyCheck, signal?: AbortSignal): Promise<ServerFacts> {
    const names = await pulledModels(this.http, signal);
    if (!names.includes(this.model)) throw notPulled(this.http, this.model, names);
    const version = await call(this.http, () => this.http.getJson('/api/version', signal), this.model);
    const v = isRecord(version) && typeof version.version === 'string' ? version.version : undefined;
    await call(
      this.http,
      () =>
        this.http.postJson(
          '/api/generate',
          { model: this.model, keep_alive: KEEP_ALIVE },
          signal,
          OLLAMA_LOAD_TIMEOUT_MS,
        ),
      this.model,
    );
    return {
      promptFormat: 'text',
      noProbabilities: v !== undefined && olderThan(v, OLLAMA_LOGPROBS_VERSION) ? tooOld(v) : undefined,
    };
  }

  async top(request: ServerRequest): Promise<TopProbabilities> {
    const where = `${this.http.url}/api/generate`;
    const answer = await call(
      this.http,
      () =>
        this.http.postJson(
          '/api/generate',
          this.body(request, { num_predict: 1 }, { stream: false, logprobs: true, top_logprobs: PROBE_TOP_K.ollama }),
          request.signal,
        ),
      this.model,
    );
    expectShape(isRecord(answer), where, 'a JSON object');
    const [first] = logprobsOf(answer.logprobs);
    if (!first) {
      throw new ServerError(
        'incompatible',
        `${where} returned no logprobs: this Ollama is older than ${OLLAMA_LOGPROBS_VERSION}`,
        'Update Ollama to read P(<cc>) from the model; meanwhile set "repogate.gate" to heuristic.',
      );
    }
    return {
      ...topFromTexts(first.top, PROBE_TOP_K.ollama, this.bound()),
      cost: evaluatedCost(request.tokens.length, answer),
    };
  }

  async *stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent> {
    const where = `${this.http.url}/api/generate`;
    const body = this.body(
      request,
      { num_predict: request.maxTokens, stop: [...this.bound().stopTexts] },
      { stream: true, logprobs: true },
    );
    const chunks = this.http.postStream('/api/generate', body, request.signal, 'ndjson');
    for (;;) {
      const next = await call(this.http, () => chunks.next(), this.model);
      if (next.done) break;
      const chunk = next.value;
      expectShape(isRecord(chunk), where, 'a JSON object per line');
      if (typeof chunk.error === 'string') throw failure(this.http, this.model, chunk.error);
      const probs = logprobsOf(chunk.logprobs);
      if (typeof chunk.response === 'string' && chunk.response)
        yield { text: chunk.response, probability: probs.length === 1 ? probs[0].probability : undefined };
      if (chunk.done === true) {
        const c = evaluatedCost(request.tokens.length, chunk);
        if (c) yield { cost: c };
        if (chunk.done_reason === 'stop') yield { endOfText: true };
        return;
      }
    }
    throw new ServerError(
      'bad-response',
      `${where}: the stream ended before the completion did`,
      'Ollama may have crashed or unloaded the model; see its log ("ollama serve").',
    );
  }

  private bound(): Vocabulary {
    if (!this.vocabulary) throw new Error('Ollama: no vocabulary bound');
    return this.vocabulary;
  }

  /** Greedy, raw (no template), the whole context, the model kept loaded. */
  private body(
    request: ServerRequest,
    options: Record<string, unknown>,
    extra: Record<string, unknown>,
  ): Record<string, unknown> {
    return {
      model: this.model,
      prompt: this.bound().promptText(request.tokens),
      raw: true,
      keep_alive: KEEP_ALIVE,
      options: { temperature: 0, top_k: 1, num_ctx: this.contextSize(), ...options },
      ...extra,
    };
  }
}

/** How long the editor's model picker waits for Ollama's list. */
const LIST_TIMEOUT_MS = 3000;

/** The models pulled on the Ollama at `url` (for the editor's model picker); throws Ollama's own errors. */
export function listOllamaModels(url: string): Promise<string[]> {
  return pulledModels(new HttpClient({ url, timeoutMs: LIST_TIMEOUT_MS }));
}

async function pulledModels(http: HttpClient, signal?: AbortSignal): Promise<string[]> {
  const tags = await call(http, () => http.getJson('/api/tags', signal));
  expectShape(isRecord(tags) && Array.isArray(tags.models), `${http.url}/api/tags`, 'a model list');
  return tags.models
    .map((m) => (isRecord(m) ? (typeof m.name === 'string' ? m.name : m.model) : undefined))
    .filter((m): m is string => typeof m === 'string');
}

/** Runs one call, turning Ollama's own failures (down, model not found) into its messages. */
async function call<T>(http: HttpClient, work: () => Promise<T>, model?: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServerError && error.code === 'unreachable')
      throw new ServerError('unreachable', `Ollama is not running at ${http.url} (${error.message})`, START_HINT);
    if (error instanceof ServerError && MODEL_NOT_FOUND.test(error.message)) throw notPulled(http, model ?? '?', []);
    throw error;
  }
}

/** Ollama's words for a model it does not have ("model 'x' not found, try pulling it first"). */
const MODEL_NOT_FOUND = /model .*not found/i;

function failure(http: HttpClient, model: string, said: string): ServerError {
  if (MODEL_NOT_FOUND.test(said)) return notPulled(http, model, []);
  return new ServerError(
    'server-error',
    `Ollama at ${http.url} failed: ${said}`,
    'See Ollama\'s log ("ollama serve").',
  );
}

function notPulled(http: HttpClient, model: string, names: readonly string[]): ServerError {
  const have = names.length ? ` (it has ${names.join(', ')})` : '';
  return new ServerError(
    'incompatible',
    `Ollama at ${http.url} has no model "${model}"${have}`,
    `Run "ollama pull ${model}", or set "repogate.serverModel" to a pulled model.`,
  );
}

function tooOld(version: string): string {
  return `Ollama ${version} returns no logprobs (${OLLAMA_LOGPROBS_VERSION} or later does): update Ollama to read P(<cc>); until then the heuristic gate decides`;
}

/** Whether dotted version `a` is older than `b` (suffixes such as "-rc1" are ignored). */
export function olderThan(a: string, b: string): boolean {
  const parts = (v: string): number[] =>
    v
      .split(/[.-]/)
      .slice(0, 3)
      .map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
}

interface TextLogprob {
  probability: number;
  top: { text: string; probability: number }[];
}

function logprobsOf(logprobs: unknown): TextLogprob[] {
  if (!Array.isArray(logprobs)) return [];
  return logprobs.filter(isRecord).map((entry) => ({
    probability: Math.exp(Number(entry.logprob)),
    top: (Array.isArray(entry.top_logprobs) ? entry.top_logprobs : [])
      .filter(isRecord)
      .filter((t) => typeof t.token === 'string')
      .map((t) => ({ text: t.token as string, probability: Math.exp(Number(t.logprob)) })),
  }));
}

/** prompt_eval_count is what Ollama evaluated; the rest of the prompt came from its cache. */
function evaluatedCost(promptLength: number, answer: Record<string, unknown>) {
  const evaluated = answer.prompt_eval_count;
  return typeof evaluated === 'number' ? costFromCached(promptLength, promptLength - evaluated) : undefined;
}
