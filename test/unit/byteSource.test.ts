/**
 * A file section reads as the same bytes in memory do, across its read buffer's edges (decision M15), and is read
 * only once it is whole and matches its checksum.
 */
import { strict as assert } from 'assert';
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import { memorySource, withFileSection, type ByteSource } from '../../src/index/byteSource';
import { seededRandom } from '../../src/index/seededRandom';
import { ByteWriter, writeString } from '../../src/index/varint';
import { tempDir } from '../helpers/fixtures';

type Item = { varint: number } | { string: string } | { bytes: number };

/** Varints, strings and byte runs, some longer than a read buffer (1 MiB), so that every kind crosses its edge. */
function items(): Item[] {
  const next = seededRandom(7);
  const list: Item[] = [];
  for (let i = 0; i < 60_000; i++) {
    const pick = next();
    if (pick < 0.6) list.push({ varint: Math.floor(next() * 2 ** (1 + Math.floor(next() * 32))) });
    else if (pick < 0.95) list.push({ string: `name${i}é`.repeat(1 + Math.floor(next() * 8)) });
    else list.push({ bytes: Math.floor(next() * 300) });
  }
  list.splice(30_000, 0, { bytes: 3 << 20 }, { string: 'x'.repeat(1_500_000) });
  return list;
}

function encode(list: Item[]): Uint8Array {
  const writer = new ByteWriter();
  list.forEach((item, i) => {
    if ('varint' in item) writer.varint(item.varint);
    else if ('string' in item) writeString(writer, item.string);
    else writer.append(new Uint8Array(item.bytes).fill(i & 0xff));
  });
  return writer.finish();
}

function readAll(source: ByteSource, list: Item[]): void {
  list.forEach((item, i) => {
    if ('varint' in item) assert.equal(source.varint(), item.varint, `item ${i}`);
    else if ('string' in item) assert.equal(source.string(), item.string, `item ${i}`);
    else assert.deepEqual(source.bytes(item.bytes), new Uint8Array(item.bytes).fill(i & 0xff), `item ${i}`);
  });
  assert.equal(source.remaining, 0);
}

describe('byte sources', function () {
  this.timeout(60_000);

  it('reads a file section as the same bytes in memory, at any offset, and nothing past its end', async () => {
    const list = items();
    const data = encode(list);
    assert.ok(data.length > 4 << 20);
    readAll(memorySource(data, 'test'), list);
    const { dir, cleanup } = await tempDir();
    try {
      const file = path.join(dir, 'section.bin');
      const before = Buffer.from('a header line\n');
      await fs.writeFile(file, Buffer.concat([before, data, Buffer.from('after')]));
      const section = { bytes: data.length, checksum: createHash('sha256').update(data).digest('hex') };
      withFileSection(file, before.length, section, 'test', (source) => {
        readAll(source, list);
        assert.throws(() => source.varint(), /test: truncated/);
        assert.throws(() => source.bytes(1), /test: truncated/);
      });
      assert.throws(
        () => withFileSection(file, before.length + 1, section, 'test', () => assert.fail('read unchecked bytes')),
        /^Error: test checksum mismatch$/,
      );
      assert.throws(
        () => withFileSection(file, 10, { ...section, bytes: data.length + 100 }, 'test', () => assert.fail()),
        /^Error: test truncated$/,
      );
    } finally {
      await cleanup();
    }
  });

  it('says a string or a run that runs past the bytes is truncated', () => {
    const writer = new ByteWriter();
    writeString(writer, 'hello');
    const data = writer.finish();
    assert.throws(() => memorySource(data.subarray(0, 3), 'test').string(), /test: truncated/);
    assert.throws(() => memorySource(data, 'test').bytes(7), /test: truncated/);
    assert.throws(() => memorySource(new Uint8Array([0x80]), 'test').varint(), /test: truncated/);
  });
});
