/**
 * The rank quick-pick: multi-select `rank 2 · node 0 · local 2`, presets (all ranks, rank 0,
 * local rank 0 of each node), a typed range (`0-3,8`) accepted as is, the last choice
 * remembered per command. Usable with hundreds of ranks: one separator per node, and
 * filtering by `node 3` or `local 0` matches the item's description.
 */
import * as vscode from 'vscode';
import { byNode, formatSpec, parseSpec, presets, rankLabel, specForSelection, type PlanRank, type Preset } from './core/ranks';
import { getSettings } from './settings';

interface RankItem extends vscode.QuickPickItem {
    rank?: number;
    preset?: Preset;
}

const MEMORY_KEY = 'rankdebug.lastRanks';

/** Remembered rank specs, keyed per command (document + line, or the command text). */
export class RankMemory {
    constructor(private readonly state: vscode.Memento) {}

    get(key: string): string | undefined {
        return this.state.get<Record<string, string>>(MEMORY_KEY, {})[key];
    }

    async set(key: string, spec: string): Promise<void> {
        const all = { ...this.state.get<Record<string, string>>(MEMORY_KEY, {}) };
        delete all[key];
        all[key] = spec;
        const keys = Object.keys(all);
        for (const old of keys.slice(0, Math.max(0, keys.length - 200))) delete all[old];
        await this.state.update(MEMORY_KEY, all);
    }
}

function presetLabel(p: Preset): string {
    switch (p.id) {
        case 'all':
            return vscode.l10n.t('All ranks');
        case 'rank0':
            return vscode.l10n.t('Rank 0');
        case 'local0':
            return vscode.l10n.t('Local rank 0 of each node');
    }
}

/**
 * Asks which ranks to debug; returns the spec (`1,3`, `all`, `local0`) or undefined when cancelled.
 * Steps: build preset and rank items; preselect the remembered choice (else rank 0); a preset
 * toggled on replaces the selection; Enter with a typed spec takes that spec.
 */
export async function pickRanks(ranks: readonly PlanRank[], memory: RankMemory | undefined, key: string, title: string): Promise<string | undefined> {
    const remember = getSettings().rememberRanks;
    const last = remember ? memory?.get(key) : undefined;
    if (!ranks.length) {
        const spec = await vscode.window.showInputBox({
            title,
            prompt: vscode.l10n.t('How many ranks this command starts is not known here. Which ranks should stop at breakpoints? (e.g. 0, 1,3, 0-3, all, local0)'),
            value: last ?? '0',
            validateInput: (v) => (/^\s*(all|local\d+|\d+(\s*-\s*\d+)?)(\s*,\s*(all|local\d+|\d+(\s*-\s*\d+)?))*\s*$/i.test(v) ? undefined : vscode.l10n.t('Give ranks like 0, 1,3, 0-3, all or local0')),
        });
        if (spec !== undefined && memory && remember) await memory.set(key, spec.trim());
        return spec?.trim();
    }
    const presetItems: RankItem[] = presets(ranks).map((p) => ({ label: presetLabel(p), description: p.spec === 'all' ? formatSpec(p.ranks) : p.spec, preset: p, alwaysShow: true }));
    const items: RankItem[] = [{ label: vscode.l10n.t('Presets'), kind: vscode.QuickPickItemKind.Separator }, ...presetItems];
    const nodes = byNode(ranks);
    for (const [node, list] of nodes) {
        items.push({ label: nodes.size > 1 ? vscode.l10n.t('node {0}', node) : vscode.l10n.t('Ranks'), kind: vscode.QuickPickItemKind.Separator });
        for (const r of list) items.push({ label: rankLabel(r), rank: r.rank });
    }
    const rankItems = items.filter((i) => i.rank !== undefined);
    const initial = (last && parseSpec(last, ranks)) || [0].filter((r) => ranks.some((x) => x.rank === r));

    const qp = vscode.window.createQuickPick<RankItem>();
    qp.title = title;
    qp.placeholder = vscode.l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 and press Enter)');
    qp.canSelectMany = true;
    qp.matchOnDescription = true;
    qp.items = items;
    qp.selectedItems = rankItems.filter((i) => initial.includes(i.rank as number));
    let updating = false;
    return new Promise<string | undefined>((resolve) => {
        let done = false;
        const finish = (spec: string | undefined): void => {
            if (done) return;
            done = true;
            qp.hide();
            resolve(spec);
        };
        qp.onDidChangeSelection((sel) => {
            if (updating) return;
            const preset = sel.find((i) => i.preset);
            if (!preset?.preset) return;
            updating = true;
            const wanted = new Set(preset.preset.ranks);
            qp.selectedItems = rankItems.filter((i) => wanted.has(i.rank as number));
            updating = false;
        });
        qp.onDidAccept(() => {
            const typed = qp.value.trim();
            const fromTyped = typed ? parseSpec(typed, ranks) : undefined;
            let spec: string | undefined;
            if (fromTyped && /^[\d\s,-]+$|^all$|^local\d+$/i.test(typed)) {
                spec = specForSelection(fromTyped, ranks);
            } else {
                const chosen = qp.selectedItems.filter((i) => i.rank !== undefined).map((i) => i.rank as number);
                if (!chosen.length) return;
                spec = specForSelection(chosen, ranks);
            }
            if (memory && remember) void memory.set(key, spec);
            finish(spec);
        });
        qp.onDidHide(() => {
            finish(undefined);
            qp.dispose();
        });
        qp.show();
    });
}
