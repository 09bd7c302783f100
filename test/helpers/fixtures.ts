import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';

export const FIXTURES = path.resolve(__dirname, '../../../test/fixtures');
export const SHOP = path.join(FIXTURES, 'repos', 'shop');

/** A fresh temporary folder, removed by the returned cleanup. */
export async function tempDir(prefix = 'repogate-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** Copies a fixture repository into a temporary folder so that a test may change it. */
export async function copyFixture(source: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const temp = await tempDir();
  await fs.cp(source, temp.dir, { recursive: true });
  return temp;
}

export async function writeFiles(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
}
