/**
 * The Training Jobs filter: a rank spec (`0-3,8`, read by the language server) keeps those
 * ranks; any other text keeps the rank rows that contain it (`paused`, `all_reduce`,
 * `model.py`, a host). No `vscode` import.
 */
import { CHECK_RANKS, type CheckRanksReply, type Execute } from './rankCheck';
import type { RankRow } from './rankRow';
import { isPlanError, plainRankList } from './ranks';

/** The view's filter: rank numbers (a typed rank spec), or text the row must contain. */
export interface RankFilter {
    /** What was typed, for the view's description. */
    label: string;
    ranks?: ReadonlySet<number>;
    text?: string;
}

export function matchesFilter(row: RankRow, filter: RankFilter | undefined): boolean {
    if (!filter) return true;
    if (filter.ranks && !filter.ranks.has(row.rank)) return false;
    if (filter.text) {
        const hay = `rank ${row.rank} ${row.text} ${row.word} ${row.node ?? ''}`.toLowerCase();
        if (!hay.includes(filter.text.toLowerCase())) return false;
    }
    return true;
}

/** The filter `text` stands for: the ranks a rank spec names, else the text itself; undefined: no filter. */
export async function readFilter(text: string, execute: Execute): Promise<RankFilter | undefined> {
    const label = text.trim();
    if (!label) return undefined;
    let ranks: number[] | null | undefined;
    try {
        const reply = await execute<CheckRanksReply>(CHECK_RANKS, { spec: label, ranks: [], worldSize: null });
        ranks = isPlanError(reply) ? undefined : reply.ranks;
    } catch {
        // No server: a plain list of ranks is still read.
        ranks = plainRankList(label);
    }
    // `all`: every rank.
    if (ranks === null) return undefined;
    return ranks ? { label, ranks: new Set(ranks) } : { label, text: label };
}
