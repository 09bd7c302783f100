import * as vscode from 'vscode';
import { activateRepoGate } from './vscode/activate';

export function activate(context: vscode.ExtensionContext): void {
  activateRepoGate(context);
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
