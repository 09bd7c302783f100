/**
 * A code model on an inference server. The editor keeps the model's vocabulary (read vocabulary-only from a GGUF
 * with the same tokenizer; for Ollama, the model's own GGUF on this disk): prompts are laid out and tokenized
 * here without special-token parsing and sent as token ids, or as text with the control tokens spelled out to a
 * server that takes only text; generated ids are decoded here. Only the prompt leaves the machine. Every request
 * is bounded in time; a failure is reported (the status bar shows it) and the next request tries again, so
 * completions come back by themselves when the server does.
 */
import { existsSync } from 'fs';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { getSharedLlama, type ModelOptions } from '../codeModel';
import { detectFamily, type ResolvedFamily } from '../families';
import { controlTokens } from '../gguf';
import { checkModelFile } from '../modelFile';
import {
  TokenizingModel,
  type GenerateOptions,
  type GenerateResult,
  type ModelInfo,
  type RemoteEngine,
  type ServerInfo,
  type TokenModel,
  type TokenProbe,
  type TokenSession,
} from '../tokenModel';
import { HttpClient, ServerError } from './http';
import { LlamaServer } from './llamaServer';
import { Ollama } from './ollama';
import { OpenAICompatible, type PromptFormatSetting } from './openaiCompatible';
import { promptText } from './promptText';
import type { ServerFacts, ServerProtocol, StreamEvent, Vocabulary, VocabularyCheck } from './protocol';

export interface ServerOptions {
  engine: RemoteEngine;
  url: string;
  /** The served model's name (OpenAI-compatible servers, Ollama); default: the first (Ollama: the only) one. */
  model?: string;
  /** OpenAI-compatible servers: prompts as token ids or text; 'auto' (default) asks the server once. */
  promptFormat?: PromptFormatSetting;
  /** Sent as a bearer token; kept out of every message and log. */
  apiKey?: string;
  /** The longest wait for an answer or for the next streamed token. */
  timeoutMs?: number;
  /**
   * llama-server: always this slot (`id_slot`), so that every request of the editor finds its own prompt in the
   * slot's cache and a stale request holds only its own slot. Unset: the server picks by prompt similarity.
   */
  slot?: number;
}

/** A server that takes longer than this to answer (or between two tokens) is reported as too slow. */
export const DEFAULT_SERVER_TIMEOUT_MS = 15_000;

/** The local engine's cap on the default context; the server's own per-slot context lowers it further. */
const MAX_DEFAULT_CONTEXT = 8192;

/** Code that the vocabulary check tokenizes on both sides: spaces, punctuation, digits, a non-ASCII letter. */
const VOCABULARY_SAMPLE =
  'function total(items) {\n  return items.reduce((sum, x) => sum + x.price * 1.25, 0); // ü\n}\n';

type Problem = NonNullable<ServerInfo['problem']>;

export class RemoteModel extends TokenizingModel implements TokenModel {
  readonly session: RemoteSession;
  private verified = false;
  /** The family as the GGUF declares it; `info.family` loses its gate where the server gives no probabilities. */
  private readonly family: ModelInfo['family'];
  /** Every control token's spelling by id (what a text prompt spells out). */
  private readonly controlTexts: ReadonlyMap<number, string>;

  private constructor(
    readonly info: ModelInfo & { server: ServerInfo },
    private readonly vocabulary: LlamaModel,
    private readonly protocol: ServerProtocol,
    private readonly onProblem: (problem: Problem | undefined) => void,
    private readonly firstToken: number | undefined,
    /** Every control token's id by spelling (the GGUF's token types). */
    private readonly controlIds: ReadonlyMap<string, number>,
  ) {
    super(info.family, (text) => vocabulary.tokenize(text, false), firstToken);
    this.family = info.family;
    this.controlTexts = new Map([...controlIds].map(([text, id]) => [id, text]));
    this.session = new RemoteSession(this, protocol);
  }

  /**
   * Reads the vocabulary of `options.modelPath` (no weights) and checks the server once; a server that is
   * down or wrong is reported through `onProblem` and checked again on the next request, not a load failure.
   */
  static async load(
    options: ModelOptions,
    server: ServerOptions,
    onProblem: (problem: Problem | undefined) => void = () => undefined,
  ): Promise<RemoteModel> {
    const started = performance.now();
    checkServerUrl(server.url);
    const http = new HttpClient({
      url: serverBase(server),
      apiKey: server.apiKey,
      timeoutMs: server.timeoutMs ?? DEFAULT_SERVER_TIMEOUT_MS,
    });
    // Ollama names its models; the GGUF with the vocabulary is the model's own blob unless one is configured.
    const located = server.engine === 'ollama' ? await Ollama.locate(http, server.model) : undefined;
    const modelPath = options.modelPath || (located?.gguf && existsSync(located.gguf) ? located.gguf : undefined);
    if (!modelPath) throw noVocabulary(http.url, located?.name, located?.gguf);
    const file = await checkModelFile(modelPath);
    const controls = controlTokens(file.header);
    const family = ollamaFamily(located?.name, () =>
      detectFamily({ controlTokens: controls, metadata: file.header.metadata }, options),
    );
    const llama = await getSharedLlama();
    const vocabulary = await llama.loadModel({ modelPath, vocabOnly: true });
    let contextSize = 0;
    const protocol: ServerProtocol =
      server.engine === 'llama-server'
        ? new LlamaServer(http, server.slot)
        : server.engine === 'ollama'
          ? new Ollama(http, located?.name ?? '', () => contextSize)
          : new OpenAICompatible(http, server.model, server.promptFormat);
    const threshold = file.header.metadata.get('repogate.gate_threshold');
    // A vocabulary-only load does not read the context length: take it from the file's metadata.
    const declared = file.header.metadata.get(
      `${String(file.header.metadata.get('general.architecture'))}.context_length`,
    );
    const trainContextSize = typeof declared === 'number' && declared > 0 ? declared : MAX_DEFAULT_CONTEXT;
    const addBos = file.header.metadata.get('tokenizer.ggml.add_bos_token') === true;
    const bos = addBos && vocabulary.tokens.bos !== null ? Number(vocabulary.tokens.bos) : undefined;
    const info: ModelInfo & { server: ServerInfo } = {
      path: modelPath,
      name: file.name,
      family,
      backend: 'server',
      gpuLayers: 0,
      totalLayers: 0,
      threads: 0,
      contextSize: options.contextSize ?? Math.min(trainContextSize, MAX_DEFAULT_CONTEXT),
      trainContextSize,
      gateThreshold: typeof threshold === 'number' ? threshold : undefined,
      loadMs: 0,
      server: { engine: server.engine, url: http.url, model: located?.name ?? server.model },
    };
    contextSize = info.contextSize;
    const model = new RemoteModel(info, vocabulary, protocol, onProblem, bos, controls);
    protocol.bind?.(model.textVocabulary());
    await model.ready().catch((error: unknown) => model.failed(error));
    info.loadMs = performance.now() - started;
    return model;
  }

  detokenize(tokens: readonly number[]): string {
    return this.vocabulary.detokenize(tokens as Token[], false);
  }

  async dispose(): Promise<void> {
    this.session.abort();
    await this.vocabulary.dispose();
  }

  /** Checks the server's model against the local vocabulary, once per good connection. */
  async ready(signal?: AbortSignal): Promise<void> {
    if (this.verified) return;
    const facts = await this.protocol.check(this.vocabularyCheck(), signal);
    if (facts.contextSize !== undefined) this.info.contextSize = Math.min(this.info.contextSize, facts.contextSize);
    this.learn(facts);
    this.verified = true;
  }

  /** The prompt format in use, and the gate: without probabilities from the server the heuristic decides. */
  private learn(facts: ServerFacts): void {
    const server = this.info.server;
    const gateNote = this.family.hasGate ? facts.noProbabilities : undefined;
    const changed = server.promptFormat !== facts.promptFormat || server.gateNote !== gateNote;
    server.promptFormat = facts.promptFormat;
    server.gateNote = gateNote;
    this.info.family = facts.noProbabilities ? { ...this.family, hasGate: false } : this.family;
    // The editor shows both (the status bar's tooltip, Explain): tell it, as a change of problem does.
    if (changed) this.onProblem(server.problem);
  }

  /** The local vocabulary as a text-speaking protocol needs it. */
  private textVocabulary(): Vocabulary {
    const stopTexts = this.stopTexts();
    return {
      promptText: (tokens) => this.promptTextFor(tokens),
      idOf: (text) => {
        const control = this.controlIds.get(text);
        if (control !== undefined) return control;
        const ids = this.tokenize([{ text }]);
        return ids.length === 1 ? ids[0] : undefined;
      },
      stopTexts,
    };
  }

  /** A prompt as the text a server that takes text receives (promptText.ts). */
  promptTextFor(tokens: readonly number[]): string {
    return promptText(tokens, {
      detokenize: (ids, special, context) => this.vocabulary.detokenize(ids as Token[], special, context as Token[]),
      controls: this.controlTexts,
      bos: this.firstToken,
    });
  }

  /** The spellings of the family's end-of-completion tokens (a text stream stops at them). */
  stopTexts(): string[] {
    return this.family.stopIds.map((id) => this.controlTexts.get(id)).filter((t): t is string => !!t);
  }

  succeeded(): void {
    this.setProblem(undefined);
  }

  /** Reports a failure (not a cancellation) and re-checks the server before the next request. */
  failed(error: unknown): void {
    if (error instanceof ServerError && error.code === 'aborted') return;
    this.verified = false;
    const e = error as Error & { hint?: string };
    this.setProblem({ message: `${this.protocol.engine}: ${e.message}`, hint: e.hint });
  }

  private setProblem(problem: Problem | undefined): void {
    const before = this.info.server.problem;
    if (before?.message === problem?.message) return;
    this.info.server.problem = problem;
    this.onProblem(problem);
  }

  private vocabularyCheck(): VocabularyCheck {
    const specials = new Map<string, number>();
    const { ids, texts } = this.info.family;
    for (const role of ['fimPrefix', 'fimSuffix', 'fimMiddle', 'eof', 'cc'] as const) {
      const text = texts[role];
      const id = ids[role];
      if (text !== undefined && id !== undefined) specials.set(text, id);
    }
    return { specials, sample: { text: VOCABULARY_SAMPLE, ids: this.vocabulary.tokenize(VOCABULARY_SAMPLE, false) } };
  }
}

/**
 * Requests of one editor to the server. A new request cancels the one in flight (its connection closes, so the
 * server's slot is free at once): nothing queues behind a stale request.
 */
export class RemoteSession implements TokenSession {
  private inFlight: AbortController | undefined;
  private cachePrompt = true;

  constructor(
    private readonly model: RemoteModel,
    private readonly protocol: ServerProtocol,
  ) {}

  async reset(): Promise<void> {
    this.abort();
    this.cachePrompt = false;
  }

  abort(): void {
    this.inFlight?.abort();
    this.inFlight = undefined;
  }

  async probe(tokens: readonly number[]): Promise<TokenProbe> {
    return this.request(undefined, async (signal) => {
      const top = await this.protocol.top({ tokens, cachePrompt: this.takeCachePrompt(), signal });
      return {
        probabilities: top.probabilities,
        unlistedAtMost: top.unlistedAtMost,
        ...(top.cost ?? wholePrompt(tokens)),
      };
    });
  }

  async generate(tokens: readonly number[], options: GenerateOptions): Promise<GenerateResult> {
    const out: number[] = [];
    const confidences: number[] = [];
    let cost = wholePrompt(tokens);
    let text = '';
    /** What a text-only server streamed; its tokens are counted here (they are the same vocabulary's). */
    let streamed: string | undefined;
    let firstTokenAt: number | undefined;
    let stoppedBy: GenerateResult['stoppedBy'] = 'max-tokens';
    const result = (): GenerateResult => ({
      ...cost,
      text: streamed ?? this.model.detokenize(out),
      tokens: streamed === undefined ? out : this.model.tokenize([{ text: streamed }]),
      confidences,
      firstTokenAt,
      stoppedBy,
    });
    const stopTexts = this.model.stopTexts();
    if (options.signal?.aborted || options.maxTokens <= 0) {
      stoppedBy = options.signal?.aborted ? 'abort' : 'max-tokens';
      return result();
    }
    const handle = (event: StreamEvent): boolean => {
      if ('cost' in event) {
        cost = event.cost;
        return false;
      }
      if ('endOfText' in event) {
        stoppedBy = 'stop-token';
        return true;
      }
      firstTokenAt ??= performance.now();
      if ('text' in event) {
        streamed = (streamed ?? '') + event.text;
        confidences.push(event.probability ?? Number.NaN);
        // A server that writes control tokens out as text: the completion ends where one starts.
        const stop = firstStop(streamed, stopTexts);
        if (stop !== undefined) streamed = streamed.slice(0, stop);
        if (streamed !== text) {
          text = streamed;
          if (options.onText?.(text)) {
            stoppedBy = 'caller';
            return true;
          }
        }
        if (stop !== undefined) stoppedBy = 'stop-token';
        return stop !== undefined;
      }
      if (options.stopIds.includes(event.token)) {
        stoppedBy = 'stop-token';
        return true;
      }
      out.push(event.token);
      confidences.push(event.probability ?? Number.NaN);
      const decoded = this.model.detokenize(out);
      // A token can end inside a multi-byte character; wait for the rest before showing it.
      if (!decoded.endsWith('\uFFFD') && decoded !== text) {
        text = decoded;
        if (options.onText?.(text)) {
          stoppedBy = 'caller';
          return true;
        }
      }
      return out.length >= options.maxTokens;
    };
    return this.request(
      options.signal,
      async (signal) => {
        for await (const event of this.protocol.stream({
          tokens,
          cachePrompt: this.takeCachePrompt(),
          maxTokens: options.maxTokens,
          signal,
        })) {
          if (handle(event)) break;
        }
        return result();
      },
      () => {
        stoppedBy = 'abort';
        return result();
      },
    );
  }

  /** Runs one request under its own abort (the caller's signal, or the next request), reporting the outcome. */
  private async request<T>(
    outer: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
    onAbort?: () => T,
  ): Promise<T> {
    this.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    const cancel = (): void => controller.abort();
    outer?.addEventListener('abort', cancel, { once: true });
    if (outer?.aborted) controller.abort();
    try {
      await this.model.ready(controller.signal);
      const value = await work(controller.signal);
      this.model.succeeded();
      return value;
    } catch (error) {
      if (controller.signal.aborted && onAbort) return onAbort();
      if (controller.signal.aborted) throw new ServerError('aborted', 'cancelled');
      this.model.failed(error);
      throw error;
    } finally {
      outer?.removeEventListener('abort', cancel);
      if (this.inFlight === controller) this.inFlight = undefined;
    }
  }

  private takeCachePrompt(): boolean {
    const value = this.cachePrompt;
    this.cachePrompt = true;
    return value;
  }
}

/** Where the first of `stops` begins in `text`, if any does. */
function firstStop(text: string, stops: readonly string[]): number | undefined {
  let at: number | undefined;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (at === undefined || i < at)) at = i;
  }
  return at;
}

/** Without the server's count, the whole prompt is taken as evaluated. */
function wholePrompt(tokens: readonly number[]): { reused: number; evaluated: number } {
  return { reused: 0, evaluated: tokens.length };
}

/** An Ollama model whose vocabulary has no FIM format gets Ollama's way out: a model that has one. */
function ollamaFamily(name: string | undefined, detect: () => ResolvedFamily): ResolvedFamily {
  try {
    return detect();
  } catch (error) {
    if (name === undefined) throw error;
    throw new ServerError(
      'incompatible',
      `"${name}" on Ollama has no fill-in-the-middle tokens (${(error as Error).message})`,
      'Pull a code model with FIM, e.g. "ollama pull qwen2.5-coder:1.5b-base", and set "repogate.serverModel" to it.',
    );
  }
}

/** The server's root: an OpenAI-compatible URL may be given with its /v1, as such servers document it. */
function serverBase(server: ServerOptions): string {
  const url = server.url.replace(/\/+$/, '');
  return server.engine === 'openai-compatible' ? url.replace(/\/v1$/, '') : url;
}

function noVocabulary(url: string, model: string | undefined, where: string | undefined): ServerError {
  return new ServerError(
    'incompatible',
    `the GGUF of "${model ?? '?'}" is not on this machine (Ollama at ${url} keeps it at ${where ?? 'a path it did not name'})`,
    'Set "repogate.modelPath" to a copy of the model\'s GGUF (or a vocabulary-only GGUF with the same tokenizer).',
  );
}

function checkServerUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new ServerError(
      'bad-request',
      url ? `"${url}" is not an http(s) URL of an inference server` : 'no inference server is set',
      'Set "repogate.serverUrl", e.g. http://gpu-box:8080, or set "repogate.engine" to local.',
    );
  }
}
