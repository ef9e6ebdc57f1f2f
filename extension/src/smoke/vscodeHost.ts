/** The edge: the smoke room's host (host.ts) made of the real VS Code API and the launch room's command steps. */
import * as vscode from 'vscode';
import { debugCommand, saveIfDirty, sourceFromArgs } from '../launch/commands';
import { commandHost } from '../launch/vscodeHost';
import type { SmokeHost } from './host';

export const smokeHost: SmokeHost = {
    l10n: vscode.l10n,
    showError: commandHost.showError,
    showWarning: commandHost.showWarning,
    isUri: commandHost.isUri,
    log: commandHost.log,
    ask: (message, ...buttons) => vscode.window.showInformationMessage(message, ...buttons),
    sourceFromArgs,
    saveIfDirty,
    debugCommand,
    asRelativePath: (uri) => vscode.workspace.asRelativePath(uri),
    fileUri: (file) => vscode.Uri.file(file),
    schemeUri: (scheme, path) => vscode.Uri.from({ scheme, path }),
    registerContent: (scheme, text) => {
        const changed = new vscode.EventEmitter<vscode.Uri>();
        const registration = vscode.workspace.registerTextDocumentContentProvider(scheme, {
            onDidChange: changed.event,
            provideTextDocumentContent: (uri) => text(uri.path),
        });
        return {
            changed: (uri) => changed.fire(uri),
            dispose: () => {
                registration.dispose();
                changed.dispose();
            },
        };
    },
    openDocument: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()),
    readDocument: (uri) => vscode.workspace.openTextDocument(uri),
    executeCommand: (command, ...args) => vscode.commands.executeCommand(command, ...args),
    activeUri: () => vscode.window.activeTextEditor?.document.uri,
    createTerminal: (name) => vscode.window.createTerminal({ name }),
};
