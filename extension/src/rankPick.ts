/**
 * The rank quick-pick: multi-select `rank 2 · node 0 · local 2`, presets (all ranks, rank 0,
 * local rank 0 of each node, and *No rank now — arm every rank*), the option *Arm every
 * rank* (checked with ranks: those are debugged from the start and every rank can be
 * attached later), a typed range (`0-3,8`, `arm`, `1 arm`) accepted as is, the last choice
 * remembered per command. Usable with hundreds of ranks: one separator per node, and
 * filtering by `node 3` or `local 0` matches the item's description.
 */
import * as vscode from 'vscode';
import { formatChoice, parseChoice, type RankChoice } from './core/rankChoice';
import { byNode, formatSpec, parseSpec, presets, rankLabel, specForSelection, type PlanRank, type Preset } from './core/ranks';
import { getSettings } from './settings';

interface RankItem extends vscode.QuickPickItem {
    rank?: number;
    preset?: Preset;
    /** The preset *No rank now — arm every rank*. */
    armOnly?: boolean;
    /** The option *Arm every rank*. */
    arm?: boolean;
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

export interface PickOptions {
    /** Offer arming every rank (`rankdebug launch --arm`); launch.json generation does not. */
    allowArm?: boolean;
}

/** A spec or choice typed into the box for commands whose ranks are not known here. */
async function askChoice(title: string, last: RankChoice | undefined, allowArm: boolean): Promise<RankChoice | undefined> {
    const text = await vscode.window.showInputBox({
        title,
        prompt: allowArm
            ? vscode.l10n.t('How many ranks this command starts is not known here. Which ranks should stop at breakpoints? (e.g. 0, 1,3, 0-3, all, local0; add "arm" to arm every rank, or "arm" alone to debug none now)')
            : vscode.l10n.t('How many ranks this command starts is not known here. Which ranks should stop at breakpoints? (e.g. 0, 1,3, 0-3, all, local0)'),
        value: last && (allowArm || last.spec) ? formatChoice(allowArm ? last : { spec: last.spec, arm: false }) : '0',
        validateInput: (v) => {
            const c = parseChoice(v);
            return c && (allowArm || !c.arm) ? undefined : vscode.l10n.t('Give ranks like 0, 1,3, 0-3, all or local0');
        },
    });
    return text === undefined ? undefined : parseChoice(text);
}

/**
 * Asks which ranks to debug; returns the choice (spec `1,3`, `all`, `local0` or '' and whether
 * every rank is armed) or undefined when cancelled.
 * Steps: build preset, rank and arm items; preselect the remembered choice (else rank 0); a
 * preset toggled on replaces the rank selection (*No rank now* also checks *Arm every rank*);
 * Enter with a typed spec takes that spec; nothing chosen and nothing armed is not accepted.
 */
export async function pickRanks(ranks: readonly PlanRank[], memory: RankMemory | undefined, key: string, title: string, options: PickOptions = {}): Promise<RankChoice | undefined> {
    const allowArm = options.allowArm ?? false;
    const remember = getSettings().rememberRanks;
    const last = parseChoice(remember ? memory?.get(key) : undefined);
    const save = (choice: RankChoice): void => {
        if (memory && remember) void memory.set(key, formatChoice(choice));
    };
    if (!ranks.length) {
        const choice = await askChoice(title, last, allowArm);
        if (choice) save(choice);
        return choice;
    }
    const presetItems: RankItem[] = presets(ranks).map((p) => ({ label: presetLabel(p), description: p.spec === 'all' ? formatSpec(p.ranks) : p.spec, preset: p, alwaysShow: true }));
    const armOnlyItem: RankItem = {
        label: vscode.l10n.t('No rank now — arm every rank'),
        description: vscode.l10n.t('attach, evaluate or read stacks later from Training Jobs'),
        armOnly: true,
        alwaysShow: true,
    };
    const armItem: RankItem = {
        label: vscode.l10n.t('Arm every rank'),
        description: vscode.l10n.t('any rank can be attached, evaluated or read later'),
        arm: true,
        alwaysShow: true,
    };
    const items: RankItem[] = [{ label: vscode.l10n.t('Presets'), kind: vscode.QuickPickItemKind.Separator }, ...presetItems];
    if (allowArm) items.push(armOnlyItem);
    const nodes = byNode(ranks);
    for (const [node, list] of nodes) {
        items.push({ label: nodes.size > 1 ? vscode.l10n.t('node {0}', node) : vscode.l10n.t('Ranks'), kind: vscode.QuickPickItemKind.Separator });
        for (const r of list) items.push({ label: rankLabel(r), rank: r.rank });
    }
    if (allowArm) items.push({ label: vscode.l10n.t('Later'), kind: vscode.QuickPickItemKind.Separator }, armItem);
    const rankItems = items.filter((i) => i.rank !== undefined);
    const lastRanks = last?.spec ? parseSpec(last.spec, ranks) : undefined;
    const armedOnly = allowArm && last?.arm === true && !last.spec;
    const initial = lastRanks ?? (armedOnly ? [] : [0].filter((r) => ranks.some((x) => x.rank === r)));

    const qp = vscode.window.createQuickPick<RankItem>();
    qp.title = title;
    qp.placeholder = allowArm
        ? vscode.l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 and press Enter), or arm every rank to debug later')
        : vscode.l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 and press Enter)');
    qp.canSelectMany = true;
    qp.matchOnDescription = true;
    qp.items = items;
    qp.selectedItems = [...rankItems.filter((i) => initial.includes(i.rank as number)), ...(allowArm && last?.arm ? [armItem] : [])];
    let updating = false;
    return new Promise<RankChoice | undefined>((resolve) => {
        let done = false;
        const finish = (choice: RankChoice | undefined): void => {
            if (done) return;
            done = true;
            qp.hide();
            resolve(choice);
        };
        qp.onDidChangeSelection((sel) => {
            if (updating) return;
            const preset = sel.find((i) => i.preset || i.armOnly);
            if (!preset) return;
            updating = true;
            const armed = sel.includes(armItem);
            if (preset.armOnly) {
                qp.selectedItems = [armItem];
            } else if (preset.preset) {
                const wanted = new Set(preset.preset.ranks);
                qp.selectedItems = [...rankItems.filter((i) => wanted.has(i.rank as number)), ...(armed ? [armItem] : [])];
            }
            updating = false;
        });
        qp.onDidAccept(() => {
            const typed = qp.value.trim();
            const armChecked = qp.selectedItems.includes(armItem);
            const fromTyped = parseChoice(typed);
            const typedRanks = fromTyped?.spec ? parseSpec(fromTyped.spec, ranks) : undefined;
            let choice: RankChoice | undefined;
            if (fromTyped && (typedRanks || (allowArm && fromTyped.arm && !fromTyped.spec))) {
                choice = { spec: typedRanks ? specForSelection(typedRanks, ranks) : '', arm: allowArm && (fromTyped.arm || armChecked) };
            } else {
                const chosen = qp.selectedItems.filter((i) => i.rank !== undefined).map((i) => i.rank as number);
                if (!chosen.length && !armChecked) return;
                choice = { spec: chosen.length ? specForSelection(chosen, ranks) : '', arm: armChecked };
            }
            save(choice);
            finish(choice);
        });
        qp.onDidHide(() => {
            finish(undefined);
            qp.dispose();
        });
        qp.show();
    });
}
