/**
 * The VS Code calls the smoke room makes, as an interface smokeFlow.ts takes from its caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/smoke/) give fakes.
 * smokeFlow.ts imports no `vscode` value, so it runs under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { CommandHost, TerminalHost } from '../launch/host';
import type { CommandSource, Context } from '../launch/trainingCommand';

/** The left sides' documents: what VS Code shows for a Uri of the scheme, and the word that one changed. */
export interface ContentRegistration extends vscode.Disposable {
    /** Tells VS Code that the document at `uri` has new text. */
    changed(uri: vscode.Uri): void;
}

/** What Smoke Run uses (smokeFlow.ts). */
export interface SmokeHost extends Pick<CommandHost, 'l10n' | 'showError' | 'showWarning' | 'isUri' | 'log'>, Pick<TerminalHost, 'ask'> {
    /** The command under the cursor, of a lens or a menu, or typed (launch/commands.ts `sourceFromArgs`). */
    sourceFromArgs(args: unknown[]): Promise<CommandSource | undefined>;
    /** Saves the command's document when it has unsaved edits (launch/commands.ts `saveIfDirty`). */
    saveIfDirty(src: CommandSource): Promise<void>;
    /** Debug Training Command on a line (launch/commands.ts `debugCommand`). */
    debugCommand(ctx: Context, args: unknown[], options: { alwaysPick?: boolean }): Promise<boolean>;
    /** `vscode.workspace.asRelativePath`. */
    asRelativePath(uri: vscode.Uri): string;
    /** `vscode.Uri.file`. */
    fileUri(file: string): vscode.Uri;
    /** `vscode.Uri.from({ scheme, path })`. */
    schemeUri(scheme: string, path: string): vscode.Uri;
    /** Documents of `scheme` read from `text` (a Uri's path); the caller keeps the registration. */
    registerContent(scheme: string, text: (path: string) => string): ContentRegistration;
    /** The document at `uri` when the editor has it open. */
    openDocument(uri: vscode.Uri): Pick<vscode.TextDocument, 'isDirty' | 'save'> | undefined;
    /** `vscode.workspace.openTextDocument`. */
    readDocument(uri: vscode.Uri): Thenable<Pick<vscode.TextDocument, 'getText'>>;
    /** `vscode.commands.executeCommand`. */
    executeCommand(command: string, ...args: unknown[]): Thenable<unknown>;
    /** The active editor's document. */
    activeUri(): vscode.Uri | undefined;
    /** A new integrated terminal named `name`. */
    createTerminal(name: string): Pick<vscode.Terminal, 'show' | 'sendText'>;
}
