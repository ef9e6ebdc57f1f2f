/** The edge: the jobs room's host (host.ts) made of the real VS Code API, the CLI runner, the log and the settings. */
import * as vscode from 'vscode';
import { runCli } from '../common/cli';
import { log } from '../common/log';
import { getSettings } from '../common/settings';
import { pickHost } from '../launch/vscodeHost';
import type { AttachHost, JobActionsHost, RoomHost } from './host';

export const roomHost: RoomHost = {
    l10n: vscode.l10n,
    showInfo: (message) => void vscode.window.showInformationMessage(message),
    showError: (message) => void vscode.window.showErrorMessage(message, { modal: false }),
    log: { info: (m) => log().info(m), warn: (m) => log().warn(m) },
    settings: (scope) => getSettings(scope),
};

export const attachHost: AttachHost = {
    ...roomHost,
    createQuickPick: pickHost.createQuickPick,
    separator: pickHost.separator,
    runCli,
    withProgress: (title, task) => vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, task),
    folder: () => vscode.workspace.workspaceFolders?.[0],
    startDebugging: (folder, config) => vscode.debug.startDebugging(folder, config, { suppressSaveBeforeStart: true }),
};

export const jobActionsHost: JobActionsHost = {
    ...roomHost,
    showQuickPick: (items, options) => vscode.window.showQuickPick(items, options),
    confirm: (message, detail, button) => vscode.window.showWarningMessage(message, { modal: true, detail }, button),
    stopDebugging: (session) => vscode.debug.stopDebugging(session),
};
