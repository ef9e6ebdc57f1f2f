/**
 * The rank quick-pick's items (rankQuickPick.ts shows them): the presets, *No rank now — arm
 * every rank*, one separator per node over that node's ranks (`node 3 · 24-31`: with hundreds
 * of ranks the list reads as nodes, and `node 3` typed filters to them), and the option *Arm
 * every rank*. Built once per quick-pick: 1,024 ranks take about a millisecond
 * (tests/extension/unit/scale.test.ts). No `vscode` import.
 */
import type { Localize } from './localize';
import { byNode, formatSpec, rankLabel, type PlanRank, type Preset } from './ranks';

export type RankItemKind = 'separator' | 'preset' | 'armOnly' | 'rank' | 'arm';

/** One item as the quick-pick shows it (a `vscode.QuickPickItem` once `kind` is mapped). */
export interface RankItem {
    kind: RankItemKind;
    label: string;
    description?: string;
    alwaysShow?: boolean;
    /** `rank` items: the rank. */
    rank?: number;
    /** `preset` items: the preset. */
    preset?: Preset;
}

function presetLabel(p: Preset, l10n: Localize): string {
    switch (p.id) {
        case 'all':
            return l10n.t('All ranks');
        case 'rank0':
            return l10n.t('Rank 0');
        case 'local0':
            return l10n.t('Local rank 0 of each node');
    }
}

/**
 * Every item, in order: the first separator (`header`, relabelled later with what Enter
 * takes), presets, the arm-only preset (`allowArm`), per node a separator and its ranks, then
 * the arm option (`allowArm`).
 */
export function rankItems(ranks: readonly PlanRank[], presets: readonly Preset[], allowArm: boolean, l10n: Localize): RankItem[] {
    const items: RankItem[] = [{ kind: 'separator', label: l10n.t('Presets') }];
    for (const p of presets) items.push({ kind: 'preset', label: presetLabel(p, l10n), description: p.id === 'all' ? formatSpec(p.ranks) : p.spec, preset: p, alwaysShow: true });
    if (allowArm) {
        items.push({
            kind: 'armOnly',
            label: l10n.t('No rank now — arm every rank'),
            description: l10n.t('attach, evaluate or read stacks later from Training Jobs'),
            alwaysShow: true,
        });
    }
    const nodes = byNode(ranks);
    for (const [node, list] of nodes) {
        const label = nodes.size > 1 ? `${l10n.t('node {0}', node)} · ${formatSpec(list.map((r) => r.rank))}` : l10n.t('Ranks');
        items.push({ kind: 'separator', label });
        for (const r of list) items.push({ kind: 'rank', label: rankLabel(r), rank: r.rank });
    }
    if (allowArm) {
        items.push(
            { kind: 'separator', label: l10n.t('Later') },
            { kind: 'arm', label: l10n.t('Arm every rank'), description: l10n.t('any rank can be attached, evaluated or read later'), alwaysShow: true },
        );
    }
    return items;
}

/** Whether `text` filters the items (`node 3`, `local 0`) rather than naming ranks: some item that is not a separator holds it. */
export function filtersItems(items: readonly RankItem[], text: string): boolean {
    const t = text.toLowerCase();
    return items.some((i) => i.kind !== 'separator' && `${i.label} ${i.description ?? ''}`.toLowerCase().includes(t));
}
