/**
 * Which ranks to debug: the quick-pick over the plan's ranks (rankQuickPick.ts), or, when how
 * many ranks the command starts is not known here, a pick that offers *Choose when the ranks
 * start* or a typed choice (unknownRankPick.ts); the last choice remembered per command. Every
 * typed or remembered choice, and which ranks each preset names, is read by the language
 * server (`rankdebug.checkRanks`, core/rankCheck.ts), as you type, debounced.
 */
import type * as vscode from 'vscode';
import type { CheckedChoice, RankChecker } from '../core/rankCheck';
import { formatChoice, type RankChoice } from '../core/rankChoice';
import { groupPresets } from '../core/coords';
import { byNode, isPlanError, PRESET_SPECS, presets, withGroups, type FixedPresetId, type PlanRank, type Preset } from '../core/ranks';
import type { RankPickHost } from './host';
import { showRankQuickPick } from './rankQuickPick';
import { askUnknownRanks } from './unknownRankPick';

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

/**
 * The job's presets (all ranks, rank 0, local rank 0 of each node, and with the plan's
 * coordinates one group per dimension: `dp=0 tp=0` for the first rank of each pipeline
 * stage), their ranks resolved by the server.
 */
export async function resolvePresets(checker: RankChecker, ranks: readonly PlanRank[]): Promise<Preset[]> {
    const ids = Object.keys(PRESET_SPECS) as FixedPresetId[];
    const groups = checker.job.coords ? groupPresets(checker.job.coords) : [];
    const [replies, groupReplies] = await Promise.all([
        Promise.all(ids.map((id) => checker.check(PRESET_SPECS[id], false))),
        Promise.all(groups.map((g) => checker.check(g.spec, false).catch(() => undefined))),
    ]);
    const resolved: Partial<Record<FixedPresetId, number[] | null>> = {};
    ids.forEach((id, i) => {
        const reply = replies[i];
        if (!isPlanError(reply)) resolved[id] = reply.ranks;
    });
    const groupRanks = groups.map((g, i) => {
        const reply = groupReplies[i];
        return { ...g, ranks: reply && !isPlanError(reply) ? reply.ranks : null };
    });
    return withGroups(presets(resolved, byNode(ranks).size), groupRanks, ranks.length);
}

/**
 * A remembered choice (`1,3`, `arm`, `1,3+arm`) read by the server against this job; undefined
 * when there is none or it no longer fits. Arming is dropped where it is not offered.
 */
export async function recall(checker: RankChecker, text: string | undefined, choices: readonly Preset[] = []): Promise<CheckedChoice | undefined> {
    if (!text) return undefined;
    const choice = await checker.choice(text, choices, true);
    if (isPlanError(choice)) return undefined;
    if (checker.allowArm) return choice;
    return choice.spec ? { ...choice, arm: false } : undefined;
}

/** Where a choice is asked: the pick's title, and the memory and key it is remembered under. */
export interface PickAsk {
    title: string;
    memory: RankMemory | undefined;
    key: string;
}

/**
 * Asks which ranks to debug; returns the choice (spec `1,3`, `all`, `local0` or '' and whether
 * every rank is armed) or undefined when cancelled.
 * Steps: the presets and the remembered choice, read by the server; the quick-pick when the
 * plan's ranks are known, else the pick for an unknown count; the answer remembered (not
 * *Choose when the ranks start*, which asks again).
 */
export async function pickRanks(host: RankPickHost, checker: RankChecker, ranks: readonly PlanRank[], { title, memory, key }: PickAsk): Promise<RankChoice | undefined> {
    const remember = host.rememberRanks();
    const choices = ranks.length ? await resolvePresets(checker, ranks) : [];
    const last = await recall(checker, remember ? memory?.get(key) : undefined, choices);
    const coords = checker.job.coords ?? null;
    const choice = ranks.length ? await showRankQuickPick(host, { checker, ranks, presets: choices, last, title, coords }) : await askUnknownRanks(host, checker, title, last);
    if (choice && !choice.live && memory && remember) void memory.set(key, formatChoice(choice));
    return choice;
}
