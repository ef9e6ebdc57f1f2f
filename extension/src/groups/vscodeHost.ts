/** The edge: the group commands' host (host.ts) made of the real VS Code API. */
import * as vscode from 'vscode';
import { roomHost } from '../jobs/vscodeHost';
import type { BindHost, GroupsHost } from './host';

export const groupsHost: GroupsHost = {
    ...roomHost,
    showWarning: (message) => void vscode.window.showWarningMessage(message),
    setStatus: (text, ms) => vscode.window.setStatusBarMessage(text, ms),
    setContext: (key, value) => void vscode.commands.executeCommand('setContext', key, value),
    activeSession: () => vscode.debug.activeDebugSession,
    // Forwarded, not captured: `vscode.debug`'s events are getters.
    onDidChangeActiveDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidChangeActiveDebugSession(listener, thisArgs, disposables),
    showQuickPick: (items, options) => vscode.window.showQuickPick(items, options),
    showInputBox: (options) => vscode.window.showInputBox(options),
    cursor: () => {
        const editor = vscode.window.activeTextEditor;
        return editor ? { uri: editor.document.uri, line: editor.selection.active.line } : undefined;
    },
};

/** The source breakpoints on a line, in VS Code's order. */
function breakpointsAt(uri: vscode.Uri, line: number): vscode.SourceBreakpoint[] {
    return vscode.debug.breakpoints.filter(
        (b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint && b.location.uri.toString() === uri.toString() && b.location.range.start.line === line,
    );
}

export const bindHost: BindHost = {
    ...groupsHost,
    isUri: (value): value is vscode.Uri => value instanceof vscode.Uri,
    breakpointsAt,
    setBreakpoints: (uri, line, breakpoints) => {
        const here = breakpointsAt(uri, line);
        const fresh = breakpoints.map(
            (b, i) => new vscode.SourceBreakpoint(here[i]?.location ?? new vscode.Location(uri, new vscode.Position(line, 0)), b.enabled, b.condition, b.hitCondition, b.logMessage),
        );
        if (here.length) vscode.debug.removeBreakpoints(here);
        vscode.debug.addBreakpoints(fresh);
    },
};
