/**
 * A Hugging Face byte-level BPE tokenizer (tokenizer.json, plus added_tokens.json when present) as llama.cpp's
 * gpt2 vocabulary: tokens by id, token types, merges. Repoformer's two tokens after the base vocabulary are named
 * <cc> and <eof> whatever the source calls them (<cfc_info>, </cfc_info>, <end_rc>), and added when the tokenizer
 * files lack them but the embedding has their two rows.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { CheckpointError } from './errors';

/** llama_token_type values (llama.h). */
const NORMAL = 1;
const CONTROL = 3;

export const GATE_TOKEN = '<cc>';
export const EOF_TOKEN = '<eof>';

export interface GgufVocabulary {
  tokens: string[];
  types: number[];
  merges: string[];
  /** Ids of <cc> and <eof> when the model has Repoformer's two added tokens. */
  gate?: { cc: number; eof: number };
  /** Token text → id for the special tokens the GGUF points at. */
  ids: ReadonlyMap<string, number>;
}

interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
}

async function readJson<T>(file: string, what: string): Promise<T> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new CheckpointError('missing-file', `${file} is missing: ${what} is needed for the vocabulary.`);
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new CheckpointError('tokenizer', `${file} is not valid JSON (${(error as Error).message}).`);
  }
}

/**
 * Reads the tokenizer in dir and lays it out for an embedding of `embeddingRows` rows; the vocabulary must fill
 * the rows exactly (or lack only the two Repoformer tokens), else it belongs to another model.
 */
export async function readVocabulary(dir: string, embeddingRows: number): Promise<GgufVocabulary> {
  const file = path.join(dir, 'tokenizer.json');
  const json = await readJson<TokenizerJson>(file, "the model's tokenizer.json");
  if (json.model?.type !== 'BPE' || !json.model.vocab) {
    throw new CheckpointError(
      'tokenizer',
      `${file} is not a byte-level BPE tokenizer (model.type ${json.model?.type}).`,
    );
  }
  const tokens: (string | undefined)[] = [];
  const special = new Set<number>();
  const added = new Set<number>();
  const set = (id: number, text: string, where: string): void => {
    // Beyond the embedding (+2 for the tokens appended below) is checked against it afterwards; this only keeps
    // a hostile id from growing the array without bound.
    if (!Number.isInteger(id) || id < 0 || id > embeddingRows + 2) {
      throw new CheckpointError(
        'tokenizer',
        `${where} gives ${JSON.stringify(text)} the id ${id}, outside the vocabulary.`,
      );
    }
    tokens[id] = text;
  };
  for (const [text, id] of Object.entries(json.model.vocab)) set(id, text, file);
  const baseSize = tokens.length;
  for (const t of json.added_tokens ?? []) {
    set(t.id, t.content, file);
    if (t.special) special.add(t.id);
    if (t.id >= baseSize) added.add(t.id);
  }
  const addedFile = path.join(dir, 'added_tokens.json');
  if (
    await fs.stat(addedFile).then(
      () => true,
      () => false,
    )
  ) {
    for (const [text, id] of Object.entries(await readJson<Record<string, number>>(addedFile, 'added_tokens.json'))) {
      set(id, text, addedFile);
      added.add(id);
    }
  }
  let gate: GgufVocabulary['gate'];
  if (tokens.length === embeddingRows - 2) {
    // The 16b repository's files describe StarCoder's vocabulary; the two fine-tuning tokens follow it.
    gate = { cc: tokens.length, eof: tokens.length + 1 };
  } else if (tokens.length === embeddingRows && added.has(embeddingRows - 2) && added.has(embeddingRows - 1)) {
    gate = { cc: embeddingRows - 2, eof: embeddingRows - 1 };
  } else if (tokens.length !== embeddingRows) {
    throw new CheckpointError(
      'tokenizer',
      `The tokenizer in ${dir} has ${tokens.length} tokens but the model's embedding has ${embeddingRows} rows: ` +
        "the tokenizer files belong to another model. Use the checkpoint's own tokenizer (for Repoformer, " +
        "StarCoder's: 49,152 tokens plus the two it adds).",
    );
  }
  if (gate) {
    tokens[gate.cc] = GATE_TOKEN;
    tokens[gate.eof] = EOF_TOKEN;
    special.add(gate.cc).add(gate.eof);
  }
  const holes = tokens.findIndex((t) => t === undefined);
  if (holes >= 0 || tokens.length !== embeddingRows) {
    throw new CheckpointError('tokenizer', `${file} has no token with id ${holes}: the vocabulary has a gap.`);
  }
  const full = tokens as string[];
  const merges = (json.model.merges ?? []).map((m) => (Array.isArray(m) ? `${m[0]} ${m[1]}` : m));
  const ids = new Map<string, number>();
  for (const id of special) ids.set(full[id], id);
  return {
    tokens: full,
    // Control, not user-defined: llama.cpp matches user-defined tokens inside plain text, so code that spells
    // "<fim_prefix>" or "<cc>" would turn into the token.
    types: full.map((_, id) => (special.has(id) ? CONTROL : NORMAL)),
    merges,
    gate,
    ids,
  };
}
