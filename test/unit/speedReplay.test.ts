/**
 * The typing replay of `bench:speed`: consecutive lines of a stretch are written into one document, so what
 * follows the cursor stays the same from the end of one line to the start of the next, as in an editor. (When each
 * line cut the document at its own end, every new line lost a line below the cursor: its right context and its
 * line-start key changed, and the engine's preparation of the next line during the pause could never be used.)
 */
import { strict as assert } from 'assert';
import { offsetOf } from '../../src/index/cursor';
import { pickLines, requestAt } from '../../src/bench/speedBench';
import { tempDir, writeFiles } from '../helpers/fixtures';

describe('bench:speed typing replay', () => {
  it('keeps the text below the cursor from the end of one line to the start of the next', async () => {
    const made = await tempDir();
    try {
      const file = (name: string): string =>
        Array.from({ length: 300 }, (_, i) => `  const ${name}${i} = compute(${i});`).join('\n');
      await writeFiles(made.dir, { 'a.ts': file('alpha'), 'b.ts': file('beta') });
      const lines = await pickLines(made.dir, 6, 2);
      assert.equal(lines.length, 6);
      let pairs = 0;
      for (let i = 1; i < lines.length; i++) {
        const [done, next] = [lines[i - 1], lines[i]];
        if (done.path !== next.path) continue;
        pairs++;
        const doneText = done.text.split('\n')[done.line];
        const nextText = next.text.split('\n')[next.line];
        const finished = requestAt(done, doneText, doneText.length);
        const started = requestAt(next, nextText, next.from);
        const below = (r: typeof finished): string => r.text.slice(offsetOf(r.text, r.cursor));
        assert.equal(below(started), below(finished), `line ${next.line}: the same text below the cursor`);
        assert.equal(
          started.text.slice(0, offsetOf(started.text, started.cursor)),
          `${finished.text.slice(0, offsetOf(finished.text, finished.cursor))}\n${nextText.slice(0, next.from)}`,
        );
      }
      assert.equal(pairs, 4, 'two stretches of three lines');
    } finally {
      await made.cleanup();
    }
  });
});
