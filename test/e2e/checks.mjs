// The named end-to-end checks, run in this order against one code-server window with the packaged extension
// installed and test/fixtures/repos/shop open. Each gets the helpers of editor.mjs, throws on failure and may
// return a short detail for the report. Later checks build on the state earlier ones leave (open file, cursor).
import { statSync } from 'fs';

const indexedLines = (log) => log.split('\n').filter((line) => /indexed \d+ files, \d+ symbols/.test(line));

export const checks = [
  {
    name: 'the extension activates and indexes the workspace',
    async run(editor) {
      // onStartupFinished comes well after the workbench shows on a 2-core machine: allow a minute.
      const log = await editor.waitForLog((text) => indexedLines(text).length > 0, { timeout: 90_000 });
      return indexedLines(log)[0].replace(/^.*\[info\] /, '');
    },
  },
  {
    name: '"RepoGate: Reindex Repository" runs from the command palette',
    async run(editor) {
      const before = indexedLines(editor.readExtensionLog()).length;
      await editor.commandPalette('RepoGate: Reindex Repository');
      const message = await editor.notification(/RepoGate: indexed \d+ files/, { timeout: 60_000 });
      await editor.waitForLog((text) => indexedLines(text).length > before);
      return message;
    },
  },
  {
    name: 'a TypeScript file opens from the explorer',
    async run(editor) {
      await editor.openFile('src/services/userService.ts');
      const text = await editor.editorText();
      if (!text.includes('export class UserService')) throw new Error(`unexpected editor text:\n${text}`);
    },
  },
  {
    name: 'typed text lands in the editor',
    async run(editor) {
      const line = 'const typedByE2e = 1;';
      await editor.pressKey('Control+End');
      await editor.pressKey('Enter');
      await editor.typeText(line);
      const text = await editor.editorText();
      if (!text.split('\n').some((l) => l.trim() === line)) throw new Error(`typed line not found in:\n${text}`);
    },
  },
  {
    name: 'a screenshot is saved',
    async run(editor) {
      const file = await editor.screenshot('workbench');
      const { size } = statSync(file);
      if (size < 10_000) throw new Error(`${file} is only ${size} bytes`);
      return `${file} (${Math.round(size / 1024)} KB)`;
    },
  },
];
