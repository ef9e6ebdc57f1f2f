/** One output channel for the extension and its language server ("Rank Debugger"). */
import * as vscode from 'vscode';

let channel: vscode.LogOutputChannel | undefined;

export function createLog(): vscode.LogOutputChannel {
    channel ??= vscode.window.createOutputChannel('Rank Debugger', { log: true });
    return channel;
}

export function log(): vscode.LogOutputChannel {
    return createLog();
}
