/**
 * Fakes of what Smoke Run takes from VS Code (extension/src/smoke/host.ts): Uris, open
 * documents, commands run, terminals, notifications and the left sides' content provider, all
 * recorded; the launch room's steps it calls (find the command, save it, Debug Training Command)
 * as stand-ins; and the language server's `rankdebug.smoke`.
 */
import * as fs from 'node:fs';
import type * as vscode from 'vscode';
import type { CommandSource, Context } from '../../../../extension/src/launch/trainingCommand';
import type { ContentRegistration, SmokeHost } from '../../../../extension/src/smoke/host';
import { l10n } from '../debug/fakes';

/** A Uri as the flow uses it: scheme, path, fsPath and its text. */
export function uri(scheme: string, p: string): vscode.Uri {
    const text = scheme === 'file' ? `file://${p}` : `${scheme}:${p}`;
    return { scheme, path: p, fsPath: p, toString: () => text } as unknown as vscode.Uri;
}

export const fileUri = (p: string): vscode.Uri => uri('file', p);

/** A document open in the editor. */
export interface FakeDocument {
    isDirty: boolean;
    text?: string;
    saved: number;
}

export class FakeSmokeHost implements SmokeHost {
    readonly l10n = l10n;
    readonly errors: string[] = [];
    readonly warnings: string[] = [];
    readonly logged: string[] = [];
    readonly log = { info: (m: string) => this.logged.push(m), warn: (m: string) => this.logged.push(`warn: ${m}`) };
    /** The notifications with buttons, and the button the user clicks (none: closed). */
    readonly asked: { message: string; buttons: string[] }[] = [];
    answer: string | undefined;
    /** What the launch room's steps were asked. */
    source: CommandSource | undefined;
    readonly savedSources: CommandSource[] = [];
    readonly debugged: { args: unknown[]; options: { alwaysPick?: boolean } }[] = [];
    /** Every command run, its arguments as text (`vscode.diff file:///a file:///b title {"preview":false}`). */
    readonly commands: string[] = [];
    readonly terminals: { name: string; shown: boolean; sent: string[] }[] = [];
    /** Documents open in the editor, by Uri text. */
    readonly documents = new Map<string, FakeDocument>();
    active: vscode.Uri | undefined;
    /** The content provider registered: its scheme, its text, the Uris it said changed, whether it was disposed. */
    content: { scheme: string; text: (path: string) => string; changed: string[]; disposed: boolean } | undefined;

    showError(message: string): void {
        this.errors.push(message);
    }
    showWarning(message: string): void {
        this.warnings.push(message);
    }
    isUri(value: unknown): value is vscode.Uri {
        return typeof value === 'object' && value !== null && 'fsPath' in value && 'scheme' in value;
    }
    ask(message: string, ...buttons: string[]): Thenable<string | undefined> {
        this.asked.push({ message, buttons });
        return Promise.resolve(this.answer);
    }
    sourceFromArgs(): Promise<CommandSource | undefined> {
        return Promise.resolve(this.source);
    }
    saveIfDirty(src: CommandSource): Promise<void> {
        this.savedSources.push(src);
        return Promise.resolve();
    }
    debugCommand(_ctx: Context, args: unknown[], options: { alwaysPick?: boolean }): Promise<boolean> {
        this.debugged.push({ args, options });
        return Promise.resolve(true);
    }
    asRelativePath(u: vscode.Uri): string {
        return u.fsPath.replace(/^\/w\//, '');
    }
    fileUri(file: string): vscode.Uri {
        return fileUri(file);
    }
    schemeUri(scheme: string, p: string): vscode.Uri {
        return uri(scheme, p);
    }
    registerContent(scheme: string, text: (path: string) => string): ContentRegistration {
        const content = { scheme, text, changed: [] as string[], disposed: false };
        this.content = content;
        return { changed: (u) => content.changed.push(u.toString()), dispose: () => (content.disposed = true) };
    }
    openDocument(u: vscode.Uri): Pick<vscode.TextDocument, 'isDirty' | 'save'> | undefined {
        const doc = this.documents.get(u.toString());
        return doc && { isDirty: doc.isDirty, save: () => Promise.resolve(Boolean((doc.saved += 1))) };
    }
    /** An open document's text, else the file's on disk. */
    readDocument(u: vscode.Uri): Thenable<Pick<vscode.TextDocument, 'getText'>> {
        const text = this.documents.get(u.toString())?.text ?? fs.readFileSync(u.fsPath, 'utf8');
        return Promise.resolve({ getText: () => text });
    }
    executeCommand(command: string, ...args: unknown[]): Thenable<unknown> {
        this.commands.push([command, ...args.map((a) => (typeof a === 'object' && a !== null && 'fsPath' in a ? String(a) : typeof a === 'string' ? a : JSON.stringify(a)))].join(' '));
        return Promise.resolve();
    }
    activeUri(): vscode.Uri | undefined {
        return this.active;
    }
    createTerminal(name: string): Pick<vscode.Terminal, 'show' | 'sendText'> {
        const t = { name, shown: false, sent: [] as string[] };
        this.terminals.push(t);
        return { show: () => void (t.shown = true), sendText: (text: string) => void t.sent.push(text) };
    }
}

/** A context whose language server answers `rankdebug.smoke` with `answer`, and records what it was asked. */
export function smokeServer(answer: unknown): { ctx: Context; asked: { command: string; arg: unknown }[] } {
    const asked: { command: string; arg: unknown }[] = [];
    const server = {
        execute: (command: string, arg: unknown) => {
            asked.push({ command, arg });
            return Promise.resolve(answer);
        },
    };
    return { ctx: { server, memory: {} } as unknown as Context, asked };
}
