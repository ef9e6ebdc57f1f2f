/**
 * Attach to which ranks? — the pick among a running job's live ranks (rankAttach.ts): rows
 * with the ranks' coordinates (`rank 13 · node 1 · dp 1 · tp 5`: core/attachItems.ts), the
 * ranks waiting for a debugger checked. Text typed and Enter: a rank spec or a selector
 * (`0-3`, `tp=0`, `pp=last tp=0`) read by the language server's rank checker against the job's
 * ranks and coordinates, taking those of its ranks the pick offers; text that only filters the
 * rows (`tp 5`, `node 1`) leaves the checked rows to Enter. Why a typed text takes nothing is
 * said in the title.
 */
import * as vscode from 'vscode';
import { attachItems, jobCoords, planRanks } from '../core/attachItems';
import { exampleSelector, reportedDims } from '../core/coords';
import { debounce } from '../core/debounce';
import type { JobInfo, RankInfo } from '../core/jobList';
import { CHECK_DELAY_MS, RankChecker, type Execute } from '../core/rankCheck';
import { formatSpec, isPlanError } from '../core/ranks';

interface Item extends vscode.QuickPickItem {
    rank: RankInfo;
}

/** The typed text's ranks among `choices`, or the reason it names none. */
async function typedRanks(checker: RankChecker | undefined, text: string, choices: readonly RankInfo[]): Promise<RankInfo[] | string> {
    if (!checker) return vscode.l10n.t('Type a rank number or a range; choosing by coordinates needs the language server.');
    const reply = await checker.check(text);
    if (isPlanError(reply)) return reply.error.message;
    const named = reply.ranks === null ? choices.map((c) => c.rank) : reply.ranks;
    const picked = choices.filter((c) => named.includes(c.rank));
    if (!picked.length) return vscode.l10n.t('{0} names ranks {1}: none of them can be attached now.', text, formatSpec(named) || '—');
    return picked;
}

/** Asks which of `choices` (live ranks of `job`) to attach; undefined when cancelled. */
export function pickAttachRanks(job: JobInfo, choices: readonly RankInfo[], checked: boolean, execute: Execute | undefined): Promise<RankInfo[] | undefined> {
    const qp = vscode.window.createQuickPick<Item>();
    const items: Item[] = attachItems(choices, job.ranks).map((i) => ({ ...i }));
    const coords = jobCoords(job.ranks, job.worldSize);
    const checker = execute
        ? new RankChecker(execute, { ranks: planRanks(job.ranks), worldSize: job.worldSize, coords: coords && { ...coords, order: [], worldSize: job.worldSize, source: 'job', read: [] } }, false)
        : undefined;
    const title = vscode.l10n.t('Attach to which ranks?');
    const dims = reportedDims(job.ranks);
    qp.title = title;
    qp.placeholder = coords
        ? vscode.l10n.t('Check ranks, or type ranks like 0-3 or coordinates like {0} and press Enter', exampleSelector(dims))
        : vscode.l10n.t('Check ranks, or type ranks like 0-3 and press Enter');
    qp.canSelectMany = true;
    qp.matchOnDescription = true;
    qp.items = items;
    if (checked) qp.selectedItems = items;
    const filters = (text: string): boolean => items.some((i) => `${i.label} ${i.description ?? ''}`.toLowerCase().includes(text.toLowerCase()));
    const hint = debounce(
        async (text: string) => {
            let said = '';
            if (text.trim() && checker) {
                const got = await typedRanks(checker, text.trim(), choices).catch(() => '');
                said = typeof got === 'string' ? (filters(text.trim()) ? '' : got) : vscode.l10n.t('Enter: ranks {0}', formatSpec(got.map((r) => r.rank)));
            }
            if (qp.value === text) qp.title = said ? `${title} — ${said}` : title;
        },
        CHECK_DELAY_MS,
        undefined,
    );
    return new Promise((resolve) => {
        let done = false;
        const finish = (ranks: RankInfo[] | undefined): void => {
            if (done) return;
            done = true;
            qp.hide();
            resolve(ranks);
        };
        qp.onDidChangeValue((text) => void hint(text));
        qp.onDidAccept(async () => {
            const typed = qp.value.trim();
            if (typed) {
                qp.busy = true;
                const got = await typedRanks(checker, typed, choices).catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
                qp.busy = false;
                if (typeof got !== 'string') return finish(got);
                if (!filters(typed) || !qp.selectedItems.length) {
                    qp.title = `${title} — ${got}`;
                    return;
                }
            }
            if (qp.selectedItems.length) finish(qp.selectedItems.map((i) => i.rank));
        });
        qp.onDidHide(() => {
            finish(undefined);
            qp.dispose();
        });
        qp.show();
    });
}
