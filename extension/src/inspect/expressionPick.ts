/**
 * Asking for a Python expression (Evaluate in Rank…, Compare Across Ranks…): a quick pick that
 * takes what is typed, with some expressions offered and the recent ones below them; and the
 * recent expressions themselves, kept in a memento and shared by both commands.
 */
import type * as vscode from 'vscode';
import { remember } from '../core/evaluate';
import type { PickHost } from '../launch/host';

const RECENT_KEY = 'rankdebug.eval.recent';

/** The recent expressions (newest first, no duplicates; core/evaluate.ts `remember`). */
export class RecentExpressions {
    constructor(private readonly memento: vscode.Memento) {}

    list(): string[] {
        return this.memento.get<string[]>(RECENT_KEY, []);
    }

    add(expr: string): Thenable<void> {
        return this.memento.update(RECENT_KEY, remember(this.list(), expr));
    }
}

/**
 * A quick pick that takes what is typed (when it is none of the items, it is offered first);
 * items: `offered`, then the `recent` ones not offered already. Resolves to the label chosen or
 * the text typed, undefined when dismissed or empty.
 */
export function pickExpression(host: PickHost, opts: { title: string; placeholder: string; offered?: vscode.QuickPickItem[]; recent: readonly string[] }): Promise<string | undefined> {
    const offered = opts.offered ?? [];
    const seen = new Set(offered.map((i) => i.label));
    const items = [...offered, ...opts.recent.filter((r) => !seen.has(r)).map((label) => ({ label, description: host.l10n.t('recent') }))];
    return new Promise((resolve) => {
        const qp = host.createQuickPick();
        qp.title = opts.title;
        qp.placeholder = opts.placeholder;
        qp.items = items;
        qp.onDidChangeValue((v) => {
            const typed = v.trim();
            qp.items = typed && !items.some((i) => i.label === typed) ? [{ label: typed }, ...items] : items;
        });
        let done = false;
        qp.onDidAccept(() => {
            done = true;
            resolve(qp.selectedItems[0]?.label ?? (qp.value.trim() || undefined));
            qp.hide();
        });
        qp.onDidHide(() => {
            if (!done) resolve(undefined);
            qp.dispose();
        });
        qp.show();
    });
}
