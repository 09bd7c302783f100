/**
 * llama.cpp's llama-server (tools/server/README.md of the bundled source): /completion with token-id prompts,
 * `n_probs` for the top-k of the full softmax, `cache_prompt` so a slot evaluates only what its cache lacks,
 * and `stream` for server-sent events; /tokenize and /props to check the model. Never /infill (it builds the
 * prompt itself) and never string prompts (the server parses special tokens in them).
 */
import type { EvaluationCost } from '../tokenModel';
import { HttpClient, ServerError } from './http';
import {
  costFromCached,
  expectShape,
  isRecord,
  PROBE_TOP_K,
  topFrom,
  type ServerFacts,
  type ServerProtocol,
  type ServerRequest,
  type StreamEvent,
  type TopProbabilities,
  type VocabularyCheck,
} from './protocol';

export class LlamaServer implements ServerProtocol {
  readonly engine = 'llama-server' as const;

  constructor(
    private readonly http: HttpClient,
    private readonly slot?: number,
  ) {}

  async check(expected: VocabularyCheck, signal?: AbortSignal): Promise<ServerFacts> {
    await this.http.getJson('/health', signal);
    for (const [text, id] of expected.specials) {
      const ids = await this.tokenize(text, true, signal);
      if (ids.length !== 1 || ids[0] !== id) {
        throw new ServerError(
          'incompatible',
          `the model on ${this.http.url} has no ${text} token (id ${id} in the local vocabulary): ` +
            'it is not a fill-in-the-middle model of this family',
          'Run the same FIM code model on the server as "repogate.modelPath" names.',
        );
      }
    }
    const ids = await this.tokenize(expected.sample.text, false, signal);
    if (ids.join(',') !== expected.sample.ids.join(',')) {
      throw new ServerError(
        'incompatible',
        `the model on ${this.http.url} tokenizes code differently from the local vocabulary`,
        'Point "repogate.modelPath" at the GGUF the server runs (or one with the same vocabulary).',
      );
    }
    const props = await this.http.getJson('/props', signal);
    const settings =
      isRecord(props) && isRecord(props.default_generation_settings) ? props.default_generation_settings : undefined;
    const nCtx = settings?.n_ctx;
    return { contextSize: typeof nCtx === 'number' && nCtx > 0 ? nCtx : undefined, promptFormat: 'token-ids' };
  }

  async top(request: ServerRequest): Promise<TopProbabilities> {
    const where = `${this.http.url}/completion`;
    const answer = await this.http.postJson(
      '/completion',
      this.body(request, { n_predict: 1, n_probs: PROBE_TOP_K.llamaServer }),
      request.signal,
    );
    expectShape(isRecord(answer) && Array.isArray(answer.completion_probabilities), where, 'completion_probabilities');
    const first: unknown = answer.completion_probabilities[0];
    expectShape(isRecord(first) && Array.isArray(first.top_logprobs), where, 'top_logprobs');
    const entries = first.top_logprobs.map((entry: unknown) => {
      expectShape(
        isRecord(entry) && typeof entry.id === 'number' && typeof entry.logprob === 'number',
        where,
        'token ids and log-probabilities',
      );
      return { id: entry.id, probability: Math.exp(entry.logprob) };
    });
    return { ...topFrom(entries, PROBE_TOP_K.llamaServer), cost: cost(request.tokens.length, answer.timings) };
  }

  async *stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent> {
    const where = `${this.http.url}/completion`;
    const body = this.body(request, {
      n_predict: request.maxTokens,
      n_probs: 1,
      stream: true,
      timings_per_token: true,
      return_tokens: true,
    });
    let costSent = false;
    for await (const chunk of this.http.postStream('/completion', body, request.signal)) {
      expectShape(isRecord(chunk), where, 'a JSON object per event');
      if (!costSent) {
        const c = cost(request.tokens.length, chunk.timings);
        if (c) {
          costSent = true;
          yield { cost: c };
        }
      }
      const tokens = Array.isArray(chunk.tokens) ? chunk.tokens : [];
      const probabilities = Array.isArray(chunk.completion_probabilities) ? chunk.completion_probabilities : [];
      for (const [i, token] of tokens.entries()) {
        expectShape(typeof token === 'number', where, 'token ids');
        const entry: unknown = probabilities[i];
        const logprob = isRecord(entry) && typeof entry.logprob === 'number' ? entry.logprob : undefined;
        yield { token, probability: logprob === undefined ? undefined : Math.exp(logprob) };
      }
      if (chunk.stop === true) {
        if (chunk.stop_type === 'eos') yield { endOfText: true };
        return;
      }
    }
    throw new ServerError(
      'bad-response',
      `${where}: the stream ended before the completion did`,
      'The server may have crashed; see its log.',
    );
  }

  private async tokenize(content: string, parseSpecial: boolean, signal?: AbortSignal): Promise<number[]> {
    const answer = await this.http.postJson(
      '/tokenize',
      { content, parse_special: parseSpecial, add_special: false },
      signal,
    );
    expectShape(
      isRecord(answer) && Array.isArray(answer.tokens) && answer.tokens.every((t) => typeof t === 'number'),
      `${this.http.url}/tokenize`,
      'token ids',
    );
    return answer.tokens as number[];
  }

  /** Greedy (temperature 0) from a prompt of token ids; probabilities are the plain softmax (not post-sampling). */
  private body(request: ServerRequest, extra: Record<string, unknown>): Record<string, unknown> {
    const slot = this.slot === undefined ? {} : { id_slot: this.slot };
    return { prompt: [...request.tokens], temperature: 0, cache_prompt: request.cachePrompt, ...slot, ...extra };
  }
}

/** timings.prompt_n is what the slot evaluated; the rest of the prompt came from its cache. */
function cost(promptLength: number, timings: unknown): EvaluationCost | undefined {
  if (!isRecord(timings) || typeof timings.prompt_n !== 'number') return undefined;
  return costFromCached(promptLength, promptLength - timings.prompt_n);
}
