/**
 * Attach to which ranks? (rankAttach.ts): the rows of a running job's ranks as the launch
 * quick-pick words its own (core/rankItems.ts): `rank 13 · node 1 · dp 1 · tp 5`, the local
 * rank, pid and debug port in the description, so `tp 5` or `node 1` typed filters them; and
 * the job's coordinates as the language server's rank checker takes them, so a typed selector
 * (`tp=0`, `pp=last tp=0-3`) names ranks. No `vscode` import.
 */
import { coordText, reportedDims, type PlanCoords } from './coords';
import type { RankInfo } from './jobList';
import type { PlanRank } from './ranks';

export interface AttachItem {
    label: string;
    description: string;
    rank: RankInfo;
}

/** Each host's node number: the order in which the job's ranks (by rank) first name it; null when a rank's host is unknown. */
export function nodeNumbers(ranks: readonly RankInfo[]): Map<string, number> | null {
    const out = new Map<string, number>();
    for (const r of [...ranks].sort((a, b) => a.rank - b.rank)) {
        if (!r.host) return null;
        if (!out.has(r.host)) out.set(r.host, out.size);
    }
    return out;
}

/** The rows of `choices` (some of the job's `ranks`): `rank 13 · node 1 · dp 1 · tp 5`, `local 5 · pid 123 · 127.0.0.1:5678`. */
export function attachItems(choices: readonly RankInfo[], ranks: readonly RankInfo[]): AttachItem[] {
    const nodes = nodeNumbers(ranks);
    const dims = reportedDims(ranks);
    return choices.map((r) => {
        const node = nodes && r.host ? nodes.get(r.host) : undefined;
        const label = [`rank ${r.rank}`, node !== undefined ? `node ${node}` : '', coordText(r.coords, dims)].filter(Boolean).join(' · ');
        const description = [
            r.localRank !== null ? `local ${r.localRank}` : '',
            r.pid !== null ? `pid ${r.pid}` : '',
            r.port ? `${r.address ?? '127.0.0.1'}:${r.port}` : '',
        ]
            .filter(Boolean)
            .join(' · ');
        return { label, description, rank: r };
    });
}

/** The job's ranks as the rank checker takes them (`{rank, node_rank, local_rank}`). */
export function planRanks(ranks: readonly RankInfo[]): PlanRank[] {
    const nodes = nodeNumbers(ranks);
    return ranks.map((r) => ({ rank: r.rank, node_rank: nodes && r.host ? (nodes.get(r.host) ?? null) : null, local_rank: r.localRank }));
}

/**
 * The job's coordinates as the checker resolves a selector through them: every rank from 0 to
 * the world size reports the same dimensions (the sizes: the largest index + 1); null when one
 * does not (yet), as a selector over some of the ranks would name a wrong set.
 */
export function jobCoords(ranks: readonly RankInfo[], worldSize: number | null): Pick<PlanCoords, 'dims' | 'ranks'> | null {
    const size = worldSize ?? ranks.length;
    const dims = reportedDims(ranks);
    if (!dims.length || size <= 0 || size > 1_000_000) return null;
    const byRank = new Map(ranks.map((r) => [r.rank, r.coords]));
    const table: Record<string, number>[] = [];
    const sizes: Record<string, number> = Object.fromEntries(dims.map((d) => [d, 1]));
    for (let rank = 0; rank < size; rank++) {
        const where = byRank.get(rank);
        if (!where || dims.some((d) => where[d] === undefined)) return null;
        table.push(Object.fromEntries(dims.map((d) => [d, where[d]])));
        for (const d of dims) sizes[d] = Math.max(sizes[d], where[d] + 1);
    }
    return { dims: sizes, ranks: table };
}
