/**
 * The entry index of a zip archive as torch.save writes it (stored, uncompressed entries, zip64 past 4 GB): where
 * each entry's bytes lie in the file, so that tensors are read in place. Only the central directory and one local
 * header per entry are read. Compressed entries are refused: torch never writes them, and reading them would need
 * the whole entry in memory.
 */
import type { FileHandle } from 'fs/promises';
import { CheckpointError } from './errors';

export interface ZipEntry {
  name: string;
  /** File offset of the entry's first data byte. */
  dataOffset: number;
  size: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const EOCD64_LOCATOR_SIGNATURE = 0x07064b50;
const EOCD64_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
/** The end record's comment is at most 64 KiB: the record lies within the last 64 KiB + 22 bytes. */
const EOCD_SEARCH = 0xffff + EOCD_SIZE;
const ZIP64_EXTRA = 0x0001;
const U32_MAX = 0xffffffff;
const U16_MAX = 0xffff;

async function readAt(fh: FileHandle, offset: number, length: number, file: string, what: string): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, offset);
  if (bytesRead < length) throw new CheckpointError('truncated', `${file} ends inside ${what}: the file is truncated.`);
  return buf;
}

const u64 = (b: Buffer, at: number): number => Number(b.readBigUInt64LE(at));

/** Lists the entries of the zip archive open in fh (size bytes long); `file` names it in errors. */
export async function readZipIndex(fh: FileHandle, size: number, file: string): Promise<Map<string, ZipEntry>> {
  const notZip = (why: string): CheckpointError =>
    new CheckpointError(
      'truncated',
      `${file} is not a complete torch checkpoint (${why}): the file is truncated or damaged — download it again.`,
    );
  const tailStart = Math.max(0, size - EOCD_SEARCH);
  const tail = await readAt(fh, tailStart, size - tailStart, file, 'the zip directory');
  let eocd = -1;
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw notZip('no zip end record');
  let count = tail.readUInt16LE(eocd + 10);
  let dirSize = tail.readUInt32LE(eocd + 12);
  let dirOffset = tail.readUInt32LE(eocd + 16);
  if (count === U16_MAX || dirSize === U32_MAX || dirOffset === U32_MAX) {
    const locator = eocd - 20;
    if (locator < 0 || tail.readUInt32LE(locator) !== EOCD64_LOCATOR_SIGNATURE) throw notZip('no zip64 end locator');
    const at = u64(tail, locator + 8);
    const rec = await readAt(fh, at, 56, file, 'the zip64 end record');
    if (rec.readUInt32LE(0) !== EOCD64_SIGNATURE) throw notZip('a bad zip64 end record');
    count = u64(rec, 32);
    dirSize = u64(rec, 40);
    dirOffset = u64(rec, 48);
  }
  if (dirOffset + dirSize > size) throw notZip('the directory lies past the end of the file');
  const dir = await readAt(fh, dirOffset, dirSize, file, 'the zip directory');
  const entries = new Map<string, ZipEntry>();
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL_SIGNATURE) throw notZip('a damaged zip directory');
    const method = dir.readUInt16LE(p + 10);
    let compressed = dir.readUInt32LE(p + 20);
    let plain = dir.readUInt32LE(p + 24);
    const nameLength = dir.readUInt16LE(p + 28);
    const extraLength = dir.readUInt16LE(p + 30);
    const commentLength = dir.readUInt16LE(p + 32);
    let local = dir.readUInt32LE(p + 42);
    const name = dir.toString('utf8', p + 46, p + 46 + nameLength);
    // zip64 extra field: the 64-bit values, in this order, of those whose 32-bit field is saturated.
    let e = p + 46 + nameLength;
    const extraEnd = e + extraLength;
    while (e + 4 <= extraEnd) {
      const id = dir.readUInt16LE(e);
      const len = dir.readUInt16LE(e + 2);
      if (id === ZIP64_EXTRA) {
        let q = e + 4;
        if (plain === U32_MAX) ((plain = u64(dir, q)), (q += 8));
        if (compressed === U32_MAX) ((compressed = u64(dir, q)), (q += 8));
        if (local === U32_MAX) local = u64(dir, q);
      }
      e += 4 + len;
    }
    p = extraEnd + commentLength;
    if (method !== 0 || compressed !== plain) {
      throw new CheckpointError('unsupported', `${file}: entry ${name} is compressed, which torch.save never writes.`);
    }
    const header = await readAt(fh, local, 30, file, `the header of ${name}`);
    if (header.readUInt32LE(0) !== LOCAL_SIGNATURE) throw notZip(`a bad local header for ${name}`);
    const dataOffset = local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (dataOffset + plain > size) throw notZip(`${name} runs past the end of the file`);
    entries.set(name, { name, dataOffset, size: plain });
  }
  return entries;
}
