/**
 * Which ranks to debug when how many ranks the command starts is not known here (a wrapper, a
 * framework whose world size is not readable): a quick-pick whose title says so, with
 * *Choose when the ranks start* (the job runs with every rank armed and a pick fills as the
 * ranks start: startedRankPick.ts), the remembered choice, *Rank 0* and *No rank now — arm
 * every rank*; or a choice typed (`0`, `1,3`, `0-3`, `all`, `local0`, `1 arm`) and Enter,
 * read by the language server as you type (debounced; its message in the title).
 * Typed text wins over the highlighted item; with nothing typed Enter takes the item.
 */
import type * as vscode from 'vscode';
import { CHECK_DELAY_MS, type CheckedChoice, type RankChecker } from '../core/rankCheck';
import type { RankChoice } from '../core/rankChoice';
import { isPlanError } from '../core/ranks';
import { runTypedPick, type Answer } from '../core/typedPick';
import type { PickHost } from './host';
import type { Localize } from '../core/localize';

interface Item extends vscode.QuickPickItem {
    choice: RankChoice;
}

function items(checker: RankChecker, last: CheckedChoice | undefined, l10n: Localize): Item[] {
    const out: Item[] = [];
    if (checker.allowArm) {
        out.push({
            label: l10n.t('Choose when the ranks start'),
            description: l10n.t('every rank armed; pick ranks as they start, with their node and coordinates'),
            choice: { spec: '', arm: true, live: true },
            alwaysShow: true,
        });
    }
    if (last && (last.spec || last.arm)) {
        const label = last.spec ? (last.arm ? l10n.t('Ranks {0}, every rank armed', last.spec) : l10n.t('Ranks {0}', last.spec)) : l10n.t('No rank now — arm every rank');
        out.push({ label, description: l10n.t('last time'), choice: { spec: last.spec, arm: last.arm }, alwaysShow: true });
    }
    if (last?.spec !== '0' || last.arm) out.push({ label: l10n.t('Rank 0'), description: '0', choice: { spec: '0', arm: false }, alwaysShow: true });
    if (checker.allowArm && !(last && !last.spec && last.arm)) {
        out.push({
            label: l10n.t('No rank now — arm every rank'),
            description: l10n.t('attach, evaluate or read stacks later from Training Jobs'),
            choice: { spec: '', arm: true },
            alwaysShow: true,
        });
    }
    return out;
}

/** Enter: the typed choice when there is text (the server's message while it refuses it), else the highlighted item. */
function answer(qp: vscode.QuickPick<Item>, checker: RankChecker): Answer<RankChoice> | Promise<Answer<RankChoice>> {
    const typed = qp.value.trim();
    if (!typed) {
        const picked = qp.selectedItems[0] ?? qp.activeItems[0];
        return picked ? { take: picked.choice } : undefined;
    }
    return checker.choice(typed).then((choice) => (isPlanError(choice) ? { say: choice.error.message } : { take: { spec: choice.spec, arm: choice.arm } }));
}

/**
 * Asks for the ranks of a command whose rank count is not known; the choice, or undefined
 * when cancelled.
 * Steps: the items (the remembered one highlighted first when there is one); typed text
 * checked as you type, its problem in the title; Enter: the typed choice when there is text
 * (not accepted while the server refuses it), else the highlighted item.
 */
export function askUnknownRanks(host: PickHost, checker: RankChecker, title: string, last: CheckedChoice | undefined): Promise<RankChoice | undefined> {
    const { l10n } = host;
    const qp = host.createQuickPick<Item>();
    qp.placeholder = checker.allowArm
        ? l10n.t('Type ranks (0, 1,3, 0-3, all, local0; add "arm" to arm every rank) and press Enter, or choose below')
        : l10n.t('Type ranks (0, 1,3, 0-3, all, local0) and press Enter, or choose below');
    qp.items = items(checker, last, l10n);
    const remembered = qp.items.find((i) => i.description === l10n.t('last time'));
    if (remembered) qp.activeItems = [remembered];
    return runTypedPick(qp, {
        title: `${title} — ${l10n.t('how many ranks this command starts is not known here')}`,
        delayMs: CHECK_DELAY_MS,
        hint: async (text) => (await checker.problem(text)) ?? '',
        accept: () => answer(qp, checker),
    });
}
