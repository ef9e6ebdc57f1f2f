/**
 * The edge: the debug parts' host (host.ts) made of the real VS Code API, the extension's
 * settings, log and interpreter, and the job registry.
 */
import * as vscode from 'vscode';
import type { JobInfo } from '../core/jobList';
import { HangNotices } from '../diagnose/hangNotices';
import { noticeHost } from '../diagnose/whyStuck';
import { log } from '../common/log';
import { cliPrefix } from '../common/python';
import { getSettings } from '../common/settings';
import { ExceptionFilters, sourceArguments, type ClientConfig } from './clientConfig';
import type { DebugHost } from './host';
import { endRankSession } from './linkSession';
import { WarmLauncher } from './warmLauncher';
import type { SourceBreakpoints } from './rankLink';

function pythonBreakpoints(): string[] {
    return vscode.debug.breakpoints
        .filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint && b.enabled)
        .filter((b) => b.location.uri.scheme === 'file' && b.location.uri.fsPath.endsWith('.py'))
        .map((b) => `${b.location.uri.fsPath}:${b.location.range.start.line + 1}`);
}

function sourceBreakpoints(): SourceBreakpoints[] {
    const bySource = new Map<string, SourceBreakpoints>();
    for (const b of vscode.debug.breakpoints) {
        if (!(b instanceof vscode.SourceBreakpoint) || !b.enabled || b.location.uri.scheme !== 'file' || !b.location.uri.fsPath.endsWith('.py')) continue;
        const path = b.location.uri.fsPath;
        const entry = bySource.get(path) ?? { path, breakpoints: [] };
        entry.breakpoints.push({ line: b.location.range.start.line + 1, condition: b.condition, hitCondition: b.hitCondition, logMessage: b.logMessage });
        bySource.set(path, entry);
    }
    return [...bySource.values()];
}

/** The rank sessions' exception filters as last set (registered as a tracker in index.ts). */
export const exceptionFilters = new ExceptionFilters();

function clientConfig(): ClientConfig {
    const functionBreakpoints = vscode.debug.breakpoints
        .filter((b): b is vscode.FunctionBreakpoint => b instanceof vscode.FunctionBreakpoint && b.enabled)
        .map((b) => ({ name: b.functionName, condition: b.condition, hitCondition: b.hitCondition }));
    return { breakpoints: sourceArguments(sourceBreakpoints()), functionBreakpoints, exceptionFilters: exceptionFilters.current };
}

/** The launcher started ahead while ranks are picked (commands.ts `debugCommand`). */
export const warmLauncher = new WarmLauncher();

let preparing = 0; // a discard calls off a prepare still waiting for the interpreter

/** Starts a `rankdebug launch` ahead for the interpreter the server runs jobs with. */
export function prepareLaunch(server: { python(): Promise<{ python: string }> }, cwd?: string): void {
    const mine = ++preparing;
    void server.python().then(
        ({ python }) => {
            if (mine === preparing) warmLauncher.prepare(cliPrefix(python), cwd);
        },
        () => undefined,
    );
}

/** No job comes (the pick was cancelled, the command not planned): the launcher started ahead ends now, not after its idle time. */
export function discardLaunch(): void {
    preparing++;
    warmLauncher.discard();
}

/** `listJobs`: the jobs `rankdebug jobs --json` lists now (the Training Jobs view's `latest`). */
export function vscodeHost(listJobs: () => Promise<readonly JobInfo[]>): DebugHost {
    return {
        l10n: vscode.l10n,
        showError: (message) => void vscode.window.showErrorMessage(message),
        log: { info: (message) => log().info(message), warn: (message) => log().warn(message) },
        justMyCode: (scope) => getSettings(scope).justMyCode,
        executeCommand: (command) => vscode.commands.executeCommand(command),
        pythonBreakpoints,
        clientConfig,
        cliPrefix,
        listJobs,
        onDidStartDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidStartDebugSession(listener, thisArgs, disposables),
        onDidTerminateDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidTerminateDebugSession(listener, thisArgs, disposables),
        emitter: <T>() => new vscode.EventEmitter<T>(),
        maxSessions: () => getSettings().maxSessions,
        stopSession: (session) => endRankSession(session),
        activeSession: () => vscode.debug.activeDebugSession,
        onDidChangeActiveDebugSession: (listener, thisArgs, disposables) => vscode.debug.onDidChangeActiveDebugSession(listener, thisArgs, disposables),
        sourceBreakpoints,
        warm: warmLauncher,
        onDidChangeBreakpoints: (listener, thisArgs, disposables) => vscode.debug.onDidChangeBreakpoints(listener, thisArgs, disposables),
        hang: new HangNotices(noticeHost()),
        createTerminal: (name, pty) => vscode.window.createTerminal({ name, iconPath: new vscode.ThemeIcon('debug-alt'), pty }),
        startChildSession: (parent, config) =>
            vscode.debug.startDebugging(parent.workspaceFolder, config, {
                parentSession: parent,
                lifecycleManagedByParent: true,
                consoleMode: vscode.DebugConsoleMode.MergeWithParent,
                compact: false,
                suppressSaveBeforeStart: true,
            } as vscode.DebugSessionOptions),
    };
}
