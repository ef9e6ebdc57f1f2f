/**
 * Attach to which ranks? — the pick among a running job's live ranks (rankAttach.ts): rows
 * with the ranks' coordinates (`rank 13 · node 1 · dp 1 · tp 5`: core/attachItems.ts), the
 * ranks waiting for a debugger checked. Text typed and Enter: a rank spec or a selector
 * (`0-3`, `tp=0`, `pp=last tp=0`) read by the language server's rank checker against the job's
 * ranks and coordinates, taking those of its ranks the pick offers; text that only filters the
 * rows (`tp 5`, `node 1`) leaves the checked rows to Enter. Why a typed text takes nothing is
 * said in the title.
 */
import type * as vscode from 'vscode';
import { attachItems, jobCoords, planRanks } from '../core/attachItems';
import { exampleSelector, reportedDims } from '../core/coords';
import type { JobInfo, RankInfo } from '../core/jobList';
import type { Localize } from '../core/localize';
import { CHECK_DELAY_MS, RankChecker, type Execute } from '../core/rankCheck';
import { formatSpec, isPlanError } from '../core/ranks';
import { runTypedPick, type Answer } from '../core/typedPick';
import type { PickHost } from '../launch/host';

interface Item extends vscode.QuickPickItem {
    rank: RankInfo;
}

/** The typed text's ranks among `choices`, or the reason it names none. */
async function typedRanks(checker: RankChecker | undefined, text: string, choices: readonly RankInfo[], l10n: Localize): Promise<RankInfo[] | string> {
    if (!checker) return l10n.t('Type a rank number or a range; choosing by coordinates needs the language server.');
    const reply = await checker.check(text);
    if (isPlanError(reply)) return reply.error.message;
    const named = reply.ranks === null ? choices.map((c) => c.rank) : reply.ranks;
    const picked = choices.filter((c) => named.includes(c.rank));
    if (!picked.length) return l10n.t('{0} names ranks {1}: none of them can be attached now.', text, formatSpec(named) || '—');
    return picked;
}

/** Asks which of `choices` (live ranks of `job`) to attach; undefined when cancelled. */
export function pickAttachRanks(host: PickHost, job: JobInfo, choices: readonly RankInfo[], checked: boolean, execute: Execute | undefined): Promise<RankInfo[] | undefined> {
    const { l10n } = host;
    const qp = host.createQuickPick<Item>();
    const items: Item[] = attachItems(choices, job.ranks).map((i) => ({ ...i }));
    const coords = jobCoords(job.ranks, job.worldSize);
    const checker = execute
        ? new RankChecker(execute, { ranks: planRanks(job.ranks), worldSize: job.worldSize, coords: coords && { ...coords, order: [], worldSize: job.worldSize, source: 'job', read: [] } }, false)
        : undefined;
    const dims = reportedDims(job.ranks);
    qp.placeholder = coords
        ? l10n.t('Check ranks, or type ranks like 0-3 or coordinates like {0} and press Enter', exampleSelector(dims))
        : l10n.t('Check ranks, or type ranks like 0-3 and press Enter');
    qp.canSelectMany = true;
    qp.matchOnDescription = true;
    qp.items = items;
    if (checked) qp.selectedItems = items;
    const filters = (text: string): boolean => items.some((i) => `${i.label} ${i.description ?? ''}`.toLowerCase().includes(text.toLowerCase()));
    const hint = async (text: string): Promise<string> => {
        if (!checker) return '';
        const got = await typedRanks(checker, text.trim(), choices, l10n).catch(() => '');
        if (typeof got !== 'string') return l10n.t('Enter: ranks {0}', formatSpec(got.map((r) => r.rank)));
        return filters(text.trim()) ? '' : got;
    };
    // Typed text: its ranks, else (a filter such as `tp 5`, with rows checked) the checked rows.
    const typedAnswer = async (typed: string): Promise<Answer<RankInfo[]>> => {
        const got = await typedRanks(checker, typed, choices, l10n).catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
        if (typeof got !== 'string') return { take: got };
        if (!filters(typed) || !qp.selectedItems.length) return { say: got };
        return { take: qp.selectedItems.map((i) => i.rank) };
    };
    return runTypedPick(qp, {
        title: l10n.t('Attach to which ranks?'),
        delayMs: CHECK_DELAY_MS,
        hint,
        accept: () => {
            const typed = qp.value.trim();
            if (typed) return typedAnswer(typed);
            return qp.selectedItems.length ? { take: qp.selectedItems.map((i) => i.rank) } : undefined;
        },
    });
}
