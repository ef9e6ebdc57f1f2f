/**
 * The few VS Code calls the launch room's picks make, as an interface they take from their
 * caller: vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/launch/) give
 * fakes. The picks import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { Localize } from '../core/localize';
import type { AttachHost, RoomHost } from '../jobs/host';
import type { Context } from './trainingCommand';

/** What a quick-pick over ranks uses (the launch picks, and Attach to which ranks?). */
export interface PickHost {
    readonly l10n: Localize;
    createQuickPick<T extends vscode.QuickPickItem>(): vscode.QuickPick<T>;
    /** `vscode.QuickPickItemKind.Separator`, an enum value a pick cannot import. */
    readonly separator: vscode.QuickPickItemKind;
}

/** What the rank choice uses besides the picks. */
export interface RankPickHost extends PickHost {
    /** The `rankdebug.rememberRanks` setting. */
    rememberRanks(): boolean;
}

/** What Debug Training Command and Generate launch.json use (trainingCommand.ts). */
export interface CommandHost extends RankPickHost {
    showError(message: string): void;
    showWarning(message: string): void;
    readonly log: { info(message: string): void; warn(message: string): void };
    /** `vscode.Uri.parse`. */
    parseUri(text: string): vscode.Uri;
    isUri(value: unknown): value is vscode.Uri;
    /** The active editor's document, its language and 0-based cursor line. */
    activeEditor(): { uri: vscode.Uri; languageId: string; line: number } | undefined;
    showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined>;
    /** The workspace folder of a file or folder path (or Uri), else the first; none without a folder. */
    folderOf(where: vscode.Uri | string | undefined): vscode.WorkspaceFolder | undefined;
    /** Saves the open document at `uri` when it is a file with unsaved edits. */
    saveIfDirty(uri: vscode.Uri): Thenable<void>;
    /** A `rankdebug launch` started ahead for the server's interpreter while ranks are picked, and its end when no job comes. */
    prepareLaunch(server: { python(): Promise<{ python: string }> }, cwd: string | undefined): void;
    discardLaunch(): void;
    /** Saves what `debug.saveBeforeStart` says, then starts the job's session (VS Code's own save skipped). */
    startJobSession(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Thenable<boolean>;
    /** The active terminal's selected text (through the clipboard, which is put back) and its folder. */
    terminalSelection(): Promise<{ text: string | undefined; cwd: string | undefined }>;
    /** launchJson.ts `writeLaunchJson`. */
    writeLaunchJson(folder: vscode.WorkspaceFolder, configurations: readonly { name: string }[], compounds: readonly { name: string }[], terminalCommand?: readonly string[]): Promise<void>;
}

/** What the terminal shim and Debug Last Training Command use (terminalJobs.ts). */
export interface TerminalHost extends RoomHost, Pick<AttachHost, 'folder' | 'startDebugging'> {
    /** An information notification with buttons; the one chosen. */
    ask(message: string, ...buttons: string[]): Thenable<string | undefined>;
    /** A context key the menus read (`setContext`). */
    setContext(key: string, value: unknown): void;
    /** The integrated terminals' environment (the extension's EnvironmentVariableCollection). */
    readonly env: Pick<vscode.EnvironmentVariableCollection, 'persistent' | 'description' | 'clear' | 'prepend' | 'replace'>;
    /** The extension's own folder (globalStorageUri). */
    readonly storage: string;
    /** The bundled CLI's entry script (python.ts `mainScript`). */
    mainScript(): string;
    /** Terminal commands as they end, where shell integration tells. */
    readonly onDidEndTerminalShellExecution?: vscode.Event<vscode.TerminalShellExecutionEndEvent>;
    /** Debug Training Command (commands.ts). */
    debugCommand(ctx: Context, args: unknown[], options: { alwaysPick?: boolean }): Promise<boolean>;
}

/** What *Choose when the ranks start* uses (startedPicks.ts). */
export interface StartedHost extends PickHost, Pick<AttachHost, 'runCli'> {
    readonly log: { info(message: string): void; warn(message: string): void; debug(message: string): void };
    showInfo(message: string): void;
    /** A status bar message until disposed. */
    setStatus(text: string): vscode.Disposable;
    readonly onDidStartDebugSession: vscode.Event<vscode.DebugSession>;
    readonly onDidTerminateDebugSession: vscode.Event<vscode.DebugSession>;
}
