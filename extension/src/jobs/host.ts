/**
 * The VS Code calls the jobs room makes, as interfaces its parts take from their caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/jobs/) give fakes.
 * The parts behind them import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { CliOptions, CliRun } from '../common/cli';
import type { ExtensionSettings } from '../core/settings';
import type { PickHost } from '../launch/host';

/** What every part uses: words, notifications, the log, the settings. */
export interface RoomHost {
    readonly l10n: PickHost['l10n'];
    /** An information notification; not awaited. */
    showInfo(message: string): void;
    /** An error notification; not awaited. */
    showError(message: string): void;
    /** The "Rank Debugger" output channel. */
    readonly log: { info(message: string): void; warn(message: string): void };
    /** The extension's settings for a resource (none: the window's). */
    settings(scope?: vscode.Uri): ExtensionSettings;
}

/** What attaching from Training Jobs uses. */
export interface AttachHost extends RoomHost, PickHost {
    /** A `rankdebug` CLI verb (common/cli.ts `runCli`). */
    runCli(python: string, args: string[], options: CliOptions): Promise<CliRun>;
    /** `task` under a cancellable notification titled `title`; what it reports is shown in it. */
    withProgress<R>(title: string, task: (progress: vscode.Progress<{ message?: string }>, token: vscode.CancellationToken) => Promise<R>): Thenable<R>;
    /** The window's first workspace folder. */
    folder(): vscode.WorkspaceFolder | undefined;
    /** Starts a session on a job that runs already (no save before it: no edit would reach the job). */
    startDebugging(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Thenable<boolean>;
}

/** What Training Jobs' job actions use (jobActions.ts). */
export interface JobActionsHost extends RoomHost {
    showQuickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined>;
    /** A modal warning with `detail` under it; the button chosen, if any. */
    confirm(message: string, detail: string, button: string): Thenable<string | undefined>;
    stopDebugging(session: vscode.DebugSession): Thenable<void>;
}
