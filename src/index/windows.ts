import type { Chunk } from './types';

/** Fallback chunking for files without a grammar (or without declarations): overlapping line windows. */
export function lineWindows(filePath: string, text: string, size = 30, stride = 20): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (let start = 0; start < lines.length; start += stride) {
    const end = Math.min(lines.length, start + size);
    const body = lines.slice(start, end).join('\n');
    if (body.trim()) {
      chunks.push({ id: `${filePath}#${start}-${end}:window`, path: filePath, kind: 'window', range: { start, end }, text: body, symbols: [] });
    }
    if (end === lines.length) break;
  }
  return chunks;
}
