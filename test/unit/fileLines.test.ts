/** The cache's streamed reader (issue 41): a body is never one string, yet its lines and checksum come out whole. */
import { strict as assert } from 'assert';
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import { fileLines } from '../../src/index/fileLines';
import { tempDir } from '../helpers/fixtures';

describe('fileLines', () => {
  it('gives each line whole across reads, multi-byte characters split between reads included, and hashes every byte', async () => {
    const dir = await tempDir();
    try {
      // Lines of 1 byte to 3 MB, and a three-byte character across the 1 MiB read boundary.
      const lines = ['a', `${'x'.repeat((1 << 20) - 3)}€tail`, 'é'.repeat(1_500_000), '', 'last without newline'];
      const text = lines.join('\n');
      const file = path.join(dir.dir, 'body');
      await fs.writeFile(file, text);
      const hash = createHash('sha256');
      const read: string[] = [];
      for await (const line of fileLines(file, hash)) read.push(line);
      assert.deepEqual(read, lines);
      assert.equal(hash.digest('hex'), createHash('sha256').update(text).digest('hex'));

      const skipped: string[] = [];
      for await (const line of fileLines(file, createHash('sha256'), 2)) skipped.push(line);
      assert.deepEqual(skipped, lines.slice(1));
    } finally {
      await dir.cleanup();
    }
  });
});
