/**
 * Rank lists and rank specs ("0-3,8", "all", "local0"), shared by the quick-pick, the
 * jobs view and the debug adapter. No `vscode` import: unit-tested as is.
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
}

/** `{"error": {...}}` as the server and the CLI return it (lines 1-based). */
export interface PlanError {
    error: { message: string; line?: number | null; column?: number | null };
}

export function isPlanError(value: unknown): value is PlanError {
    return typeof value === 'object' && value !== null && 'error' in value;
}

/** The label a rank has everywhere: `rank 2 · node 0 · local 2`. */
export function rankLabel(r: PlanRank): string {
    const parts = [`rank ${r.rank}`];
    if (r.node_rank !== undefined && r.node_rank !== null) parts.push(`node ${r.node_rank}`);
    if (r.local_rank !== undefined && r.local_rank !== null) parts.push(`local ${r.local_rank}`);
    return parts.join(' · ');
}

/** Rank numbers as a compact spec: [0,1,2,3,8] → "0-3,8". */
export function formatSpec(ranks: Iterable<number>): string {
    const sorted = [...new Set(ranks)].filter((r) => Number.isInteger(r) && r >= 0).sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < sorted.length; ) {
        let j = i;
        while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
        if (j === i) parts.push(String(sorted[i]));
        else if (j === i + 1) parts.push(`${sorted[i]},${sorted[j]}`);
        else parts.push(`${sorted[i]}-${sorted[j]}`);
        i = j + 1;
    }
    return parts.join(',');
}

/**
 * The ranks a spec names among `ranks`, or undefined when the spec is malformed.
 * Steps: split on commas; each part is `all`, `localN` (local rank N of each node), `N` or `A-B`.
 * Numbers outside the job are dropped only when the job's ranks are known.
 */
export function parseSpec(spec: string, ranks: readonly PlanRank[] = []): number[] | undefined {
    const out = new Set<number>();
    const known = new Set(ranks.map((r) => r.rank));
    const text = spec.trim().toLowerCase();
    if (!text) return undefined;
    for (const raw of text.split(',')) {
        const part = raw.trim();
        let m: RegExpMatchArray | null;
        if (part === 'all' || part === '*') {
            if (!ranks.length) return undefined;
            ranks.forEach((r) => out.add(r.rank));
        } else if ((m = /^local\s*(\d+)$/.exec(part))) {
            const local = Number(m[1]);
            const hit = ranks.filter((r) => r.local_rank === local);
            if (!hit.length) return undefined;
            hit.forEach((r) => out.add(r.rank));
        } else if ((m = /^(\d+)$/.exec(part))) {
            out.add(Number(m[1]));
        } else if ((m = /^(\d+)\s*-\s*(\d+)$/.exec(part))) {
            const [a, b] = [Number(m[1]), Number(m[2])];
            if (b < a || b - a > 100000) return undefined;
            for (let r = a; r <= b; r++) out.add(r);
        } else {
            return undefined;
        }
    }
    const result = [...out].filter((r) => !known.size || known.has(r)).sort((a, b) => a - b);
    return result.length ? result : undefined;
}

/** A preset of the quick-pick: all ranks, rank 0, local rank 0 of each node. */
export interface Preset {
    id: 'all' | 'rank0' | 'local0';
    spec: string;
    ranks: number[];
}

/** The presets that make sense for a plan (local0 only with more than one node). */
export function presets(ranks: readonly PlanRank[]): Preset[] {
    const all = ranks.map((r) => r.rank);
    const out: Preset[] = [{ id: 'all', spec: 'all', ranks: all }];
    if (all.includes(0)) out.push({ id: 'rank0', spec: '0', ranks: [0] });
    const local0 = ranks.filter((r) => r.local_rank === 0).map((r) => r.rank);
    const nodes = new Set(ranks.map((r) => r.node_rank ?? 0));
    if (nodes.size > 1 && local0.length) out.push({ id: 'local0', spec: 'local0', ranks: local0 });
    return out;
}

/** The spec to send for a selection: a preset's own spec when the selection is exactly it. */
export function specForSelection(selected: readonly number[], ranks: readonly PlanRank[]): string {
    const key = formatSpec(selected);
    for (const p of presets(ranks)) {
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

/** A short title for a job: `torchrun train.py`. */
export function planTitle(plan: Pick<LaunchPlan, 'launcher' | 'entry'>): string {
    const target = plan.entry?.target;
    if (!target) return plan.launcher;
    const base = target.split('/').pop() ?? target;
    return `${plan.launcher} ${base}`;
}
