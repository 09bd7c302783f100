/**
 * A prompt of token ids as text, for servers that take text prompts only (Ollama's raw mode, LM Studio,
 * llamafile, TGI). Such a server tokenizes the text again with special-token parsing on, so the control tokens
 * are spelled out and the code between them is written as it is, and the server gets the same ids back.
 *
 * Code that itself spells a control token ("<fim_prefix>" in a tokenizer's source) would turn into that control
 * token on the server: it is defused with a zero-width space after its first character, so the model reads text
 * there, as it does with token-id prompts (a few tokens differ from the local count, never a control token).
 */

/** Inserted after the first character of a control token's spelling inside code. */
const DEFUSE = '\u200B';

export interface PromptTextVocabulary {
  /** node-llama-cpp's detokenizer; `context` are the ids before `tokens` (a SentencePiece leading space). */
  detokenize(tokens: readonly number[], special: boolean, context: readonly number[]): string;
  /** The model's control tokens: id to spelling. */
  controls: ReadonlyMap<number, string>;
  /** BOS: the server adds it itself when the model asks for one, so a leading BOS is left out of the text. */
  bos?: number;
}

export function promptText(tokens: readonly number[], vocabulary: PromptTextVocabulary): string {
  const ids = tokens[0] !== undefined && tokens[0] === vocabulary.bos ? tokens.slice(1) : tokens;
  const spellings = [...new Set(vocabulary.controls.values())].filter((s) => s.length > 1);
  let text = '';
  let start = 0;
  const flush = (end: number): void => {
    if (end > start)
      text += defuse(vocabulary.detokenize(ids.slice(start, end), false, ids.slice(0, start)), spellings);
  };
  for (const [i, id] of ids.entries()) {
    const control = vocabulary.controls.get(id);
    if (control === undefined) continue;
    flush(i);
    text += control;
    start = i + 1;
  }
  flush(ids.length);
  return text;
}

function defuse(code: string, spellings: readonly string[]): string {
  let out = code;
  for (const s of spellings) if (out.includes(s)) out = out.split(s).join(`${s[0]}${DEFUSE}${s.slice(1)}`);
  return out;
}
