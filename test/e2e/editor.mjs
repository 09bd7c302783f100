// Small helpers that drive VS Code's workbench (code-server) in a playwright-core page. The selectors were checked
// against code-server 4.139.1 (test/e2e/README.md); keep them here, not in the checks.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'fs';
import { join } from 'path';

const EXTENSION_ID = 'repogate.repogate';
const LOG_CHANNEL = 'RepoGate';

/** Monaco renders spaces in view lines as no-break spaces. */
const plain = (text) => (text ?? '').replace(/\u00a0/g, ' ');

/**
 * @param {import('playwright-core').Page} page the workbench page
 * @param {{ userDataDir: string, artifactsDir: string, baselineDir: string }} paths code-server's --user-data-dir;
 *   where screenshots go; the request folder of the baseline extension (tools/e2e/null-completion)
 */
export function createEditor(page, { userDataDir, artifactsDir, baselineDir }) {
  const activeEditor = '.editor-group-container.active .monaco-editor';
  let requests = 0;

  /** Hands a request to the baseline extension and waits for its answer (written whole, then renamed). */
  async function request(body, { timeout = 15_000 } = {}) {
    const n = `${Date.now()}${String(requests++).padStart(4, '0')}`;
    mkdirSync(baselineDir, { recursive: true });
    const file = join(baselineDir, `request-${n}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(body));
    renameSync(`${file}.tmp`, file);
    const done = join(baselineDir, `done-${n}.json`);
    const deadline = Date.now() + timeout;
    while (!existsSync(done)) {
      if (Date.now() > deadline)
        throw new Error(`the baseline extension did not carry out ${JSON.stringify(body)} within ${timeout} ms`);
      await page.waitForTimeout(50);
    }
    const answer = JSON.parse(readFileSync(done, 'utf8'));
    if (!answer.ok) throw new Error(`the baseline extension failed ${JSON.stringify(body)}: ${answer.error}`);
    return answer;
  }

  /** Visible text of the active editor without ghost text (Monaco only renders lines in view; the cursor's line always is). */
  async function editorText() {
    // Inline ghost text is rendered inside the view line it extends: leave it out, it is not in the document.
    const lines = await page.$$eval(`${activeEditor} .view-lines .view-line`, (els) =>
      els.map((el) => {
        const copy = el.cloneNode(true);
        copy
          .querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text')
          .forEach((g) => g.remove());
        return { top: parseFloat(el.style.top) || 0, text: copy.textContent ?? '' };
      }),
    );
    return lines
      .sort((a, b) => a.top - b.top)
      .map((l) => plain(l.text))
      .join('\n');
  }

  /** The ghost text now shown in the active editor, or null: the inline part plus any lines in its view zone. */
  async function ghostText() {
    return page
      .evaluate((root) => {
        const editor = document.querySelector(root);
        if (!editor) return null;
        const inline = [...editor.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview')];
        const block = [...editor.querySelectorAll('.ghost-text .view-line')];
        if (!inline.length && !block.length) return null;
        return [inline.map((el) => el.textContent).join(''), ...block.map((el) => el.textContent)].join('\n');
      }, activeEditor)
      .then((text) => (text === null ? null : plain(text)));
  }

  return {
    page,
    editorText,
    ghostText,

    /** Opens a file of the workspace through the explorer, expanding folders on the way, and focuses its editor. */
    async openFile(relPath) {
      if (!(await page.isVisible('.explorer-folders-view'))) await page.keyboard.press('Control+Shift+E');
      const parts = relPath.split('/');
      for (const [i, name] of parts.entries()) {
        // aria-level tells a top-level "src" from a nested one; the single root folder itself has no row.
        const row = page.locator(
          `.explorer-folders-view .monaco-list-row[aria-level="${i + 1}"][aria-label="${name}"]`,
        );
        await row.waitFor({ state: 'visible', timeout: 15_000 });
        if (i < parts.length - 1) {
          if ((await row.getAttribute('aria-expanded')) === 'false') await row.click();
        } else {
          // A double click opens the file pinned and moves the focus into its editor (a single click keeps it in the tree).
          await row.dblclick();
        }
      }
      const tab = page.locator(`.editor-group-container.active .tab.active[aria-label^="${parts.at(-1)}"]`);
      await tab.waitFor({ state: 'visible', timeout: 15_000 });
      await page.locator(`${activeEditor}.focused`).waitFor({ timeout: 15_000 });
    },

    /**
     * Opens a file (absolute path) with the cursor at the end of its 0-based `line` and waits for its editor to
     * have the focus. Goes through the baseline extension: the explorer only renders the rows in view.
     */
    async openAt(file, line) {
      const opened = await request({ op: 'open', file, line });
      const name = file.split('/').at(-1);
      await page
        .locator(`.editor-group-container.active .tab.active[aria-label^="${name}"]`)
        .waitFor({ state: 'visible', timeout: 15_000 });
      await page.locator(`${activeEditor}.focused`).waitFor({ timeout: 15_000 });
      return opened;
    },

    /**
     * The extension host's longest event-loop delay over the first `forMs` after the baseline extension's
     * activation (tools/e2e/null-completion), measured as RepoGate measures its builds: `{maxDelayMs, overMs}`.
     */
    async loopDelay(forMs) {
      const { maxDelayMs, overMs } = await request({ op: 'loopDelay', forMs }, { timeout: forMs + 60_000 });
      return { maxDelayMs, overMs };
    },

    /** The longest event-loop delay of the extension host since the previous call, its pid and JS heap in use. */
    async loopWindow() {
      return request({ op: 'loopWindow' });
    },

    /** Saves the active document through the baseline extension; resolves once it is written (false: nothing to save). */
    async save() {
      return (await request({ op: 'save' })).saved;
    },

    /** Calls RepoGate's test hook `name` (REPOGATE_TEST_HOOKS=1 in code-server's environment); returns its value. */
    async hook(name) {
      return (await request({ op: 'hook', name }, { timeout: 30_000 })).value;
    },

    /** Sets user settings (an object of key → value) through the baseline extension's configuration API. */
    async configure(settings) {
      await request({ op: 'configure', settings });
    },

    /** Types like a person: one key event per character ("\n" presses Enter, so auto-indent applies). */
    async typeText(text, { delay = 30 } = {}) {
      await page.keyboard.type(text, { delay });
    },

    /** A key or chord in Playwright's notation: "Tab", "Escape", "Control+End". */
    async pressKey(key) {
      await page.keyboard.press(key);
    },

    /**
     * Waits until ghost text is visible in the active editor. Returns its text and the milliseconds from `since`
     * (default: the call; a Date.now() value of this machine, which the page shares) to the first animation
     * frame that showed it, as the page's own clock read it in that frame.
     */
    async waitForGhostText({ timeout = 5_000, since = Date.now() } = {}) {
      const shownAt = await page.waitForFunction(
        (root) => {
          const editor = document.querySelector(root);
          const el = editor?.querySelector('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text');
          if (!el) return false;
          const box = el.getBoundingClientRect();
          return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden' ? Date.now() : false;
        },
        activeEditor,
        { polling: 'raf', timeout },
      );
      const ms = (await shownAt.jsonValue()) - since;
      return { text: await ghostText(), ms };
    },

    /**
     * Clicks a button of a notification whose text contains the string or matches the regex. An info toast hides
     * itself after a few seconds, so when no toast shows it within `timeout`, the notification centre is opened
     * and searched. Returns the notification's message.
     */
    async clickNotificationButton(textOrRegex, label, { timeout = 15_000 } = {}) {
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: textOrRegex }).first();
      let item = toast;
      try {
        await toast.waitFor({ state: 'visible', timeout });
      } catch {
        await this.commandPalette('Notifications: Show Notifications');
        item = page.locator('.notifications-center .notification-list-item', { hasText: textOrRegex }).first();
        await item.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
          throw new Error(`no notification ${textOrRegex} among the toasts or in the notification centre`);
        });
      }
      const message = plain(await item.locator('.notification-list-item-message').innerText()).trim();
      // VS Code closes a notification as it runs the button's action. A click during the toast's entrance can
      // land without effect (seen once in CI: the toast still there a minute later), so click until it closes.
      const button = item.locator('.monaco-button', { hasText: label }).first();
      const closed = () =>
        item.waitFor({ state: 'hidden', timeout: 3_000 }).then(
          () => true,
          () => false,
        );
      for (let attempt = 0; attempt < 3; attempt++) {
        // A late close between two attempts leaves nothing to click: that is success, not an error.
        await button.click({ timeout: 5_000 }).catch(() => undefined);
        if (await closed()) return message;
      }
      throw new Error(`three clicks on "${label}" did not close the notification ${textOrRegex} (no such button?)`);
    },

    /** Opens `folder` in this window (VS Code web's ?folder=), accepting any "leave page" prompt; waits for the workbench. */
    async openFolder(folder, { timeout = 120_000 } = {}) {
      const url = new URL(page.url());
      url.search = `?folder=${encodeURIComponent(folder)}`;
      const accept = (dialog) => void dialog.accept().catch(() => {});
      page.on('dialog', accept);
      try {
        await page.goto(url.toString());
        await page.locator('.monaco-workbench').waitFor({ timeout });
      } finally {
        page.off('dialog', accept);
      }
    },

    /** Runs a command by its palette title (e.g. "RepoGate: Reindex Repository") through F1. */
    async commandPalette(title, { timeout = 15_000 } = {}) {
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible', timeout });
      await input.fill(`>${title}`);
      const row = page.locator('.quick-input-widget .monaco-list-row', {
        has: page.locator('.label-name', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }),
      });
      try {
        await row.first().waitFor({ state: 'visible', timeout });
      } catch {
        await page.keyboard.press('Escape'); // leave no open palette behind for the next check
        throw new Error(`no command titled "${title}" in the command palette`);
      }
      await row.first().click();
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout });
    },

    /** Waits for a status bar item whose text contains the string or matches the regex; returns text and tooltip. */
    async statusBarItem(textOrRegex, { timeout = 15_000 } = {}) {
      const item = page.locator('.statusbar-item', { hasText: textOrRegex }).first();
      await item.waitFor({ state: 'visible', timeout });
      return { text: plain(await item.innerText()).trim(), tooltip: await item.getAttribute('aria-label') };
    },

    /** Waits for a notification toast whose text contains the string or matches the regex; returns its text. */
    async notification(textOrRegex, { timeout = 15_000 } = {}) {
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: textOrRegex }).first();
      await toast.waitFor({ state: 'visible', timeout });
      return plain(await toast.locator('.notification-list-item-message').innerText()).trim();
    },

    /**
     * Text of the extension's log output channel. code-server writes it to
     * <user-data-dir>/logs/<session>/exthost<N>/repogate.repogate/RepoGate.log; the newest session wins.
     */
    readExtensionLog() {
      const file = this.extensionLogFile();
      return file ? readFileSync(file, 'utf8') : '';
    },

    /** Path of the newest RepoGate log (each window's extension host writes its own), or undefined. */
    extensionLogFile() {
      const logs = join(userDataDir, 'logs');
      if (!existsSync(logs)) return undefined;
      const files = [];
      for (const session of readdirSync(logs)) {
        const sessionDir = join(logs, session);
        if (!statSync(sessionDir).isDirectory()) continue;
        for (const host of readdirSync(sessionDir).filter((name) => name.startsWith('exthost'))) {
          const file = join(sessionDir, host, EXTENSION_ID, `${LOG_CHANNEL}.log`);
          if (existsSync(file)) files.push(file);
        }
      }
      files.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
      return files.at(-1);
    },

    /** Polls the extension log until `predicate(text)` is true (the log is flushed asynchronously); returns the text. */
    async waitForLog(predicate, { timeout = 30_000, interval = 250 } = {}) {
      const deadline = Date.now() + timeout;
      for (;;) {
        const text = this.readExtensionLog();
        if (predicate(text)) return text;
        if (Date.now() > deadline)
          throw new Error(
            `the ${LOG_CHANNEL} log did not show it within ${timeout} ms; it reads:\n${text || '(empty)'}`,
          );
        await page.waitForTimeout(interval);
      }
    },

    /** Saves a PNG of the whole window under the artifacts folder; returns its path. */
    async screenshot(name) {
      mkdirSync(artifactsDir, { recursive: true });
      const file = join(artifactsDir, `${name}.png`);
      await page.screenshot({ path: file });
      return file;
    },
  };
}
