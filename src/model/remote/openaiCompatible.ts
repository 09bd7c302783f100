/**
 * An OpenAI-compatible completions server (vLLM, or llama-server's /v1 routes): /v1/completions with a prompt
 * of token ids, `logprobs: k` for the top k of the next-token distribution and `stream` for server-sent events.
 * Token ids come back in two shapes: llama-server lists {id, logprob} objects under logprobs.content; vLLM, asked
 * with `return_tokens_as_token_ids`, writes each token as "token_id:N" in the legacy tokens/top_logprobs lists.
 * Never `prompt_logprobs` (vLLM recomputes the prompt for it, bypassing its prefix cache) and never `suffix`.
 */
import type { EvaluationCost } from '../tokenModel';
import { HttpClient, ServerError } from './http';
import { costFromCached, expectShape, isRecord, PROBE_TOP_K, topFrom } from './protocol';
import type {
  ServerFacts,
  ServerProtocol,
  ServerRequest,
  StreamEvent,
  TopProbabilities,
  VocabularyCheck,
} from './protocol';

interface Logprob {
  id: number;
  probability: number;
  top: { id: number; probability: number }[];
}

export class OpenAICompatible implements ServerProtocol {
  readonly engine = 'openai-compatible' as const;
  private model: string | undefined;

  constructor(
    private readonly http: HttpClient,
    model?: string,
  ) {
    this.model = model;
  }

  /** The served model (the configured one, else the first listed), and a tokenizer check where /tokenize exists. */
  async check(expected: VocabularyCheck, signal?: AbortSignal): Promise<ServerFacts> {
    const where = `${this.http.url}/v1/models`;
    const list = await this.http.getJson('/v1/models', signal);
    expectShape(isRecord(list) && Array.isArray(list.data), where, 'a model list');
    const models = list.data
      .map((m) => (isRecord(m) && typeof m.id === 'string' ? m.id : undefined))
      .filter((m): m is string => m !== undefined);
    if (this.model && !models.includes(this.model)) {
      throw new ServerError(
        'incompatible',
        `${this.http.url} does not serve "${this.model}" (it serves ${models.join(', ') || 'nothing'})`,
        'Fix "repogate.serverModel".',
      );
    }
    this.model ??= models[0];
    const lengths = list.data.map((m) =>
      isRecord(m) && typeof m.max_model_len === 'number' ? m.max_model_len : undefined,
    );
    const ids = await this.tokenize(expected.sample.text, signal);
    if (ids && ids.join(',') !== expected.sample.ids.join(',')) {
      throw new ServerError(
        'incompatible',
        `the model on ${this.http.url} tokenizes code differently from the local vocabulary`,
        'Point "repogate.modelPath" at a GGUF with the vocabulary of the served model.',
      );
    }
    return { contextSize: lengths.find((n) => n !== undefined) };
  }

  async top(request: ServerRequest): Promise<TopProbabilities> {
    const where = `${this.http.url}/v1/completions`;
    const answer = await this.http.postJson(
      '/v1/completions',
      this.body(request, { max_tokens: 1, logprobs: PROBE_TOP_K.openai }),
      request.signal,
    );
    const choice = firstChoice(answer, where);
    const [first] = logprobsOf(choice.logprobs, where);
    expectShape(first !== undefined, where, 'logprobs');
    return { ...topFrom(first.top, PROBE_TOP_K.openai), cost: usageCost(request.tokens.length, answer) };
  }

  async *stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent> {
    const where = `${this.http.url}/v1/completions`;
    const body = this.body(request, {
      max_tokens: request.maxTokens,
      logprobs: 1,
      stream: true,
      stream_options: { include_usage: true },
    });
    let finished = false;
    for await (const chunk of this.http.postStream('/v1/completions', body, request.signal)) {
      const c = usageCost(request.tokens.length, chunk);
      if (c) yield { cost: c };
      if (!isRecord(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length === 0) continue;
      const choice = firstChoice(chunk, where);
      const tokens = logprobsOf(choice.logprobs, where);
      if (typeof choice.text === 'string' && choice.text && tokens.length === 0) {
        throw new ServerError(
          'incompatible',
          `${where} streams text without token ids`,
          'Use a server that returns token ids with logprobs (vLLM, llama-server).',
        );
      }
      for (const t of tokens) yield { token: t.id, probability: t.probability };
      if (typeof choice.finish_reason === 'string') {
        finished = true;
        if (choice.finish_reason === 'stop') yield { endOfText: true };
      }
    }
    if (!finished)
      throw new ServerError(
        'bad-response',
        `${where}: the stream ended before the completion did`,
        'The server may have crashed; see its log.',
      );
  }

  private async tokenize(text: string, signal?: AbortSignal): Promise<number[] | undefined> {
    // vLLM reads `prompt`, llama-server `content`; a server without the route is not checked.
    const answer = await this.http
      .postJson(
        '/tokenize',
        { model: this.model, prompt: text, content: text, add_special_tokens: false, parse_special: false },
        signal,
      )
      .catch((error: unknown) => {
        if (error instanceof ServerError && (error.code === 'incompatible' || error.code === 'bad-request'))
          return undefined;
        throw error;
      });
    if (!isRecord(answer) || !Array.isArray(answer.tokens)) return undefined;
    return answer.tokens.filter((t): t is number => typeof t === 'number');
  }

  private body(request: ServerRequest, extra: Record<string, unknown>): Record<string, unknown> {
    return {
      model: this.model,
      prompt: [...request.tokens],
      temperature: 0,
      return_tokens_as_token_ids: true,
      ...(request.cachePrompt ? {} : { cache_prompt: false }),
      ...extra,
    };
  }
}

function firstChoice(answer: unknown, where: string): Record<string, unknown> {
  expectShape(isRecord(answer) && Array.isArray(answer.choices) && isRecord(answer.choices[0]), where, 'choices');
  return answer.choices[0] as Record<string, unknown>;
}

/** "token_id:123" (vLLM with return_tokens_as_token_ids) to 123. */
function idFromTokenText(text: string, where: string): number {
  const match = /^token_id:(\d+)$/.exec(text);
  expectShape(match !== null, where, 'token ids (vLLM: return_tokens_as_token_ids)');
  return Number(match[1]);
}

/** Each generated token with its probability and the top list, from either shape of `logprobs`. */
export function logprobsOf(logprobs: unknown, where: string): Logprob[] {
  if (!isRecord(logprobs)) return [];
  if (Array.isArray(logprobs.content)) {
    return logprobs.content.map((entry: unknown) => {
      expectShape(
        isRecord(entry) && typeof entry.id === 'number' && typeof entry.logprob === 'number',
        where,
        'token ids and log-probabilities',
      );
      const top = Array.isArray(entry.top_logprobs) ? entry.top_logprobs : [];
      return {
        id: entry.id,
        probability: Math.exp(entry.logprob),
        top: top.filter(isRecord).map((t) => ({ id: Number(t.id), probability: Math.exp(Number(t.logprob)) })),
      };
    });
  }
  expectShape(Array.isArray(logprobs.tokens) && Array.isArray(logprobs.token_logprobs), where, 'logprobs tokens');
  const tops = Array.isArray(logprobs.top_logprobs) ? logprobs.top_logprobs : [];
  return logprobs.tokens.map((token: unknown, i: number) => {
    expectShape(typeof token === 'string', where, 'token ids');
    const top: unknown = tops[i];
    return {
      id: idFromTokenText(token, where),
      probability: Math.exp(Number((logprobs.token_logprobs as unknown[])[i])),
      top: isRecord(top)
        ? Object.entries(top).map(([text, lp]) => ({
            id: idFromTokenText(text, where),
            probability: Math.exp(Number(lp)),
          }))
        : [],
    };
  });
}

/** usage.prompt_tokens_details.cached_tokens (vLLM with --enable-prompt-tokens-details, llama-server). */
function usageCost(promptLength: number, answer: unknown): EvaluationCost | undefined {
  if (!isRecord(answer) || !isRecord(answer.usage) || !isRecord(answer.usage.prompt_tokens_details)) return undefined;
  return costFromCached(promptLength, answer.usage.prompt_tokens_details.cached_tokens);
}
