/**
 * Filter Ranks… (Training Jobs title bar): a rank spec shows only those ranks, other text the
 * rank rows that contain it (core/rankFilter.ts); empty clears the filter.
 */
import * as vscode from 'vscode';
import type { Execute } from '../core/rankCheck';
import { readFilter } from '../core/rankFilter';
import type { JobsView } from './jobsView';

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
