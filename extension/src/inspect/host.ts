/**
 * The VS Code calls the inspect room makes, as interfaces its parts take from their caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/inspect/) give fakes.
 * The parts behind them import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { AttachHost, RoomHost } from '../jobs/host';
import type { PickHost } from '../launch/host';

/** What Evaluate in Rank… uses. */
export interface EvalHost extends RoomHost, PickHost, Pick<AttachHost, 'runCli' | 'withProgress'> {
    /** An output channel named `name` (the caller keeps it). */
    outputChannel(name: string): Pick<vscode.OutputChannel, 'appendLine' | 'show' | 'dispose'>;
}

/** What a Show Stacks panel uses. */
export interface StacksHost extends RoomHost, Pick<AttachHost, 'runCli'> {
    showWarning(message: string): void;
    /** `task` with `title` in the status bar while it runs. */
    withWindowProgress<R>(title: string, task: () => Promise<R>): Thenable<R>;
    /** A webview panel titled `title` in the active column, scripts on, no local resources, a find widget. */
    createPanel(title: string): Pick<vscode.WebviewPanel, 'webview' | 'onDidDispose' | 'reveal' | 'dispose'>;
    /** Opens `file` beside the panel with the cursor at the start of the 0-based `line`, as a preview. */
    showFile(file: string, line: number): Thenable<unknown>;
}

/** What a Compare Across Ranks panel uses. */
export interface CompareHost extends RoomHost, Pick<AttachHost, 'runCli'> {
    showWarning(message: string): void;
    /** A webview panel titled `title` in `column`, focused, scripts on, no local resources, a find widget. */
    createComparePanel(title: string, column: vscode.ViewColumn): Pick<vscode.WebviewPanel, 'webview' | 'onDidDispose' | 'reveal' | 'dispose' | 'viewColumn'>;
}
