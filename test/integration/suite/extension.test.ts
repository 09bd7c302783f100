/**
 * RepoGate inside a real VS Code: activation, commands, the inline completion provider with the bundled tiny
 * model, the status bar's menu, the gate policies and secrets. Run by ../runTest.ts, which opens a copy of
 * test/fixtures/repos/shop with repogate.modelPath set to the tiny model and workspace trust off.
 *
 * VS Code has no public command that runs inline completion providers (there is
 * vscode.executeCompletionItemProvider, but no inline counterpart), so ghost text is observed the way a user
 * gets it: editor.action.inlineSuggest.trigger, then editor.action.inlineSuggest.commit (Tab) accepts it, and
 * the document must change by an insertion at the cursor. The status bar item and the log channel are not
 * readable through the API; what they report is checked through behaviour instead: the status bar's click
 * target (repogate.menu), and "Explain Last Completion", which names the model, the gate decision and the
 * retrieved snippets of the last model completion.
 */
import * as assert from 'assert';
import { existsSync, readFileSync } from 'fs';
import * as vscode from 'vscode';

const EXTENSION_ID = 'repogate.repogate';
const EXPECTED_COMMANDS = [
  'repogate.reindex',
  'repogate.toggle',
  'repogate.selectModel',
  'repogate.downloadModel',
  'repogate.useDemoModel',
  'repogate.explainLast',
  'repogate.selectGate',
  'repogate.showLog',
  'repogate.menu',
];
const SERVICE = 'src/services/userService.ts';
/** The first completion waits for activation, node-llama-cpp and the model to load. */
const FIRST_COMPLETION_MS = 120_000;
const COMPLETION_MS = 60_000;
/** Ghost text that has not appeared by then will not: debounce (120 ms) plus a tiny-model call (~0.1-0.5 s). */
const QUIET_MS = 6_000;
const POLL_MS = 250;
const RETRIGGER_MS = 5_000;
/** Time for a quick pick opened by a command to show before it is driven. */
const QUICK_PICK_SETTLE_MS = 1_500;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('repogate');
const run = <T = unknown>(command: string, ...args: unknown[]): Thenable<T> =>
  vscode.commands.executeCommand<T>(command, ...args);

async function withTimeout<T>(promise: Thenable<T>, ms: number, what: string): Promise<T> {
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

async function waitFor(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

function workspaceFolder(): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the runner passes a copy of test/fixtures/repos/shop)');
  return folder;
}

async function show(document: vscode.TextDocument): Promise<vscode.TextEditor> {
  return vscode.window.showTextDocument(document, {
    viewColumn: vscode.ViewColumn.One,
    preview: false,
    preserveFocus: false,
  });
}

async function open(relativePath: string): Promise<vscode.TextEditor> {
  return show(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(workspaceFolder().uri, relativePath)));
}

/**
 * Opens the file with its text as on disk except line `line` (0-based), which is cut after `prefix`; the
 * cursor goes to the cut. This is the CLI's `complete --cut-line`.
 */
async function cutLine(relativePath: string, line: number, prefix: string): Promise<vscode.TextEditor> {
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
async function nudge(editor: vscode.TextEditor, cursor: vscode.Position): Promise<void> {
  const options = { undoStopBefore: false, undoStopAfter: false };
  assert.ok(await editor.edit((edit) => edit.insert(cursor, ' '), options));
  assert.ok(await editor.edit((edit) => edit.delete(new vscode.Range(cursor, cursor.translate(0, 1))), options));
  editor.selection = new vscode.Selection(cursor, cursor);
}

/**
 * Asks for ghost text at the cursor and accepts it as Tab would. Returns the inserted text, or undefined when no
 * ghost text appeared within `ms`. Fails if the document changed other than by an insertion at the cursor.
 */
async function acceptGhostText(editor: vscode.TextEditor, ms: number): Promise<string | undefined> {
  const document = editor.document;
  const before = document.getText();
  const cursor = editor.selection.active;
  const offset = document.offsetAt(cursor);
  const deadline = Date.now() + ms;
  let triggeredAt = Number.NEGATIVE_INFINITY;
  while (Date.now() < deadline) {
    const current =
      vscode.window.activeTextEditor?.document === document ? vscode.window.activeTextEditor : await show(document);
    if (Date.now() - triggeredAt >= RETRIGGER_MS) {
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

async function expectGhostText(editor: vscode.TextEditor, ms: number, what: string): Promise<string> {
  const inserted = await acceptGhostText(editor, ms);
  assert.ok(inserted !== undefined, `no ghost text appeared within ${ms} ms ${what}`);
  assert.ok(inserted.trim().length > 0, `the accepted ghost text is blank ${what}: ${JSON.stringify(inserted)}`);
  return inserted;
}

async function expectNoGhostText(editor: vscode.TextEditor, what: string): Promise<void> {
  const inserted = await acceptGhostText(editor, QUIET_MS);
  assert.strictEqual(inserted, undefined, `ghost text appeared ${what}: ${JSON.stringify(inserted)}`);
}

/** "RepoGate: Explain Last Completion": the text of the document it opens, closed again; '' when none opens. */
async function explainLast(): Promise<string> {
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
async function explainUntil(pattern: RegExp): Promise<string> {
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
async function pickFromQuickPick(command: string, down: number): Promise<void> {
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

async function setGlobal(key: string, value: unknown): Promise<void> {
  await config().update(key, value, vscode.ConfigurationTarget.Global);
  await waitFor(
    () => JSON.stringify(config().get(key)) === JSON.stringify(value ?? config().inspect(key)?.defaultValue),
    5_000,
    `repogate.${key} = ${JSON.stringify(value)}`,
  );
  // The extension rebuilds its engine in its own onDidChangeConfiguration listener.
  await sleep(300);
}

describe('RepoGate in VS Code', function () {
  this.timeout(180_000);

  after(async () => {
    await setGlobal('gate', undefined);
    await setGlobal('enabled', undefined);
    for (const document of vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file')) {
      await show(document);
      await run('workbench.action.files.revert');
    }
  });

  it('activates', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not loaded`);
    await withTimeout(extension.activate(), 60_000, 'activation');
    assert.strictEqual(extension.isActive, true);
  });

  it('registers every contributed command', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const contributed = (extension.packageJSON.contributes?.commands ?? []).map(
      (c: { command: string }) => c.command,
    ) as string[];
    assert.deepStrictEqual(
      EXPECTED_COMMANDS.filter((c) => !contributed.includes(c)),
      [],
      'package.json no longer contributes these',
    );
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepStrictEqual(
      contributed.filter((c) => !registered.has(c)),
      [],
      'contributed but not registered',
    );
  });

  it('runs with the settings the runner wrote (tiny model, trusted workspace)', () => {
    const modelPath = config().get<string>('modelPath', '');
    assert.ok(
      modelPath.endsWith('repogate-tiny.gguf') && existsSync(modelPath),
      `repogate.modelPath is ${JSON.stringify(modelPath)}`,
    );
    if (process.env.REPOGATE_IT_MODEL) assert.strictEqual(modelPath, process.env.REPOGATE_IT_MODEL);
    assert.strictEqual(vscode.workspace.isTrusted, true, 'the workspace is restricted: RepoGate would not index it');
    assert.ok(
      existsSync(vscode.Uri.joinPath(workspaceFolder().uri, SERVICE).fsPath),
      `${SERVICE} is not in the workspace`,
    );
    assert.strictEqual(config().get('enabled'), true);
    assert.strictEqual(config().get('gate'), 'token');
  });

  it('"RepoGate: Reindex Repository" resolves', async () => {
    await withTimeout(run('repogate.reindex'), 120_000, 'repogate.reindex');
  });

  it('the provider writes ghost text after `this.repo.` that Tab accepts', async () => {
    const editor = await cutLine(SERVICE, 8, '    const existing = await this.repo.');
    const inserted = await expectGhostText(editor, FIRST_COMPLETION_MS, 'after `this.repo.` in userService.ts');
    assert.ok(editor.document.lineAt(8).text.startsWith('    const existing = await this.repo.'));
    console.log(`      ghost text accepted: ${JSON.stringify(inserted)}`);
  });

  it('the completion came from the tiny model through the token gate (Explain Last Completion)', async () => {
    const text = await explainUntil(/^gate: token: /m);
    assert.match(text, /^model: .*repogate-tiny/m, 'the model is not the tiny model the settings name');
    assert.match(text, /^prompt: \d+ tokens/m);
    assert.match(text, /^completion \((line|multiline)\):\n(?!\(nothing usable)/m);
  });

  it('"RepoGate: Toggle Completions" flips repogate.enabled, and ghost text stops and resumes with it', async () => {
    assert.strictEqual(config().get('enabled'), true);
    try {
      await withTimeout(run('repogate.toggle'), 10_000, 'repogate.toggle');
      await waitFor(() => config().get('enabled') === false, 5_000, 'repogate.enabled to become false');
      // The same place as before: the cursor cache would answer at once if the provider did not check the setting.
      await expectNoGhostText(
        await cutLine(SERVICE, 8, '    const existing = await this.repo.'),
        'while completions are disabled',
      );
      await withTimeout(run('repogate.toggle'), 10_000, 'repogate.toggle');
      await waitFor(() => config().get('enabled') === true, 5_000, 'repogate.enabled to become true');
      await expectGhostText(
        await cutLine(SERVICE, 8, '    const existing = await this.repo.'),
        COMPLETION_MS,
        'after completions were enabled again',
      );
    } finally {
      await setGlobal('enabled', undefined);
    }
  });

  it("the status bar's menu (repogate.menu, its click target) toggles completions from its first entry", async () => {
    assert.strictEqual(config().get('enabled'), true);
    try {
      await pickFromQuickPick('repogate.menu', 0);
      await waitFor(
        () => config().get('enabled') === false,
        5_000,
        'the menu\'s "Disable completions" to set repogate.enabled = false',
      );
    } finally {
      await setGlobal('enabled', undefined);
    }
  });

  it('"RepoGate: Switch Gate Policy…" sets repogate.gate, and the "always" gate retrieves from the index', async () => {
    // The quick pick lists token, heuristic, always, never: two down from the first is "always".
    await pickFromQuickPick('repogate.selectGate', 2);
    await waitFor(() => config().get('gate') === 'always', 5_000, 'repogate.gate to become "always"');
    await sleep(300);
    // A place not completed before, so the cursor cache cannot answer and the engine must run.
    await expectGhostText(
      await cutLine(SERVICE, 7, '    const normalized = '),
      COMPLETION_MS,
      'with the gate "always"',
    );
    const text = await explainUntil(/^gate: always: /m);
    assert.match(text, /→ retrieve cross-file context/);
    // The definition of this file's UserRepo import: proves the reindexed workspace index answered.
    assert.match(text, /^ {2}#\d+ src\/db\/userRepo\.ts:/m, 'no snippet from src/db/userRepo.ts was retrieved');
  });

  for (const [policy, line, prefix] of [
    ['never', 12, '    const user = '],
    ['heuristic', 13, '    await this.repo.'],
  ] as const) {
    it(`with repogate.gate = "${policy}" the engine still serves`, async () => {
      await setGlobal('gate', policy);
      await expectGhostText(await cutLine(SERVICE, line, prefix), COMPLETION_MS, `with the gate "${policy}"`);
      const text = await explainUntil(new RegExp(`^gate: ${policy}: `, 'm'));
      if (policy === 'never') assert.match(text, /→ no retrieval/);
    });
  }

  it('a secret file (.env) gets no completion', async () => {
    await setGlobal('gate', undefined);
    // Control: the provider answers in an ordinary file right now.
    await expectGhostText(
      await cutLine(SERVICE, 8, '    const existing = await this.repo.'),
      COMPLETION_MS,
      'in userService.ts (control)',
    );
    const editor = await open('.env');
    const end = editor.document.lineAt(0).range.end;
    assert.ok(editor.document.lineAt(0).text.startsWith('SHOP_API_TOKEN='), 'unexpected .env fixture');
    editor.selection = new vscode.Selection(end, end);
    await expectNoGhostText(editor, 'in .env');
    assert.ok(editor.document.lineAt(0).text.startsWith('SHOP_API_TOKEN='));
  });
});
