/**
 * The parser thread's body (ParseThread, parseThread.ts): parses and extracts each file it is sent and answers with
 * its facts, or walks the workspace it is sent and answers with the listing (with each file's hash, when asked); or
 * answers with the error, which the build's own parse or walk then meets again and reports as it always has.
 */
import { parentPort } from 'worker_threads';
import { extractFacts } from './extract';
import { languageForPath } from './languages';
import { SourceParser } from './parser';
import type { ThreadReply, ThreadRequest } from './parseThread';
import { hashWalked, scanWorkspace } from './scan';

const parser = new SourceParser();

async function parse(path: string, text: string) {
  const spec = languageForPath(path);
  if (!spec?.wasm) throw new Error(`${path} is not parsed by a grammar`);
  try {
    return await parser.parseWith(path, spec, text, (tree) => extractFacts(path, spec, text, tree));
  } finally {
    // Each file is parsed once: a kept tree would only hold wasm memory.
    parser.forget(path);
  }
}

async function answer(request: ThreadRequest): Promise<ThreadReply> {
  if ('scan' in request) {
    const scan = await scanWorkspace(request.scan);
    return { id: request.id, scan: request.hash ? hashWalked(request.scan, scan) : scan };
  }
  return { id: request.id, facts: await parse(request.path, request.text) };
}

parentPort?.on('message', (request: ThreadRequest) => {
  answer(request).then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        error: String((error as Error)?.message ?? error),
      } satisfies ThreadReply),
  );
});
