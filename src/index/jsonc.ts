/** JSON with comments and trailing commas (tsconfig, jsconfig, package.json as some tools write it). */
import * as fs from 'fs';

/** JSON with comments and trailing commas, as tsconfig and VS Code settings allow. */
export function parseJsonc(text: string): unknown {
  const n = text.length;
  const skipComment = (i: number) => {
    if (text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      return end < 0 ? n : end;
    }
    const end = text.indexOf('*/', i + 2);
    return end < 0 ? n : end + 2;
  };
  const isCommentStart = (i: number) => text[i] === '/' && (text[i + 1] === '/' || text[i + 1] === '*');
  const skipTrivia = (i: number) => {
    while (i < n) {
      if (/\s/.test(text[i])) i++;
      else if (isCommentStart(i)) i = skipComment(i);
      else break;
    }
    return i;
  };
  let out = '';
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let copied = i;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < n && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      i++;
    } else if (isCommentStart(i)) {
      out += text.slice(copied, i);
      i = copied = skipComment(i);
    } else if (c === ',' && (text[skipTrivia(i + 1)] === '}' || text[skipTrivia(i + 1)] === ']')) {
      out += text.slice(copied, i);
      copied = ++i;
    } else {
      i++;
    }
  }
  return JSON.parse(out + text.slice(copied));
}

/** The parsed file, or undefined when it is missing or not JSONC. */
export async function readJsonc(file: string): Promise<unknown> {
  try {
    return parseJsonc(await fs.promises.readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
