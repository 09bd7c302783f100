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
import { existsSync } from 'fs';
import * as vscode from 'vscode';
import {
  COMPLETION_MS,
  config,
  cutLine,
  expectGhostText,
  expectNoGhostText,
  explainUntil,
  EXTENSION_ID,
  FIRST_COMPLETION_MS,
  open,
  pickFromQuickPick,
  revertDirtyFiles,
  run,
  SERVICE,
  setGlobal,
  sleep,
  waitFor,
  withTimeout,
  workspaceFolder,
} from './helpers';

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

describe('RepoGate in VS Code', function () {
  this.timeout(180_000);

  after(async () => {
    await setGlobal('gate', undefined);
    await setGlobal('enabled', undefined);
    await revertDirtyFiles();
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
