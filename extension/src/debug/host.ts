/**
 * The few VS Code calls the debug parts make, as interfaces each part takes from its caller:
 * vscodeHost.ts gives the real ones, the unit tests give fakes. The parts themselves import no
 * `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { JobInfo } from '../core/jobList';
import type { Localize } from '../core/localize';
import type { HangListener } from '../diagnose/hangNotices';
import type { ClientConfig } from './clientConfig';
import type { SourceBreakpoints } from './rankLink';
import type { WarmLauncher } from './warmLauncher';

export type { Localize };

/** What every part uses. */
export interface HostBase {
    readonly l10n: Localize;
    /** Shows an error notification; not awaited (it stays until the user closes it). */
    showError(message: string): void;
    /** The "Rank Debugger" output channel. */
    readonly log: { info(message: string): void; warn(message: string): void };
    /** The `rankdebug.justMyCode` setting for a resource (none: the window's). */
    justMyCode(scope?: vscode.Uri): boolean;
}

/** What the configuration resolvers use. */
export interface ResolverHost extends HostBase {
    executeCommand(command: string): Thenable<unknown>;
    /** Enabled line breakpoints in Python files as `FILE:LINE` (1-based), for `--break`. */
    pythonBreakpoints(): string[];
    /** The argv prefix that runs the rankdebug CLI with this interpreter (python.ts `cliPrefix`). */
    cliPrefix(python: string): string[];
    /** The running jobs, as a `rankdebug jobs --json` run now lists them (jobsView.ts `latest`). */
    listJobs(): Promise<readonly JobInfo[]>;
    /** Every breakpoint and the exception filters, sent with a launch (clientConfig.ts). */
    clientConfig?(): ClientConfig;
}

/** The debug sessions' start and end (`vscode.debug`). */
export interface SessionEvents {
    readonly onDidStartDebugSession: vscode.Event<vscode.DebugSession>;
    readonly onDidTerminateDebugSession: vscode.Event<vscode.DebugSession>;
}

/** What the job adapter uses. */
export interface AdapterHost extends HostBase {
    readonly onDidTerminateDebugSession: vscode.Event<vscode.DebugSession>;
    emitter<T>(): vscode.EventEmitter<T>;
    /** A terminal driven by `pty`, shown with the debug icon. */
    createTerminal(name: string, pty: vscode.Pseudoterminal): vscode.Terminal;
    /**
     * Starts `config` as a child of `parent`: the parent manages its lifecycle and the child's
     * output goes to the parent's debug console. True when it started.
     */
    startChildSession(parent: vscode.DebugSession, config: vscode.DebugConfiguration): Thenable<boolean>;
    /** Told when the job's supervisor says it hangs (`hang`) or moved on (`hang_over`). */
    readonly hang?: HangListener;
    /** The `rankdebug.maxSessions` setting: rank sessions one parent opens at most. */
    maxSessions(): number;
    /** Ends a rank's session only, the job and the rank running on (linkSession.ts `endRankSession`). */
    stopSession(session: vscode.DebugSession): Thenable<void>;
    /** The session the user looks at (`vscode.debug.activeDebugSession`). */
    activeSession(): vscode.DebugSession | undefined;
    readonly onDidChangeActiveDebugSession: vscode.Event<vscode.DebugSession | undefined>;
    /** Enabled line breakpoints of Python files, per file, for ranks with no session (rankLink.ts). */
    sourceBreakpoints(): SourceBreakpoints[];
    readonly onDidChangeBreakpoints: vscode.Event<unknown>;
    /** A `rankdebug launch` started ahead that a job may run in (warmLauncher.ts). */
    readonly warm?: Pick<WarmLauncher, 'take'>;
}

export type DebugHost = ResolverHost & AdapterHost & SessionEvents;
