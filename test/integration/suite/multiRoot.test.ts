/**
 * RepoGate in a multi-root workspace: test/fixtures/repos/multiroot/multiroot.code-workspace, folders `app` and
 * `ledger`, each with its own src/index.ts. Run alone by the runner with REPOGATE_IT_WORKSPACE=multiroot
 * (../runTest.ts), which also sets REPOGATE_TEST_HOOKS so that the index's size can be read (activate.ts).
 * app's file imports `Ledger` from the package in the second folder: a completion there must retrieve its
 * definition, under a path that names the folder; an edit in the second folder reaches the index; a folder removed
 * while running leaves the index, and comes back.
 */
import * as assert from 'assert';
import * as vscode from 'vscode';
import type { TestHooks } from '../../../src/vscode/activate';
import {
  COMPLETION_MS,
  cutLine,
  expectGhostText,
  explainLast,
  explainUntil,
  EXTENSION_ID,
  FIRST_COMPLETION_MS,
  revertDirtyFiles,
  run,
  setGlobal,
  show,
  sleep,
  waitFor,
  withTimeout,
} from './helpers';

const APP_FILE = 'src/index.ts';
/** A snippet line of "Explain Last Completion" for the second folder's definition of Ledger. */
const LEDGER_DEFINITION = /^ {2}#\d+ ledger\/src\/index\.ts:\d+-\d+ \[definition\]/m;
/** The build after a folder change runs in the background: the fixture's two files take well under this. */
const REINDEX_MS = 60_000;

async function hooks(): Promise<TestHooks> {
  const extension = vscode.extensions.getExtension<TestHooks | undefined>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not loaded`);
  const exported = await withTimeout(extension.activate(), 60_000, 'activation');
  assert.ok(exported, 'no test hooks: the runner sets REPOGATE_TEST_HOOKS=1 for this workspace');
  return exported;
}

/** Polls the live index until it holds `files` files. */
async function indexedFiles(test: TestHooks, files: number, what: string): Promise<void> {
  const deadline = Date.now() + REINDEX_MS;
  let last = -1;
  while (Date.now() < deadline) {
    last = (await test.indexStats()).files;
    if (last === files) return;
    await sleep(250);
  }
  assert.fail(`the index holds ${last} files, not ${files}, ${REINDEX_MS} ms after ${what}`);
}

/** Changes the workspace's folders and waits for VS Code to say so. */
async function changeFolders(change: () => boolean, what: string): Promise<void> {
  let changed = false;
  const subscription = vscode.workspace.onDidChangeWorkspaceFolders(() => (changed = true));
  try {
    assert.ok(change(), `VS Code refused ${what}`);
    await waitFor(() => changed, 10_000, what);
  } finally {
    subscription.dispose();
  }
}

describe('RepoGate in a multi-root workspace', function () {
  this.timeout(180_000);

  after(async () => {
    await setGlobal('gate', undefined);
    await revertDirtyFiles();
  });

  it('opens both folders, and "Reindex Repository" indexes the files of both', async () => {
    assert.deepStrictEqual(
      vscode.workspace.workspaceFolders?.map((f) => f.name),
      ['app', 'ledger'],
    );
    const test = await hooks();
    await withTimeout(run('repogate.reindex'), 120_000, 'repogate.reindex');
    assert.strictEqual((await test.indexStats()).files, 2, "app's and ledger's src/index.ts");
  });

  it("a line in the first folder retrieves the second folder's definition, named by its folder", async () => {
    await setGlobal('gate', 'always');
    const editor = await cutLine(APP_FILE, 5, '  return open.length ? ledger.');
    await expectGhostText(editor, FIRST_COMPLETION_MS, 'after `ledger.` in app/src/index.ts');
    const text = await explainUntil(/^gate: always: /m);
    assert.match(text, LEDGER_DEFINITION, 'no definition from ledger/src/index.ts was retrieved');
  });

  it("an edit in the second folder's file reaches the index (the watcher names it by its folder)", async () => {
    const test = await hooks();
    // Run alone (REPOGATE_IT_GREP), this test must not take the start-up build's progress for the edit's.
    await indexedFiles(test, 2, 'the start-up build');
    const before = (await test.indexStats()).symbols;
    const ledger = vscode.workspace.workspaceFolders?.[1];
    assert.ok(ledger);
    const editor = await show(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(ledger.uri, APP_FILE)));
    const line = editor.document.getText().split('\n').indexOf('  balance(account: string): number {');
    assert.ok(line > 0, 'unexpected ledger/src/index.ts fixture');
    assert.ok(await editor.edit((edit) => edit.insert(new vscode.Position(line, 0), '  archive(): void {}\n\n')));
    const deadline = Date.now() + REINDEX_MS;
    let symbols = before;
    while (symbols === before && Date.now() < deadline) {
      await sleep(250);
      symbols = (await test.indexStats()).symbols;
    }
    assert.ok(symbols > before, `the index still holds ${symbols} symbols after a method was added in ledger`);
    await run('workbench.action.files.revert');
  });

  it('drops a folder removed while running from the index, and indexes it again when it is added back', async () => {
    const test = await hooks();
    const earlier = await explainLast();
    const ledger = vscode.workspace.workspaceFolders?.[1];
    assert.ok(ledger);
    // The second folder: removing the first would restart the extension host, and this suite with it.
    await changeFolders(() => vscode.workspace.updateWorkspaceFolders(1, 1), 'removing ledger');
    await indexedFiles(test, 1, 'ledger was removed');
    await changeFolders(
      () => vscode.workspace.updateWorkspaceFolders(1, 0, { uri: ledger.uri, name: ledger.name }),
      'adding ledger back',
    );
    await indexedFiles(test, 2, 'ledger was added back');
    // A place not completed before, so that the cursor cache cannot answer.
    await expectGhostText(await cutLine(APP_FILE, 4, '  const open = ledger.'), COMPLETION_MS, 'after ledger is back');
    // The same gate as the earlier completion: its explanation is told apart by its other lines (timings, text).
    let text = await explainLast();
    const deadline = Date.now() + 15_000;
    while (text === earlier && Date.now() < deadline) {
      await sleep(500);
      text = await explainLast();
    }
    assert.notStrictEqual(text, earlier, '"Explain Last Completion" still shows the earlier completion');
    assert.match(text, LEDGER_DEFINITION, 'the folder added back is not retrieved from');
  });
});
