/** *Choose when the ranks start* (startedPicks.ts), with the VS Code host made here. */
import * as vscode from 'vscode';
import { log } from '../common/log';
import { attachHost } from '../jobs/vscodeHost';
import type { StartedHost } from './host';
import { StartedPicks, type StartedPickDeps } from './startedPicks';

export type { StartedPickDeps } from './startedPicks';

const startedHost: StartedHost = {
    l10n: vscode.l10n,
    createQuickPick: attachHost.createQuickPick,
    separator: attachHost.separator,
    runCli: attachHost.runCli,
    log: { info: (m) => log().info(m), warn: (m) => log().warn(m), debug: (m) => log().debug(m) },
    showInfo: attachHost.showInfo,
    setStatus: (text) => vscode.window.setStatusBarMessage(text),
    // Forwarded, not captured: `vscode.debug`'s events are getters.
    onDidStartDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidStartDebugSession(listener, thisArgs, disposables),
    onDidTerminateDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidTerminateDebugSession(listener, thisArgs, disposables),
};

export class StartedRankPicks extends StartedPicks {
    constructor(deps: StartedPickDeps) {
        super(startedHost, deps);
    }
}
