import * as vscode from 'vscode';
import { activateRepoGate, type TestHooks } from './vscode/activate';

export function activate(context: vscode.ExtensionContext): TestHooks | undefined {
  return activateRepoGate(context);
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
