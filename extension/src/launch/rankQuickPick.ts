/**
 * The rank quick-pick: multi-select `rank 2 · node 0 · local 2`, presets (all ranks, rank 0,
 * local rank 0 of each node, and *No rank now — arm every rank*), the option *Arm every
 * rank* (checked with ranks: those are debugged from the start and every rank can be
 * attached later), a typed choice (`0-3,8`, `arm`, `1 arm`) read by the language server, the
 * remembered choice preselected. Usable with hundreds of ranks: one separator per node with its
 * ranks (`node 3 · 24-31`), and filtering by `node 3` or `local 0` matches the items' labels
 * (the items: core/rankItems.ts).
 *
 * Typed text is checked as you type (debounced): the title then says what Enter takes, or the
 * server's message when the text is neither a choice nor a filter of the items (VS Code hides
 * separators while the list is filtered, and a quick-pick has no validation message of its own).
 */
import type * as vscode from 'vscode';
import { exampleSelector, layoutTitle, shownDims, type PlanCoords } from '../core/coords';
import type { Localize } from '../core/localize';
import { CHECK_DELAY_MS, type CheckedChoice, type RankChecker } from '../core/rankCheck';
import type { RankChoice } from '../core/rankChoice';
import { filtersItems, rankItems, type RankItem as ItemData } from '../core/rankItems';
import { isPlanError, specForSelection, type PlanRank, type Preset } from '../core/ranks';
import { runTypedPick, type Answer } from '../core/typedPick';
import type { PickHost } from './host';

interface RankItem extends vscode.QuickPickItem {
    rank?: number;
    preset?: Preset;
    /** The preset *No rank now — arm every rank*. */
    armOnly?: boolean;
    /** The option *Arm every rank*. */
    arm?: boolean;
}

/** A core item as VS Code shows it. */
function toItem(d: ItemData, separator: vscode.QuickPickItemKind): RankItem {
    const item: RankItem = { label: d.label };
    if (d.kind === 'separator') item.kind = separator;
    if (d.description !== undefined) item.description = d.description;
    if (d.alwaysShow) item.alwaysShow = true;
    if (d.rank !== undefined) item.rank = d.rank;
    if (d.preset) item.preset = d.preset;
    if (d.kind === 'armOnly') item.armOnly = true;
    if (d.kind === 'arm') item.arm = true;
    return item;
}

export interface QuickPickRequest {
    checker: RankChecker;
    ranks: readonly PlanRank[];
    presets: readonly Preset[];
    last: CheckedChoice | undefined;
    title: string;
    /** The plan's parallel coordinates: shown on each rank, a preset per dimension's group, selectors typed. */
    coords?: PlanCoords | null;
}

/** What Enter takes for a typed choice, as the title says it: a long list cut (`768,776,…`) with its count. */
function typedHint(choice: CheckedChoice, l10n: Localize): string {
    if (!choice.spec) return l10n.t('Enter: no rank now, arm every rank');
    const cut = choice.spec.length > 60 ? choice.spec.lastIndexOf(',', 60) : -1;
    const spec = cut > 0 ? `${choice.spec.slice(0, cut + 1)}… (${choice.ranks?.length ?? '?'})` : choice.spec;
    return choice.arm ? l10n.t('Enter: ranks {0}, every rank armed', spec) : l10n.t('Enter: ranks {0}', spec);
}

class RankQuickPick {
    private readonly qp: vscode.QuickPick<RankItem>;
    private readonly l10n: Localize;
    private readonly data: ItemData[];
    /** The title without a hint. */
    private readonly baseTitle: string;
    /** The option *Arm every rank* (a fresh item when arming is not offered: never shown). */
    private readonly armItem: RankItem;
    private readonly items: RankItem[];
    private readonly rankItems: RankItem[];
    private readonly allowArm: boolean;
    /** Selections made here, not by the user (presets toggled). */
    private updating = false;

    constructor(
        host: PickHost,
        private readonly req: QuickPickRequest,
    ) {
        this.qp = host.createQuickPick<RankItem>();
        this.l10n = host.l10n;
        this.allowArm = req.checker.allowArm;
        this.data = rankItems(req.ranks, req.presets, this.allowArm, this.l10n, req.coords ?? null);
        this.items = this.data.map((d) => toItem(d, host.separator));
        this.baseTitle = req.coords ? `${req.title} (${layoutTitle(req.coords, this.l10n)})` : req.title;
        this.armItem = this.items.find((i) => i.arm) ?? { label: '', arm: true };
        this.rankItems = this.items.filter((i) => i.rank !== undefined);
    }

    /** The remembered choice's ranks (and arming), else rank 0 (none when only armed was remembered). */
    private initialSelection(): RankItem[] {
        const last = this.req.last;
        const armedOnly = this.allowArm && last?.arm === true && !last.spec;
        const wanted = last?.ranks ?? (armedOnly ? [] : [0]);
        const out = this.rankItems.filter((i) => wanted.includes(i.rank as number));
        return this.allowArm && last?.arm ? [...out, this.armItem] : out;
    }

    private select(items: RankItem[]): void {
        this.updating = true;
        this.qp.selectedItems = items;
        this.updating = false;
    }

    /** A preset toggled on replaces the rank selection; *No rank now* checks *Arm every rank* alone. */
    private onSelection(sel: readonly RankItem[]): void {
        if (this.updating) return;
        const preset = sel.find((i) => i.preset || i.armOnly);
        if (preset?.armOnly) this.select([this.armItem]);
        else if (preset?.preset) {
            const wanted = new Set(preset.preset.ranks);
            this.select([...this.rankItems.filter((i) => wanted.has(i.rank as number)), ...(sel.includes(this.armItem) ? [this.armItem] : [])]);
        }
    }

    /** Whether `text` filters the items (`node 3`, `local 0`) rather than naming ranks. */
    private filters(text: string): boolean {
        return filtersItems(this.data, text);
    }

    /** The title's hint: what Enter takes for the typed text, or why it takes nothing. */
    private async hint(text: string): Promise<string> {
        const choice = await this.req.checker.choice(text, this.req.presets).catch(() => undefined);
        if (choice && !isPlanError(choice)) return typedHint(choice, this.l10n);
        if (choice && !this.filters(text.trim())) return choice.error.message;
        return '';
    }

    /** The typed choice, or the checked items; nothing when Enter takes nothing yet. */
    private async answer(): Promise<Answer<RankChoice>> {
        const typed = this.qp.value.trim();
        const armChecked = this.qp.selectedItems.includes(this.armItem);
        if (typed) {
            const choice = await this.req.checker.choice(typed, this.req.presets);
            if (!isPlanError(choice)) return { take: { spec: choice.spec, arm: this.allowArm && (choice.arm || armChecked) } };
            if (!this.filters(typed)) return { say: choice.error.message };
        }
        const chosen = this.qp.selectedItems.filter((i) => i.rank !== undefined).map((i) => i.rank as number);
        if (!chosen.length && !armChecked) return undefined;
        return { take: { spec: chosen.length ? specForSelection(chosen, this.req.presets) : '', arm: armChecked } };
    }

    /** What to type: a range, with coordinates also a selector in the job's own dimensions. */
    private placeholder(): string {
        const coords = this.req.coords;
        const l10n = this.l10n;
        if (coords) {
            const example = exampleSelector(shownDims(coords));
            return this.allowArm
                ? l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 or coordinates like {0} and press Enter), or arm every rank to debug later', example)
                : l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 or coordinates like {0} and press Enter)', example);
        }
        return this.allowArm
            ? l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 and press Enter), or arm every rank to debug later')
            : l10n.t('Ranks that stop at breakpoints (type a range like 0-3,8 and press Enter)');
    }

    show(): Promise<RankChoice | undefined> {
        const qp = this.qp;
        qp.placeholder = this.placeholder();
        qp.canSelectMany = true;
        qp.matchOnDescription = true;
        qp.items = this.items;
        this.select(this.initialSelection());
        qp.onDidChangeSelection((sel) => this.onSelection(sel));
        return runTypedPick(qp, { title: this.baseTitle, delayMs: CHECK_DELAY_MS, hint: (text) => this.hint(text), accept: () => this.answer() });
    }
}

/**
 * Asks which ranks to debug among the plan's; the choice (spec `1,3`, `all`, `local0` or ''
 * and whether every rank is armed), or undefined when cancelled.
 * Steps: preset, rank and arm items; the remembered choice preselected (else rank 0); a preset
 * toggled on replaces the rank selection; Enter with a typed choice takes it (the server reads
 * it), else the checked items; nothing chosen and nothing armed is not accepted.
 */
export function showRankQuickPick(host: PickHost, req: QuickPickRequest): Promise<RankChoice | undefined> {
    return new RankQuickPick(host, req).show();
}
