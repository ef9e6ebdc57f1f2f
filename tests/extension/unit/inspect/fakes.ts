/** A webview panel as the inspect panels drive it: the HTML it was given, and the page's messages posted to it. */
import type * as vscode from 'vscode';
import { Emitter } from '../debug/fakes';
import { tick } from '../launch/fakes';

export class FakePanel {
    viewColumn: vscode.ViewColumn | undefined = 2 as vscode.ViewColumn;
    revealed = 0;
    readonly html: string[] = [];
    readonly messages = new Emitter<unknown>();
    readonly disposed = new Emitter<void>();
    readonly webview: { html: string; onDidReceiveMessage: vscode.Event<unknown> };
    readonly onDidDispose = this.disposed.event;

    constructor() {
        const html = this.html;
        this.webview = {
            get html(): string {
                return html.at(-1) ?? '';
            },
            set html(value: string) {
                html.push(value);
            },
            onDidReceiveMessage: this.messages.event,
        };
    }
    reveal(): void {
        this.revealed += 1;
    }
    dispose(): void {
        this.disposed.fire();
    }
    /** The page posts `message`; resolves once the panel has acted on it. */
    async post(message: unknown): Promise<void> {
        this.messages.fire(message);
        await tick(5);
    }
}
