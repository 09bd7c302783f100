import * as vscode from 'vscode';
import { activateRepoGate, type FaultHooks } from './vscode/activate';

export function activate(context: vscode.ExtensionContext): FaultHooks | undefined {
  return activateRepoGate(context);
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
