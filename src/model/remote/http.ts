/**
 * JSON and server-sent-event requests to an inference server, each bounded in time, with failures turned into
 * ServerErrors that say what went wrong and what to do. The API key goes into the Authorization header only:
 * never into a message.
 */

export type ServerErrorCode =
  | 'unreachable'
  | 'timeout'
  | 'unauthorized'
  | 'server-error'
  | 'bad-request'
  | 'bad-response'
  | 'incompatible'
  | 'aborted';

export class ServerError extends Error {
  constructor(
    readonly code: ServerErrorCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** Most characters of a server's own error text or of an unreadable answer quoted in a message. */
const QUOTE_CHARS = 160;

const quote = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > QUOTE_CHARS ? `${flat.slice(0, QUOTE_CHARS)}…` : flat;
};

export interface HttpOptions {
  /** The server's base URL, e.g. http://gpu-box:8080 (a trailing /v1 is the caller's business). */
  url: string;
  apiKey?: string;
  /** The longest wait for an answer, and between two streamed chunks. */
  timeoutMs: number;
}

export class HttpClient {
  private readonly base: string;

  constructor(private readonly options: HttpOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  get url(): string {
    return this.base;
  }

  getJson(path: string, signal?: AbortSignal): Promise<unknown> {
    return this.json(path, { method: 'GET' }, signal);
  }

  /** `timeoutMs` replaces the client's bound for this call (a model that loads before it answers). */
  postJson(path: string, body: unknown, signal?: AbortSignal, timeoutMs?: number): Promise<unknown> {
    return this.json(path, { method: 'POST', body: JSON.stringify(body) }, signal, timeoutMs);
  }

  /**
   * The JSON objects of a stream: server-sent events ("data: {...}" lines; "data: [DONE]" ends it) or, for
   * Ollama, one JSON object a line. Returning from the loop or an abort closes the connection, which is how a
   * server learns to stop generating.
   */
  async *postStream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    format: 'sse' | 'ndjson' = 'sse',
  ): AsyncGenerator<unknown> {
    const call = this.start(signal);
    try {
      const response = await this.send(path, { method: 'POST', body: JSON.stringify(body) }, call);
      if (!response.body) throw new ServerError('bad-response', `${this.base}${path} answered without a body`);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = '';
      for (;;) {
        call.arm();
        const { done, value } = await reader.read().catch((error: unknown) => {
          throw call.failure(path, error);
        });
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).replace(/\r$/, '');
          buffered = buffered.slice(newline + 1);
          if (format === 'ndjson') {
            if (line.trim()) yield this.parse(path, line);
            continue;
          }
          if (line.startsWith('error:')) throw this.serverFailure(path, 500, line.slice('error:'.length));
          if (!line.startsWith('data:')) continue;
          const data = line.slice('data:'.length).trim();
          if (data === '[DONE]') return;
          yield this.parse(path, data);
        }
      }
      if (buffered.trim())
        throw new ServerError(
          'bad-response',
          `${this.base}${path}: the stream ended inside an event ("${quote(buffered)}")`,
        );
    } finally {
      call.end();
    }
  }

  private async json(path: string, init: RequestInit, signal?: AbortSignal, timeoutMs?: number): Promise<unknown> {
    const call = this.start(signal, timeoutMs);
    try {
      const response = await this.send(path, init, call);
      const text = await response.text().catch((error: unknown) => {
        throw call.failure(path, error);
      });
      return this.parse(path, text);
    } finally {
      call.end();
    }
  }

  private async send(path: string, init: RequestInit, call: Call): Promise<Response> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.options.apiKey) headers.Authorization = `Bearer ${this.options.apiKey}`;
    call.arm();
    const response = await fetch(`${this.base}${path}`, { ...init, headers, signal: call.signal }).catch(
      (error: unknown) => {
        throw call.failure(path, error);
      },
    );
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    throw this.serverFailure(path, response.status, text);
  }

  private parse(path: string, text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw new ServerError(
        'bad-response',
        `${this.base}${path} answered with something that is not JSON ("${quote(text)}")`,
        'Check "repogate.serverUrl": it must point at the inference server itself, not at a proxy page.',
      );
    }
  }

  private serverFailure(path: string, status: number, body: string): ServerError {
    const said = serverMessage(body);
    const where = `${this.base}${path}`;
    if (status === 401 || status === 403) {
      return new ServerError(
        'unauthorized',
        `${where} refused the request (${status}${said ? `: ${said}` : ''})`,
        'Set the server\'s API key with "RepoGate: Set Server API Key…".',
      );
    }
    if (status === 404 || status === 405) {
      return new ServerError(
        'incompatible',
        `${where} does not exist on this server (${status}${said ? `: ${said}` : ''})`,
        'Check "repogate.engine" (llama-server or openai-compatible) and "repogate.serverUrl".',
      );
    }
    if (status >= 500)
      return new ServerError(
        'server-error',
        `${where} failed on the server (${status}${said ? `: ${said}` : ''})`,
        "See the server's log.",
      );
    return new ServerError('bad-request', `${where} rejected the request (${status}${said ? `: ${said}` : ''})`);
  }

  private start(outer?: AbortSignal, timeoutMs = this.options.timeoutMs): Call {
    return new Call(this.base, timeoutMs, outer);
  }
}

/** The error text a server put in its answer ({"error": {"message": ...}} or {"error": "..."}), quoted. */
function serverMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string') return quote(message);
  } catch {
    // not JSON: quote the text itself
  }
  return quote(body);
}

/** One request's abort: the caller's signal, or the timeout, re-armed at each stage (answer, every chunk). */
class Call {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private readonly onOuterAbort = (): void => this.controller.abort();

  constructor(
    private readonly base: string,
    private readonly timeoutMs: number,
    private readonly outer?: AbortSignal,
  ) {
    if (outer?.aborted) this.controller.abort();
    outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  end(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
    this.controller.abort();
  }

  failure(path: string, error: unknown): ServerError {
    if (error instanceof ServerError) return error;
    if (this.timedOut) {
      return new ServerError(
        'timeout',
        `${this.base}${path} did not answer within ${(this.timeoutMs / 1000).toFixed(1)} s`,
        'The server is overloaded or stuck; check its log, or give it more slots (--parallel).',
      );
    }
    if (this.outer?.aborted) return new ServerError('aborted', 'cancelled');
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    return new ServerError(
      'unreachable',
      `cannot reach ${this.base} (${reason})`,
      'Start the inference server or fix "repogate.serverUrl"; completions resume by themselves when it answers.',
    );
  }
}
