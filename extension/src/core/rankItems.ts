/**
 * The rank quick-pick's items (rankQuickPick.ts shows them): the presets, *No rank now — arm
 * every rank*, when the command says its parallel coordinates a preset per dimension's group
 * under a separator that names where they come from, one separator per node over that node's
 * ranks (`node 3 · 24-31`: with hundreds of ranks the list reads as nodes, and `node 3` typed
 * filters to them), and the option *Arm every rank*. A rank's label carries its coordinates
 * (`rank 13 · node 1 · dp 1 · pp 0 · tp 5`, local rank in the description), so `tp 5` typed
 * filters to them. Built once per quick-pick: 1,024 ranks take about a millisecond
 * (tests/extension/unit/scale.test.ts). No `vscode` import.
 */
import { coordText, shownDims, type PlanCoords } from './coords';
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

/** The group preset of a dimension: the named ones in their words, else `One {dim} group`. */
function groupLabel(dim: string, l10n: Localize): string {
    switch (dim.toLowerCase()) {
        case 'pp':
            return l10n.t('First rank of each pipeline stage');
        case 'tp':
            return l10n.t('One tensor-parallel group');
        case 'dp':
            return l10n.t('One data-parallel group');
        case 'cp':
            return l10n.t('One context-parallel group');
        case 'ep':
            return l10n.t('One expert-parallel group');
        default:
            return l10n.t('One {0} group', dim);
    }
}

/** A spec cut to about `limit` characters at a comma (`0,8,16,…`). */
function shortSpec(ranks: readonly number[], limit = 40): string {
    const spec = formatSpec(ranks);
    return spec.length > limit ? `${spec.slice(0, spec.lastIndexOf(',', limit) + 1)}…` : spec;
}

function presetDescription(p: Preset): string {
    if (p.id === 'all') return formatSpec(p.ranks);
    if (p.id === 'group') return `${p.spec} · ${shortSpec(p.ranks)}`;
    return p.spec;
}

/** A rank's row: with coordinates `rank 13 · node 1 · dp 1 · pp 0 · tp 5` and its local rank in the description. */
function rankRowItem(r: PlanRank, coords: PlanCoords | null, dims: readonly string[]): RankItem {
    const where = coords?.ranks[r.rank];
    if (!where) return { kind: 'rank', label: rankLabel(r), rank: r.rank };
    const label = [rankLabel({ rank: r.rank, node_rank: r.node_rank }), coordText(where, dims)].filter(Boolean).join(' · ');
    const item: RankItem = { kind: 'rank', label, rank: r.rank };
    if (r.local_rank !== undefined && r.local_rank !== null) item.description = `local ${r.local_rank}`;
    return item;
}

function presetLabel(p: Preset, l10n: Localize): string {
    switch (p.id) {
        case 'group':
            return groupLabel(p.dim ?? '?', l10n);
        case 'all':
            return l10n.t('All ranks');
        case 'rank0':
            return l10n.t('Rank 0');
        case 'local0':
            return l10n.t('Local rank 0 of each node');
    }
}

/**
 * Every item, in order: the first separator, presets, the arm-only preset (`allowArm`), with `coords` a separator that names their
 * source (`coordinates (megatron)`) over the presets of each dimension's group, per node a separator and its
 * ranks, then the arm option (`allowArm`).
 */
export function rankItems(ranks: readonly PlanRank[], presets: readonly Preset[], allowArm: boolean, l10n: Localize, coords: PlanCoords | null = null): RankItem[] {
    const items: RankItem[] = [{ kind: 'separator', label: l10n.t('Presets') }];
    const preset = (p: Preset): RankItem => ({ kind: 'preset', label: presetLabel(p, l10n), description: presetDescription(p), preset: p, alwaysShow: true });
    for (const p of presets) if (p.id !== 'group') items.push(preset(p));
    if (allowArm) {
        items.push({
            kind: 'armOnly',
            label: l10n.t('No rank now — arm every rank'),
            description: l10n.t('attach, evaluate or read stacks later from Training Jobs'),
            alwaysShow: true,
        });
    }
    const groups = presets.filter((p) => p.id === 'group');
    if (coords && groups.length) {
        // Short: VS Code draws a separator's label beside the next item's. The title says where the layout was read.
        items.push({ kind: 'separator', label: l10n.t('coordinates ({0})', coords.source || '?') });
        for (const p of groups) items.push(preset(p));
    }
    const dims = coords ? shownDims(coords) : [];
    const nodes = byNode(ranks);
    for (const [node, list] of nodes) {
        const label = nodes.size > 1 ? `${l10n.t('node {0}', node)} · ${formatSpec(list.map((r) => r.rank))}` : l10n.t('Ranks');
        items.push({ kind: 'separator', label });
        for (const r of list) items.push(rankRowItem(r, coords, dims));
    }
    if (allowArm) {
        items.push(
            { kind: 'separator', label: l10n.t('Later') },
            { kind: 'arm', label: l10n.t('Arm every rank'), description: l10n.t('any rank can be attached, evaluated or read later'), alwaysShow: true },
        );
    }
    return items;
}

/**
 * Whether `text` filters the items (`node 3`, `local 0`, `tp 5`) rather than naming ranks: some
 * item the filter can hide holds it (not a separator, nor a preset, which is always shown and
 * whose description holds selectors such as `dp=0 tp=0`).
 */
export function filtersItems(items: readonly RankItem[], text: string): boolean {
    const t = text.toLowerCase();
    return items.some((i) => i.kind !== 'separator' && !i.alwaysShow && `${i.label} ${i.description ?? ''}`.toLowerCase().includes(t));
}
