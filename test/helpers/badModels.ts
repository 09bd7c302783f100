/**
 * Real bad model files, made from the shipped tiny model (test/fixtures/models/repogate-tiny.gguf): what users
 * end up pointing the model path at — a text file or saved web page named .gguf, an unfinished download, a model
 * of an architecture llama.cpp does not know, a model without FIM tokens, a folder.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { readGguf } from '../../src/model/gguf';
import { tempDir } from './fixtures';
import { rewriteGguf, type GgufKv } from './ggufWrite';
import { TINY_MODEL } from './tinyModel';

/** Not an architecture of llama.cpp: the fixture's llama.* keys are renamed to it. */
export const UNKNOWN_ARCHITECTURE = 'repogate-llama';

export interface BadModels {
  dir: string;
  /** Plain text saved as .gguf. */
  textFile: string;
  /** An HTML error page saved as .gguf, as when a download link pointed at a web page. */
  htmlPage: string;
  empty: string;
  /** The fixture with its version field set to 1. */
  versionOne: string;
  /** The fixture cut in the middle of its tensor data: a download that stopped early. */
  truncatedData: string;
  /** The fixture cut inside its metadata (in the tokenizer arrays). */
  truncatedHeader: string;
  /** general.architecture = UNKNOWN_ARCHITECTURE and every llama.* key renamed to match; otherwise valid. */
  unknownArchitecture: string;
  /** No tokenizer.ggml.fim_*_token_id keys and the FIM tokens renamed to <hole_*>; otherwise valid. */
  noFim: string;
  /** A folder named like a model, holding one. */
  directory: string;
  cleanup(): Promise<void>;
}

const FIM_KEY = /^tokenizer\.ggml\.(fim_(pre|suf|mid|pad|rep|sep)|prefix|suffix|middle)_token_id$/;
const FIM_RENAMES = new Map([
  ['<fim_prefix>', '<hole_prefix>'],
  ['<fim_suffix>', '<hole_suffix>'],
  ['<fim_middle>', '<hole_middle>'],
]);

function renameArchitecture(kvs: GgufKv[]): GgufKv[] {
  return kvs.map((kv) => {
    if (kv.key === 'general.architecture') return { ...kv, value: UNKNOWN_ARCHITECTURE };
    if (kv.key.startsWith('llama.')) return { ...kv, key: `${UNKNOWN_ARCHITECTURE}.${kv.key.slice('llama.'.length)}` };
    return kv;
  });
}

function removeFim(kvs: GgufKv[]): GgufKv[] {
  return kvs
    .filter((kv) => !FIM_KEY.test(kv.key))
    .map((kv) =>
      kv.key === 'tokenizer.ggml.tokens'
        ? { ...kv, value: (kv.value as string[]).map((t) => FIM_RENAMES.get(t) ?? t) }
        : kv,
    );
}

export async function writeBadModels(): Promise<BadModels> {
  const { dir, cleanup } = await tempDir('repogate-bad-models-');
  const fixture = await fs.readFile(TINY_MODEL);
  const { dataOffset } = await readGguf(TINY_MODEL);
  const at = (name: string): string => path.join(dir, name);

  const files = {
    textFile: at('notes.gguf'),
    htmlPage: at('model.gguf'),
    empty: at('empty.gguf'),
    versionOne: at('version-one.gguf'),
    truncatedData: at('partial-download.gguf'),
    truncatedHeader: at('cut-header.gguf'),
    unknownArchitecture: at('unknown-architecture.gguf'),
    noFim: at('no-fim.gguf'),
    directory: at('models.gguf'),
  };
  await fs.writeFile(files.textFile, 'TODO: download the model from the release page and put it here.\n');
  await fs.writeFile(
    files.htmlPage,
    '<!DOCTYPE html>\n<html lang="en"><head><title>repogate-tiny.gguf · Hugging Face</title></head>\n' +
      '<body><main><h1>repogate-tiny.gguf</h1><a href="/resolve/main/repogate-tiny.gguf">download</a></main></body></html>\n',
  );
  await fs.writeFile(files.empty, '');
  const versionOne = Buffer.from(fixture);
  versionOne.writeUInt32LE(1, 4);
  await fs.writeFile(files.versionOne, versionOne);
  await fs.writeFile(
    files.truncatedData,
    fixture.subarray(0, dataOffset + Math.floor((fixture.length - dataOffset) / 2)),
  );
  await fs.writeFile(files.truncatedHeader, fixture.subarray(0, Math.floor(dataOffset / 2)));
  await rewriteGguf(TINY_MODEL, files.unknownArchitecture, renameArchitecture);
  await rewriteGguf(TINY_MODEL, files.noFim, removeFim);
  await fs.mkdir(files.directory);
  await fs.writeFile(path.join(files.directory, 'repogate-tiny.gguf'), '');
  return { dir, ...files, cleanup };
}
