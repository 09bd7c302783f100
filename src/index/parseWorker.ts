/**
 * The parser thread's body (ParseThread, parseThread.ts): parses and extracts each file it is sent and answers with
 * its facts, or with the error, which the build's own parse then meets again and reports as it always has.
 */
import { parentPort } from 'worker_threads';
import { extractFacts } from './extract';
import { languageForPath } from './languages';
import { SourceParser } from './parser';
import type { ParseReply, ParseRequest } from './parseThread';

const parser = new SourceParser();

async function parse({ path, text }: ParseRequest) {
  const spec = languageForPath(path);
  if (!spec?.wasm) throw new Error(`${path} is not parsed by a grammar`);
  try {
    return await parser.parseWith(path, spec, text, (tree) => extractFacts(path, spec, text, tree));
  } finally {
    // Each file is parsed once: a kept tree would only hold wasm memory.
    parser.forget(path);
  }
}

parentPort?.on('message', (request: ParseRequest) => {
  parse(request).then(
    (facts) => parentPort!.postMessage({ id: request.id, facts } satisfies ParseReply),
    (error: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        error: String((error as Error)?.message ?? error),
      } satisfies ParseReply),
  );
});
