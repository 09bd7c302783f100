/**
 * What the integration suites share: opening and cutting lines, asking for ghost text and accepting it as Tab
 * would, "Explain Last Completion", quick picks and settings. See extension.test.ts for why ghost text is driven
 * through editor.action.inlineSuggest.trigger and .commit.
 */
import * as assert from 'assert';
import { readFileSync } from 'fs';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'repogate.repogate';
export const SERVICE = 'src/services/userService.ts';
/** The first completion waits for activation, node-llama-cpp and the model to load. */
export const FIRST_COMPLETION_MS = 120_000;
export const COMPLETION_MS = 60_000;
/** Ghost text that has not appeared by then will not: debounce (120 ms) plus a tiny-model call (~0.1-0.5 s). */
export const QUIET_MS = 6_000;
export const POLL_MS = 250;
export const RETRIGGER_MS = 5_000;
/** Time for a quick pick opened by a command to show before it is driven. */
export const QUICK_PICK_SETTLE_MS = 1_500;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('repogate');
export const run = <T = unknown>(command: string, ...args: unknown[]): Thenable<T> =>
  vscode.commands.executeCommand<T>(command, ...args);

export async function withTimeout<T>(promise: Thenable<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([Promise.resolve(promise), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function waitFor(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

export function workspaceFolder(): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the runner passes a copy of test/fixtures/repos/shop)');
  return folder;
}

export async function show(document: vscode.TextDocument): Promise<vscode.TextEditor> {
  return vscode.window.showTextDocument(document, {
    viewColumn: vscode.ViewColumn.One,
    preview: false,
    preserveFocus: false,
  });
}

export async function open(relativePath: string): Promise<vscode.TextEditor> {
  return show(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(workspaceFolder().uri, relativePath)));
}

/**
 * Opens the file with its text as on disk except line `line` (0-based), which is cut after `prefix`; the
 * cursor goes to the cut. This is the CLI's `complete --cut-line`.
 */
export async function cutLine(relativePath: string, line: number, prefix: string): Promise<vscode.TextEditor> {
  const editor = await open(relativePath);
  const document = editor.document;
  const lines = readFileSync(document.uri.fsPath, 'utf8').split('\n');
  assert.ok(
    lines[line]?.startsWith(prefix),
    `${relativePath}:${line + 1} does not start with ${JSON.stringify(prefix)}: ${JSON.stringify(lines[line])}`,
  );
  lines[line] = prefix;
  const text = lines.join('\n');
  if (document.getText() !== text) {
    const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
    assert.ok(await editor.edit((edit) => edit.replace(whole, text)), `could not edit ${relativePath}`);
  }
  const cursor = new vscode.Position(line, prefix.length);
  editor.selection = new vscode.Selection(cursor, cursor);
  await sleep(200);
  return editor;
}

/**
 * Types a space at the cursor and deletes it: the text stays, the document version moves on. VS Code does not
 * ask the providers again for a document version and position it already asked about (an explicit trigger
 * included), so without this a retry after "not ready yet" or "disabled" would never reach the provider.
 */
export async function nudge(editor: vscode.TextEditor, cursor: vscode.Position): Promise<void> {
  const options = { undoStopBefore: false, undoStopAfter: false };
  assert.ok(await editor.edit((edit) => edit.insert(cursor, ' '), options));
  assert.ok(await editor.edit((edit) => edit.delete(new vscode.Range(cursor, cursor.translate(0, 1))), options));
  editor.selection = new vscode.Selection(cursor, cursor);
}

/**
 * Asks for ghost text at the cursor and accepts it as Tab would. Returns the inserted text, or undefined when no
 * ghost text appeared within `ms`. Fails if the document changed other than by an insertion at the cursor.
 */
export async function acceptGhostText(
  editor: vscode.TextEditor,
  ms: number,
  retriggerMs = RETRIGGER_MS,
): Promise<string | undefined> {
  const document = editor.document;
  const before = document.getText();
  const cursor = editor.selection.active;
  const offset = document.offsetAt(cursor);
  const deadline = Date.now() + ms;
  let triggeredAt = Number.NEGATIVE_INFINITY;
  while (Date.now() < deadline) {
    const current =
      vscode.window.activeTextEditor?.document === document ? vscode.window.activeTextEditor : await show(document);
    if (Date.now() - triggeredAt >= retriggerMs) {
      await nudge(current, cursor);
      await run('editor.action.inlineSuggest.trigger');
      triggeredAt = Date.now();
    }
    await sleep(POLL_MS);
    await run('editor.action.inlineSuggest.commit');
    const after = document.getText();
    if (after !== before) {
      const head = before.slice(0, offset);
      const tail = before.slice(offset);
      assert.ok(
        after.length > before.length && after.startsWith(head) && after.endsWith(tail),
        `accepting the ghost text changed ${document.uri.fsPath} other than by an insertion at the cursor:\n${after}`,
      );
      return after.slice(offset, after.length - tail.length);
    }
  }
  return undefined;
}

export async function expectGhostText(
  editor: vscode.TextEditor,
  ms: number,
  what: string,
  retriggerMs = RETRIGGER_MS,
): Promise<string> {
  const inserted = await acceptGhostText(editor, ms, retriggerMs);
  assert.ok(inserted !== undefined, `no ghost text appeared within ${ms} ms ${what}`);
  assert.ok(inserted.trim().length > 0, `the accepted ghost text is blank ${what}: ${JSON.stringify(inserted)}`);
  return inserted;
}

export async function expectNoGhostText(editor: vscode.TextEditor, what: string): Promise<void> {
  const inserted = await acceptGhostText(editor, QUIET_MS);
  assert.strictEqual(inserted, undefined, `ghost text appeared ${what}: ${JSON.stringify(inserted)}`);
}

/** Reverts every edited file buffer: no test leaves one behind that a save could write into the workspace. */
export async function revertDirtyFiles(): Promise<void> {
  for (const document of vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file')) {
    await show(document);
    await run('workbench.action.files.revert');
  }
}

/** "RepoGate: Explain Last Completion": the text of the document it opens, closed again; '' when none opens. */
export async function explainLast(): Promise<string> {
  let opened: vscode.TextDocument | undefined;
  const subscription = vscode.workspace.onDidOpenTextDocument((document) => {
    if (document.isUntitled && document.languageId === 'markdown') opened = document;
  });
  try {
    await withTimeout(run('repogate.explainLast'), 10_000, 'repogate.explainLast');
  } finally {
    subscription.dispose();
  }
  if (!opened) return '';
  const text = opened.getText();
  if (vscode.window.activeTextEditor?.document !== opened) await vscode.window.showTextDocument(opened);
  await run('workbench.action.revertAndCloseActiveEditor');
  return text;
}

/** The explanation once it describes the completion just accepted (the final result lands after the first line). */
export async function explainUntil(pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 15_000;
  let text = '';
  while (Date.now() < deadline) {
    text = await explainLast();
    if (pattern.test(text)) return text;
    await sleep(500);
  }
  return assert.fail(
    `"Explain Last Completion" never matched ${pattern}; it showed:\n${text || '(no explanation document opened)'}`,
  );
}

/** Runs a command that shows a quick pick, moves `down` items from the first and accepts. */
export async function pickFromQuickPick(command: string, down: number): Promise<void> {
  const picking = run(command);
  await sleep(QUICK_PICK_SETTLE_MS);
  for (let i = 0; i < down; i++) await run('workbench.action.quickOpenSelectNext');
  await run('workbench.action.acceptSelectedQuickOpenItem');
  try {
    await withTimeout(picking, 10_000, `${command} after accepting its quick pick`);
  } catch (error) {
    await run('workbench.action.closeQuickOpen');
    throw error;
  }
}

export async function setGlobal(key: string, value: unknown): Promise<void> {
  await config().update(key, value, vscode.ConfigurationTarget.Global);
  await waitFor(
    () => JSON.stringify(config().get(key)) === JSON.stringify(value ?? config().inspect(key)?.defaultValue),
    5_000,
    `repogate.${key} = ${JSON.stringify(value)}`,
  );
  // The extension rebuilds its engine in its own onDidChangeConfiguration listener.
  await sleep(300);
}

/** Lines a test adds to its outcome (measurements), printed under it by the runner; taken per test. */
const notes: string[] = [];
export function note(line: string): void {
  notes.push(line);
}
export function takeNotes(): string[] {
  return notes.splice(0);
}
