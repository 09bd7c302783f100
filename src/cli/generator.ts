/** The CLI's generator: the GGUF in this process, or the model on an inference server (--engine, --server). */
import { CodeModel } from '../model/codeModel';
import { RemoteModel, type ServerOptions } from '../model/remote/remoteModel';
import type { RemoteEngine, TokenModel } from '../model/tokenModel';
import { UsageError } from './cliError';

const ENGINES = 'local, llama-server, openai-compatible, ollama';

export const ENGINE_USAGE = `--engine local|llama-server|openai-compatible|ollama --server URL [--server-model NAME]
                                                 [--text-prompts]
                                                 run the model on an inference server; --model names a GGUF with
                                                 its vocabulary (Ollama: the model's own GGUF by default);
                                                 --text-prompts sends text to an OpenAI-compatible server even
                                                 when it takes token ids; the API key is read from REPOGATE_API_KEY`;

/** The server options the flags ask for (none for the local engine); throws on an unknown engine or a missing URL. */
export function serverFromFlags(
  engine: string | undefined,
  url: string | undefined,
  model: string | undefined,
  textPrompts = false,
): ServerOptions | undefined {
  if (engine === undefined || engine === 'local') {
    if (url) throw new UsageError(`--server ${url}: needs --engine llama-server, openai-compatible or ollama`);
    if (textPrompts) throw new UsageError('--text-prompts: needs --engine openai-compatible');
    return undefined;
  }
  if (engine !== 'llama-server' && engine !== 'openai-compatible' && engine !== 'ollama')
    throw new UsageError(`--engine ${engine}: not an engine (${ENGINES})`);
  if (!url) throw new UsageError(`--engine ${engine}: needs --server URL`);
  if (textPrompts && engine !== 'openai-compatible')
    throw new UsageError(`--text-prompts: needs --engine openai-compatible (${engine} takes one kind of prompt)`);
  return {
    engine: engine satisfies RemoteEngine,
    url,
    model,
    promptFormat: textPrompts ? 'text' : 'auto',
    apiKey: process.env.REPOGATE_API_KEY || undefined,
  };
}

export async function loadGenerator(
  modelPath: string,
  threads: number | undefined,
  server?: ServerOptions,
): Promise<TokenModel> {
  if (!server) return CodeModel.load({ modelPath, threads });
  return RemoteModel.load({ modelPath }, server, (problem) => {
    if (problem) process.stderr.write(`server: ${problem.message}${problem.hint ? ` (${problem.hint})` : ''}\n`);
  });
}
