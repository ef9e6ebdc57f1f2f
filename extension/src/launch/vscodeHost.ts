/** The edge: the launch room's hosts (host.ts) made of the real VS Code API and the extension's settings and log. */
import * as vscode from 'vscode';
import { log } from '../common/log';
import { getSettings } from '../common/settings';
import { mark } from '../debug/traceMarks';
import { discardLaunch, prepareLaunch } from '../debug/vscodeHost';
import type { CommandHost, RankPickHost } from './host';
import { writeLaunchJson } from './launchJson';

export const pickHost: RankPickHost = {
    l10n: vscode.l10n,
    createQuickPick: <T extends vscode.QuickPickItem>() => vscode.window.createQuickPick<T>(),
    separator: vscode.QuickPickItemKind.Separator,
    rememberRanks: () => getSettings().rememberRanks,
};

/**
 * Starts a job's session. VS Code's save-before-start also reloads every configuration file,
 * 0.2-0.3 s on the way to the first breakpoint; we save what it would (every dirty file,
 * unless `debug.saveBeforeStart` is "none") and skip the rest.
 */
async function startJobSession(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<boolean> {
    const scope = vscode.window.activeTextEditor?.document ?? folder?.uri;
    if (vscode.workspace.getConfiguration('debug', scope).get<string>('saveBeforeStart') !== 'none') await vscode.workspace.saveAll(false);
    mark('saved');
    return vscode.debug.startDebugging(folder, config, { suppressSaveBeforeStart: true });
}

/** The active terminal's selection: its own, else copied through the clipboard (put back after). */
async function terminalSelection(): Promise<{ text: string | undefined; cwd: string | undefined }> {
    const terminal = vscode.window.activeTerminal;
    let text = (terminal as { selection?: string } | undefined)?.selection;
    if (!text) {
        const before = await vscode.env.clipboard.readText();
        await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
        text = await vscode.env.clipboard.readText();
        await vscode.env.clipboard.writeText(before);
    }
    return { text, cwd: terminal?.shellIntegration?.cwd?.fsPath };
}

export const commandHost: CommandHost = {
    ...pickHost,
    showError: (message) => void vscode.window.showErrorMessage(message),
    showWarning: (message) => void vscode.window.showWarningMessage(message),
    log: { info: (m) => log().info(m), warn: (m) => log().warn(m) },
    parseUri: (text) => vscode.Uri.parse(text),
    isUri: (value): value is vscode.Uri => value instanceof vscode.Uri,
    activeEditor: () => {
        const editor = vscode.window.activeTextEditor;
        return editor ? { uri: editor.document.uri, languageId: editor.document.languageId, line: editor.selection.active.line } : undefined;
    },
    showInputBox: (options) => vscode.window.showInputBox(options),
    folderOf: (where) => {
        const uri = typeof where === 'string' ? vscode.Uri.file(where) : where;
        return (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
    },
    saveIfDirty: async (uri) => {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (doc?.isDirty && doc.uri.scheme === 'file') await doc.save();
    },
    prepareLaunch,
    discardLaunch,
    startJobSession,
    terminalSelection,
    writeLaunchJson,
};
