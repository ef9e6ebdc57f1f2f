/**
 * Filter Ranks… (Training Jobs title bar): a rank spec (`0-3,8`, read by the language server)
 * shows only those ranks; any other text shows the rank rows that contain it (`paused`,
 * `all_reduce`, `model.py`, a host). Empty clears the filter.
 */
import * as vscode from 'vscode';
import { CHECK_RANKS, type CheckRanksReply, type Execute } from './core/rankCheck';
import { isPlanError, plainRankList } from './core/ranks';
import type { RankFilter } from './core/rankTree';
import type { JobsView } from './jobsView';

/** The filter `text` stands for: the ranks a rank spec names, else the text itself. */
export async function readFilter(text: string, execute: Execute): Promise<RankFilter | undefined> {
    const label = text.trim();
    if (!label) return undefined;
    let ranks: number[] | null | undefined;
    try {
        const reply = await execute<CheckRanksReply>(CHECK_RANKS, { spec: label, ranks: [], worldSize: null });
        ranks = isPlanError(reply) ? undefined : reply.ranks;
    } catch {
        // No server: a plain list of ranks is still read.
        ranks = plainRankList(label);
    }
    if (ranks === null) return undefined;
    return ranks ? { label, ranks: new Set(ranks) } : { label, text: label };
}

export class JobsFilter {
    private last = '';

    constructor(
        private readonly view: Pick<JobsView, 'setFilter'>,
        private readonly execute: Execute,
    ) {}

    async ask(): Promise<void> {
        const text = await vscode.window.showInputBox({
            title: vscode.l10n.t('Filter Ranks'),
            prompt: vscode.l10n.t('Ranks (0-3,8) or text a rank row shows (paused, all_reduce, model.py); empty: every rank'),
            value: this.last,
        });
        if (text === undefined) return;
        this.last = text.trim();
        this.view.setFilter(await readFilter(text, this.execute));
    }

    clear(): void {
        this.last = '';
        this.view.setFilter(undefined);
    }
}
