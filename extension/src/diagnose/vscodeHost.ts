/**
 * The edge: the diagnose room's hosts (host.ts) made of the real VS Code API, the CLI runner,
 * the log and the settings. Made here from those, not from jobs/vscodeHost.ts's `roomHost`:
 * that module's imports lead back here (debug/vscodeHost.ts takes `noticeHost` from
 * whyStuck.ts), and a module cycle would leave a host undefined while the bundle loads.
 */
import * as vscode from 'vscode';
import { runCli } from '../common/cli';
import { log } from '../common/log';
import { getSettings } from '../common/settings';
import type { RoomHost } from '../jobs/host';
import type { NoticeHost } from './hangNotices';
import type { ClassSessionsHost, WhyStuckHost } from './host';
import { DEBUG_RANK_COMMAND } from './whyStuckPage';

const VIEW_TYPE = 'rankdebug.whyStuck';

const room: RoomHost & { showWarning(message: string): void } = {
    l10n: vscode.l10n,
    showInfo: (message) => void vscode.window.showInformationMessage(message),
    showError: (message) => void vscode.window.showErrorMessage(message),
    showWarning: (message) => void vscode.window.showWarningMessage(message),
    log: { info: (m) => log().info(m), warn: (m) => log().warn(m) },
    settings: (scope) => getSettings(scope),
};

export const classSessionsHost: ClassSessionsHost = {
    ...room,
    onDidStartDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidStartDebugSession(listener, thisArgs, disposables),
};

export const whyStuckHost: WhyStuckHost = {
    ...room,
    runCli,
    withProgress: (title, task) => vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, task),
    createPanel: (title) => vscode.window.createWebviewPanel(VIEW_TYPE, title, vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [], enableFindWidget: true }),
    showFile: (file, line) =>
        vscode.window.showTextDocument(vscode.Uri.file(file), {
            selection: new vscode.Range(line, 0, line, 0),
            viewColumn: vscode.ViewColumn.Beside,
            preview: true,
        }),
};

/** The hang notification's VS Code side: warnings, and the two commands its buttons run. */
export function noticeHost(): NoticeHost {
    return {
        l10n: vscode.l10n,
        showWarning: (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
        showInfo: (message) => void vscode.window.showInformationMessage(message),
        whyStuck: (job) => void vscode.commands.executeCommand('rankdebug.whyStuck', job ?? undefined),
        debugRank: (job, rank) => void vscode.commands.executeCommand(DEBUG_RANK_COMMAND, job, rank),
        log: (message) => log().info(message),
    };
}
