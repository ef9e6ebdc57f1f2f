/**
 * The VS Code calls the group commands make, as an interface they take from their caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/groups/) give fakes.
 * The commands behind it import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { RoomHost } from '../jobs/host';

export interface GroupsHost extends RoomHost {
    /** A warning notification; not awaited. */
    showWarning(message: string): void;
    /** A status bar message for `ms`; disposing it takes it away. */
    setStatus(text: string, ms: number): vscode.Disposable;
    /** A context key the menus read (`setContext`). */
    setContext(key: string, value: unknown): void;
    /** The focused debug session. */
    activeSession(): vscode.DebugSession | undefined;
    readonly onDidChangeActiveDebugSession: vscode.Event<vscode.DebugSession | undefined>;
    showQuickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: { title: string }): Thenable<T | undefined>;
    showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined>;
    /** The active editor's document and 0-based cursor line, when there is an editor. */
    cursor(): { uri: vscode.Uri; line: number } | undefined;
}

/** A line breakpoint as Bind Breakpoint to Ranks… reads and writes it. */
export interface LineBreakpoint {
    enabled: boolean;
    condition?: string;
    hitCondition?: string;
    logMessage?: string;
}

/** What Bind Breakpoint to Ranks… uses. */
export interface BindHost extends GroupsHost {
    isUri(value: unknown): value is vscode.Uri;
    /** The source breakpoints on the 0-based `line` of `uri`, in VS Code's order. */
    breakpointsAt(uri: vscode.Uri, line: number): LineBreakpoint[];
    /** Puts `breakpoints` in place of those on the line (each keeps the place of the one it replaces; none: at the line's start). */
    setBreakpoints(uri: vscode.Uri, line: number, breakpoints: readonly LineBreakpoint[]): void;
}
