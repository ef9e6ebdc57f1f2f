/** The edge: the group commands' host (host.ts) made of the real VS Code API. */
import * as vscode from 'vscode';
import { roomHost } from '../jobs/vscodeHost';
import type { GroupsHost } from './host';

export const groupsHost: GroupsHost = {
    ...roomHost,
    showWarning: (message) => void vscode.window.showWarningMessage(message),
    setStatus: (text, ms) => vscode.window.setStatusBarMessage(text, ms),
    setContext: (key, value) => void vscode.commands.executeCommand('setContext', key, value),
    activeSession: () => vscode.debug.activeDebugSession,
    onDidChangeActiveDebugSession: vscode.debug.onDidChangeActiveDebugSession,
    showQuickPick: (items, options) => vscode.window.showQuickPick(items, options),
    showInputBox: (options) => vscode.window.showInputBox(options),
    cursor: () => {
        const editor = vscode.window.activeTextEditor;
        return editor ? { uri: editor.document.uri, line: editor.selection.active.line } : undefined;
    },
};
