/** Debugging from VS Code's integrated terminals (terminalJobs.ts), with the VS Code host made here. */
import * as vscode from 'vscode';
import { mainScript } from '../common/python';
import { attachHost, roomHost } from '../jobs/vscodeHost';
import { debugCommand, type Context } from './commands';
import type { TerminalHost } from './host';
import { TerminalJobs } from './terminalJobs';

export type { LastCommand } from './terminalJobs';

function terminalHost(context: vscode.ExtensionContext): TerminalHost {
    return {
        ...roomHost,
        folder: attachHost.folder,
        startDebugging: attachHost.startDebugging,
        ask: (message, ...buttons) => vscode.window.showInformationMessage(message, ...buttons),
        setContext: (key, value) => void vscode.commands.executeCommand('setContext', key, value),
        env: context.environmentVariableCollection,
        storage: context.globalStorageUri.fsPath,
        mainScript,
        // Forwarded, not captured (the event is a getter); absent where VS Code has no shell integration events.
        onDidEndTerminalShellExecution: vscode.window.onDidEndTerminalShellExecution ? (listener, thisArgs, disposables) => vscode.window.onDidEndTerminalShellExecution(listener, thisArgs, disposables) : undefined,
        debugCommand,
    };
}

export class TerminalSupport extends TerminalJobs {
    constructor(context: vscode.ExtensionContext, ctx: Context) {
        super(terminalHost(context), ctx);
    }
}
