/**
 * Rank lists as the extension shows them: labels, compact specs of a selection, presets and
 * nodes, for the quick-pick, the jobs view and the debug adapter. What a rank spec *means*
 * (`0-3,8`, `all`, `local0`, `arm`) is the language server's (`rankdebug.ranks`, asked through
 * `rankdebug.checkRanks`: core/rankCheck.ts); nothing here reads one.
 * No `vscode` import: unit-tested as is.
 */

/** One rank of a launch plan (`rankdebug plan --json` → `ranks[]`). */
export interface PlanRank {
    rank: number;
    node_rank?: number | null;
    local_rank?: number | null;
}

/** The part of a launch plan the extension reads; the Python side owns the rest. */
export interface LaunchPlan {
    launcher: string;
    /** A short name of the job (`rankdebug.plan` adds it; older servers do not). */
    title?: string;
    nnodes?: number | null;
    node_rank?: number | null;
    nproc_per_node?: number | string | null;
    world_size?: number | null;
    entry?: { kind: string; target: string | null } | null;
    entry_args?: string[];
    env?: Record<string, string | null>;
    ranks?: PlanRank[];
    span?: { start_line: number; end_line: number };
    warnings?: string[];
    cwd?: string | null;
    /** The command's parallel coordinates (read with core/coords.ts `readPlanCoords`); null when unknown. */
    coords?: unknown;
}

/** `{"error": {...}}` as the server and the CLI return it (lines 1-based). */
export interface PlanError {
    error: { message: string; line?: number | null; column?: number | null };
}

export function isPlanError(value: unknown): value is PlanError {
    return typeof value === 'object' && value !== null && 'error' in value;
}

/**
 * The job's short name: the server's `title` (`rankdebug.debugplan.title_of`). Only for an
 * older server without it, the same rule here: the entry's file or module name, else the launcher.
 */
export function titleOf(plan: Pick<LaunchPlan, 'launcher' | 'entry' | 'title'>): string {
    if (plan.title) return plan.title;
    const target = plan.entry?.target;
    if (!target) return plan.launcher;
    return target.replace(/\/+$/, '').split('/').pop() || target;
}

/** The label a rank has everywhere: `rank 2 · node 0 · local 2`. */
export function rankLabel(r: PlanRank): string {
    const parts = [`rank ${r.rank}`];
    if (r.node_rank !== undefined && r.node_rank !== null) parts.push(`node ${r.node_rank}`);
    if (r.local_rank !== undefined && r.local_rank !== null) parts.push(`local ${r.local_rank}`);
    return parts.join(' · ');
}

/** Rank numbers as a compact spec for display and memory: [0,1,2,3,8] → "0-3,8", [0,1] →
 *  "0,1" — as ranks.compact writes them (the unit test checks cases it made). */
export function formatSpec(ranks: Iterable<number>): string {
    const sorted = [...new Set(ranks)].filter((r) => Number.isInteger(r) && r >= 0).sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < sorted.length; ) {
        let j = i;
        while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
        if (j === i) parts.push(String(sorted[i]));
        else if (j === i + 1) parts.push(String(sorted[i]), String(sorted[j]));
        else parts.push(`${sorted[i]}-${sorted[j]}`);
        i = j + 1;
    }
    return parts.join(',');
}

/** The presets every job has (when they fit it). */
export type FixedPresetId = 'all' | 'rank0' | 'local0';

/** `group`: one parallel dimension's group, from the job's coordinates (core/coords.ts). */
export type PresetId = FixedPresetId | 'group';

/** A preset of the quick-pick: all ranks, rank 0, local rank 0 of each node, one dimension's group. */
export interface Preset {
    id: PresetId;
    spec: string;
    ranks: number[];
    /** `group` presets: the dimension the group spans (`tp`). */
    dim?: string;
}

/** The spec of each preset; the server says which ranks each names in a job. */
export const PRESET_SPECS: Readonly<Record<FixedPresetId, string>> = { all: 'all', rank0: '0', local0: 'local0' };

/**
 * The presets that make sense, from the ranks the server resolved for each preset's spec
 * (missing or null: the spec does not fit the job). local0 only with more than one node.
 */
export function presets(resolved: Partial<Record<FixedPresetId, readonly number[] | null>>, nodes: number): Preset[] {
    const out: Preset[] = [];
    for (const id of ['all', 'rank0', 'local0'] as const) {
        const ranks = resolved[id];
        if (!ranks?.length || (id === 'local0' && nodes < 2)) continue;
        out.push({ id, spec: PRESET_SPECS[id], ranks: [...ranks] });
    }
    return out;
}

/**
 * The presets with one per dimension's group added (`groups`: each dimension's selector and
 * the ranks the server resolved for it, null when it did not fit): only groups of more than
 * one rank and fewer than all, each set of ranks offered by one group.
 */
export function withGroups(fixed: readonly Preset[], groups: readonly { dim: string; spec: string; ranks: readonly number[] | null }[], world: number): Preset[] {
    const out = [...fixed];
    // A group may name the ranks local0 does (a pipeline stage per node): it says another thing.
    const seen = new Set(fixed.filter((p) => p.id === 'all').map((p) => formatSpec(p.ranks)));
    for (const g of groups) {
        if (!g.ranks || g.ranks.length < 2 || g.ranks.length >= world) continue;
        const key = formatSpec(g.ranks);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ id: 'group', spec: g.spec, ranks: [...g.ranks], dim: g.dim });
    }
    return out;
}

/** The spec to send for a selection: a preset's own spec when the selection is exactly it. */
export function specForSelection(selected: readonly number[], choices: readonly Preset[]): string {
    const key = formatSpec(selected);
    for (const p of choices) {
        if (p.id !== 'rank0' && p.ranks.length > 1 && formatSpec(p.ranks) === key) return p.spec;
    }
    return key;
}

/** Ranks grouped by node, for big jobs (the quick-pick shows a separator per node). */
export function byNode(ranks: readonly PlanRank[]): Map<number, PlanRank[]> {
    const out = new Map<number, PlanRank[]>();
    for (const r of ranks) {
        const node = r.node_rank ?? 0;
        const list = out.get(node) ?? [];
        list.push(r);
        out.set(node, list);
    }
    return out;
}

/**
 * Fallback only for attaching to a running job while the language server cannot run (its
 * interpreter is unusable): a list of rank numbers (`1,3`) is read here; any other spec
 * (ranges, `all`, `localN`) needs the server, and this answers undefined.
 */
export function plainRankList(spec: string): number[] | undefined {
    const parts = spec.split(',').map((p) => p.trim());
    // At most 7 digits (rankdebug/ranks.py MAX_RANK): a longer number names no rank.
    if (!parts.every((p) => /^\d{1,7}$/.test(p) && Number(p) <= 1048575)) return undefined;
    return [...new Set(parts.map(Number))].sort((a, b) => a - b);
}
