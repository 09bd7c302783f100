/**
 * An OpenAI-compatible completions server: /v1/completions with `logprobs: k` for the top k of the next-token
 * distribution and `stream` for server-sent events. Prompts go as token ids where the server takes them (vLLM,
 * llama-server: found out once, with one token of the fixed vocabulary sample) and as text with the control
 * tokens spelled out where it does not (LM Studio, llamafile, LocalAI, TGI; promptText.ts).
 * Token ids come back in two shapes: llama-server lists {id, logprob} objects under logprobs.content; vLLM, asked
 * with `return_tokens_as_token_ids`, writes each token as "token_id:N" in the legacy tokens/top_logprobs lists.
 * A server that names tokens by text only is read by text, mapped to ids through the local vocabulary.
 * Never `prompt_logprobs` (vLLM recomputes the prompt for it, bypassing its prefix cache) and never `suffix`.
 */
import type { EvaluationCost } from '../tokenModel';
import { HttpClient, ServerError } from './http';
import { costFromCached, expectShape, isRecord, PROBE_TOP_K, topFrom, topFromTexts } from './protocol';
import type {
  PromptFormat,
  ServerFacts,
  ServerProtocol,
  ServerRequest,
  StreamEvent,
  TopProbabilities,
  Vocabulary,
  VocabularyCheck,
} from './protocol';

/** How the user asked prompts to be sent: found out from the server, or as said. */
export type PromptFormatSetting = 'auto' | PromptFormat;

/** A token as the server names it: by id where it can, else by its text. */
interface Named {
  id?: number;
  text?: string;
  probability: number;
}

interface Logprob extends Named {
  top: Named[];
}

export class OpenAICompatible implements ServerProtocol {
  readonly engine = 'openai-compatible' as const;
  private model: string | undefined;
  private format: PromptFormat | undefined;
  private vocabulary: Vocabulary | undefined;

  constructor(
    private readonly http: HttpClient,
    model?: string,
    private readonly setting: PromptFormatSetting = 'auto',
  ) {
    this.model = model;
  }

  bind(vocabulary: Vocabulary): void {
    this.vocabulary = vocabulary;
  }

  /**
   * The served model (the configured one, else the first listed), a tokenizer check where /tokenize exists, and
   * once per connection how the server takes prompts and whether it returns next-token probabilities.
   */
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
    const trial = await this.trial(expected, signal);
    return { contextSize: lengths.find((n) => n !== undefined), ...trial };
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
    const cost = usageCost(request.tokens.length, answer);
    const withIds = first.top.every((t) => t.id !== undefined);
    if (withIds) return { ...topFrom(first.top as { id: number; probability: number }[], PROBE_TOP_K.openai), cost };
    const named = first.top.map((t) => ({ text: t.text ?? '', probability: t.probability }));
    return { ...topFromTexts(named, PROBE_TOP_K.openai, this.bound()), cost };
  }

  async *stream(request: ServerRequest & { maxTokens: number }): AsyncGenerator<StreamEvent> {
    const where = `${this.http.url}/v1/completions`;
    const text = this.format === 'text';
    const body = this.body(request, {
      max_tokens: request.maxTokens,
      logprobs: 1,
      stream: true,
      stream_options: { include_usage: true },
      ...(text ? { stop: [...this.bound().stopTexts] } : {}),
    });
    let finished = false;
    for await (const chunk of this.http.postStream('/v1/completions', body, request.signal)) {
      const c = usageCost(request.tokens.length, chunk);
      if (c) yield { cost: c };
      if (!isRecord(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length === 0) continue;
      const choice = firstChoice(chunk, where);
      const tokens = logprobsOf(choice.logprobs, where);
      const piece = typeof choice.text === 'string' ? choice.text : '';
      if (tokens.length > 0 && tokens.every((t) => t.id !== undefined)) {
        for (const t of tokens) yield { token: t.id as number, probability: t.probability };
      } else if (piece && text) {
        yield { text: piece, probability: tokens.length === 1 ? tokens[0].probability : undefined };
      } else if (piece) {
        throw new ServerError(
          'incompatible',
          `${where} streams text without token ids`,
          'Set "repogate.serverPromptFormat" to text, or use a server that returns token ids (vLLM, llama-server).',
        );
      }
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

  /**
   * One token after the vocabulary sample: sent as ids (unless text is asked for), the answer says whether the
   * server takes them, and its logprobs whether P(<cc>) can be read here. A server that refuses an id prompt
   * (4xx, or a 500 from a parser that expected a string) gets text from then on.
   */
  private async trial(
    expected: VocabularyCheck,
    signal?: AbortSignal,
  ): Promise<Pick<ServerFacts, 'promptFormat' | 'noProbabilities'>> {
    const request = { tokens: expected.sample.ids, cachePrompt: true, signal };
    const ask = (): Promise<unknown> =>
      this.http.postJson(
        '/v1/completions',
        this.body(request, { max_tokens: 1, logprobs: PROBE_TOP_K.openai }),
        signal,
      );
    this.format = this.setting === 'auto' ? 'token-ids' : this.setting;
    let answer: unknown;
    try {
      answer = await ask();
    } catch (error) {
      const refused = error instanceof ServerError && (error.code === 'bad-request' || error.code === 'server-error');
      if (this.setting !== 'auto' || !refused) throw error;
      this.format = 'text';
      answer = await ask();
    }
    const where = `${this.http.url}/v1/completions`;
    const choice = firstChoice(answer, where);
    const [first] = logprobsOf(choice.logprobs, where);
    if (this.format === 'token-ids' && first?.id === undefined && typeof choice.text === 'string' && choice.text) {
      if (this.setting === 'auto') this.format = 'text';
      else
        throw new ServerError(
          'incompatible',
          `${where} answers without token ids`,
          'Set "repogate.serverPromptFormat" to text (or auto).',
        );
    }
    return {
      promptFormat: this.format,
      noProbabilities:
        first === undefined || first.top.length === 0
          ? `${this.http.url} returns no next-token probabilities (logprobs): the heuristic gate decides`
          : undefined,
    };
  }

  private bound(): Vocabulary {
    if (!this.vocabulary) throw new Error('openai-compatible: no vocabulary bound');
    return this.vocabulary;
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
      prompt: this.format === 'text' ? this.bound().promptText(request.tokens) : [...request.tokens],
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

/** "token_id:123" (vLLM with return_tokens_as_token_ids) names token 123; any other text names a token by text. */
function named(text: string, probability: number): Named {
  const match = /^token_id:(\d+)$/.exec(text);
  return match ? { id: Number(match[1]), probability } : { text, probability };
}

/** Each generated token with its probability and the top list, from either shape of `logprobs`. */
export function logprobsOf(logprobs: unknown, where: string): Logprob[] {
  if (!isRecord(logprobs)) return [];
  if (Array.isArray(logprobs.content)) {
    return logprobs.content.map((entry: unknown) => {
      expectShape(
        isRecord(entry) &&
          typeof entry.logprob === 'number' &&
          (typeof entry.id === 'number' || typeof entry.token === 'string'),
        where,
        'tokens and log-probabilities',
      );
      const top = Array.isArray(entry.top_logprobs) ? entry.top_logprobs : [];
      const one = (t: Record<string, unknown>): Named =>
        typeof t.id === 'number'
          ? { id: t.id, probability: Math.exp(Number(t.logprob)) }
          : named(String(t.token), Math.exp(Number(t.logprob)));
      return { ...one(entry), top: top.filter(isRecord).map(one) };
    });
  }
  expectShape(Array.isArray(logprobs.tokens) && Array.isArray(logprobs.token_logprobs), where, 'logprobs tokens');
  const tops = Array.isArray(logprobs.top_logprobs) ? logprobs.top_logprobs : [];
  return logprobs.tokens.map((token: unknown, i: number) => {
    expectShape(typeof token === 'string', where, 'tokens');
    const top: unknown = tops[i];
    return {
      ...named(token, Math.exp(Number((logprobs.token_logprobs as unknown[])[i]))),
      top: isRecord(top) ? Object.entries(top).map(([text, lp]) => named(text, Math.exp(Number(lp)))) : [],
    };
  });
}

/** usage.prompt_tokens_details.cached_tokens (vLLM with --enable-prompt-tokens-details, llama-server). */
function usageCost(promptLength: number, answer: unknown): EvaluationCost | undefined {
  if (!isRecord(answer) || !isRecord(answer.usage) || !isRecord(answer.usage.prompt_tokens_details)) return undefined;
  return costFromCached(promptLength, answer.usage.prompt_tokens_details.cached_tokens);
}
