// The soak's editing: one episode opens a file at a statement, types a real line below it, takes or rejects the
// ghost text, undoes, saves, and puts the file back as it was committed (so that `git status` at the end shows
// only what someone else wrote into the workspace).
import { readFileSync } from 'fs';
import { relative } from 'path';
import { codeFiles, positionsIn } from '../e2e/checks.mjs';

/** Positions the episodes cycle through, one per file, spread over the repository. */
const POSITIONS = 200;
/** Lines typed: real statements of the repository, of plain characters (brackets and quotes auto-close). */
const LINES = 400;
const TYPEABLE = /^[A-Za-z0-9_$ .,;=+\-*/<>!&|?:]{16,70};$/;
/** A restored file is checked again after this long, and restored again at most this often. */
const RESTORE_SETTLE_MS = 500;
const RESTORE_ATTEMPTS = 5;
/** How long an episode waits for ghost text before it moves on. */
const GHOST_WAIT_MS = 3_000;

/** The statements to type and the positions to type them at. */
export function realLines(repo) {
  const files = codeFiles(repo);
  const lines = [];
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (TYPEABLE.test(line.trim()) && !lines.includes(line.trim())) lines.push(line.trim());
      if (lines.length >= LINES) break;
    }
    if (lines.length >= LINES) break;
  }
  return { lines, positions: positionsIn(files, POSITIONS) };
}

/** Episode `n`; `git(...args)` runs git in the repository. Returns a few words on what happened. */
export async function episode(editor, { repo, lines, n, git }) {
  const { file, line } = lines.positions[n % lines.positions.length];
  const text = lines.lines[(n * 7) % lines.lines.length];
  await editor.openAt(file, line);
  await editor.pressKey('End');
  await editor.pressKey('Enter');
  // A prefix of the line, as a person stops typing to see what is offered.
  await editor.typeText(text.slice(0, Math.max(8, Math.floor(text.length * 0.6))));
  let what = 'no ghost text';
  try {
    await editor.waitForGhostText({ timeout: GHOST_WAIT_MS });
    const accept = n % 2 === 0;
    await editor.pressKey(accept ? 'Tab' : 'Escape');
    what = accept ? 'accepted' : 'rejected';
  } catch {
    /* nothing offered in time: typing goes on */
  }
  await editor.typeText(' ');
  await editor.pressKey('Control+z');
  // Saved through the workbench's save, answered once written, and the tab shown clean; then the committed text
  // back from outside, as a checkout would. A keystroke handled late on a loaded machine can still change and save
  // the file after that (seen twice in 20-minute runs): the file is put back until git sees it unchanged.
  await editor.save();
  await editor.page
    .locator('.editor-group-container.active .tab.active.dirty')
    .waitFor({ state: 'detached', timeout: 10_000 });
  const rel = relative(repo, file);
  for (let attempt = 0; attempt < RESTORE_ATTEMPTS; attempt++) {
    git('checkout', '-q', '--', rel);
    await editor.page.waitForTimeout(RESTORE_SETTLE_MS);
    if (!git('status', '--porcelain', '--', rel).trim()) break;
  }
  return `${what} in ${rel}:${line + 1}`;
}
