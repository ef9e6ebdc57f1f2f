/**
 * Fakes of what the rank picks take from VS Code (extension/src/launch/host.ts): a quick-pick
 * that records what the pick shows and lets a test type, check rows, press Enter and Escape;
 * a stand-in for the language server's `rankdebug.checkRanks`; and a memento in memory.
 */
import type * as vscode from 'vscode';
import type { RankPickHost } from '../../../../extension/src/launch/host';
import type { CheckRanksArgs, CheckRanksReply, Execute } from '../../../../extension/src/core/rankCheck';
import { Emitter, l10n } from '../debug/fakes';

/** `vscode.QuickPickItemKind.Separator`. */
export const SEPARATOR = -1 as vscode.QuickPickItemKind;

export const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A quick-pick: its state as the pick set it, and the user's moves. */
export class FakeQuickPick<T extends vscode.QuickPickItem> {
    placeholder: string | undefined;
    canSelectMany = false;
    matchOnDescription = false;
    items: readonly T[] = [];
    activeItems: readonly T[] = [];
    shown = false;
    hidden = false;
    disposed = false;
    /** Every title the pick had, in order. */
    readonly titles: (string | undefined)[] = [];
    /** Whether the pick was busy at some point. */
    wasBusy = false;
    private text = '';
    private selected: readonly T[] = [];
    private readonly valueChanged = new Emitter<string>();
    private readonly accepted = new Emitter<void>();
    private readonly hid = new Emitter<void>();
    private readonly selectionChanged = new Emitter<readonly T[]>();
    readonly onDidChangeValue = this.valueChanged.event;
    readonly onDidAccept = this.accepted.event;
    readonly onDidHide = this.hid.event;
    readonly onDidChangeSelection = this.selectionChanged.event;

    private shownTitle: string | undefined;
    private isBusy = false;

    get title(): string | undefined {
        return this.shownTitle;
    }

    set title(title: string | undefined) {
        this.shownTitle = title;
        this.titles.push(title);
    }

    get busy(): boolean {
        return this.isBusy;
    }

    set busy(busy: boolean) {
        this.isBusy = busy;
        if (busy) this.wasBusy = true;
    }

    get value(): string {
        return this.text;
    }

    get selectedItems(): readonly T[] {
        return this.selected;
    }

    /** Set by the pick: VS Code tells the selection listeners too. */
    set selectedItems(items: readonly T[]) {
        this.selected = items;
        this.selectionChanged.fire(items);
    }

    show(): void {
        this.shown = true;
    }

    hide(): void {
        if (this.hidden) return;
        this.hidden = true;
        this.hid.fire();
    }

    dispose(): void {
        this.disposed = true;
    }

    /** The user types `text` (the whole input). */
    type(text: string): void {
        this.text = text;
        this.valueChanged.fire(text);
    }

    /** The user checks exactly the items with these labels. */
    check(...labels: string[]): void {
        this.selectedItems = this.items.filter((i) => labels.includes(i.label));
    }

    /** The labels checked now. */
    checked(): string[] {
        return this.selected.map((i) => i.label);
    }

    /** Enter; resolves once the pick has answered it. */
    async enter(): Promise<void> {
        this.accepted.fire();
        await tick();
    }

    escape(): void {
        this.hide();
    }
}

/** The picks' host: the quick-picks it made, in order, and the `rankdebug.rememberRanks` setting. */
export class FakePickHost implements RankPickHost {
    readonly l10n = l10n;
    readonly separator = SEPARATOR;
    readonly picks: FakeQuickPick<vscode.QuickPickItem>[] = [];
    remember = true;

    createQuickPick<T extends vscode.QuickPickItem>(): vscode.QuickPick<T> {
        const qp = new FakeQuickPick<T>();
        this.picks.push(qp as unknown as FakeQuickPick<vscode.QuickPickItem>);
        return qp as unknown as vscode.QuickPick<T>;
    }

    rememberRanks(): boolean {
        return this.remember;
    }

    /** The pick shown last. */
    get pick(): FakeQuickPick<vscode.QuickPickItem> {
        const qp = this.picks.at(-1);
        if (!qp) throw new Error('no quick-pick was created');
        return qp;
    }
}

/** Waits until a pick is open: created, shown and not hidden yet (the picks ask the server first). */
export async function shownPick(host: FakePickHost, timeoutMs = 2000): Promise<FakeQuickPick<vscode.QuickPickItem>> {
    const end = Date.now() + timeoutMs;
    const open = (): boolean => Boolean(host.picks.at(-1)?.shown && !host.picks.at(-1)?.hidden);
    while (!open()) {
        if (Date.now() > end) throw new Error('no quick-pick was shown');
        await tick(1);
    }
    return host.pick;
}

/** A stand-in for the server's `rankdebug.checkRanks`: answers from a table, records the specs it was asked. */
export function fakeChecks(answers: Record<string, CheckRanksReply | Error>): { execute: Execute; asked: CheckRanksArgs[] } {
    const asked: CheckRanksArgs[] = [];
    const execute = (<R>(_command: string, arg: unknown): Promise<R> => {
        const args = arg as CheckRanksArgs;
        asked.push(args);
        const answer = answers[args.spec];
        if (answer === undefined) return Promise.resolve({ error: { message: `not a rank choice: ${args.spec}` } } as R);
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as R);
    }) as Execute;
    return { execute, asked };
}

/** The server's answer naming `ranks` (`rankSpec` their list), armed or not. */
export function ranksReply(ranks: number[], arm = false, rankSpec = ranks.join(',')): CheckRanksReply {
    return { rankSpec, ranks, arm };
}

/** `ExtensionContext.globalState` in memory. */
export class Memento {
    readonly values = new Map<string, unknown>();
    get<T>(key: string, fallback: T): T {
        return (this.values.get(key) as T | undefined) ?? fallback;
    }
    update(key: string, value: unknown): Promise<void> {
        this.values.set(key, value);
        return Promise.resolve();
    }
    get asMemento(): vscode.Memento {
        return this as unknown as vscode.Memento;
    }
}
