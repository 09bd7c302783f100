import type { Hash } from 'crypto';
import { createReadStream } from 'fs';

/** Bytes read at a time: a cache is never held whole, and a line is decoded alone. */
const READ_CHUNK = 1 << 20;

/**
 * The lines of `file` from byte `start`, decoded one at a time (the last one even without a newline), with every
 * byte read fed to `hash`. A line spanning many reads is joined once, at its end.
 */
export async function* fileLines(file: string, hash: Hash, start = 0): AsyncGenerator<string> {
  const pending: Buffer[] = [];
  for await (const read of createReadStream(file, { start, highWaterMark: READ_CHUNK }) as AsyncIterable<Buffer>) {
    hash.update(read);
    let from = 0;
    for (let end = read.indexOf(10); end >= 0; end = read.indexOf(10, from)) {
      pending.push(read.subarray(from, end));
      yield decode(pending);
      pending.length = 0;
      from = end + 1;
    }
    if (from < read.length) pending.push(read.subarray(from));
  }
  if (pending.length > 0) yield decode(pending);
}

function decode(parts: Buffer[]): string {
  return (parts.length === 1 ? parts[0] : Buffer.concat(parts)).toString('utf8');
}
