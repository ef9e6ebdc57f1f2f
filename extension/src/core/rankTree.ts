/**
 * A job's rank rows as a tree that stays readable at hundreds of ranks: up to `max` rows are
 * shown as they are (under a row per node when the job spans several hosts); more are grouped per node, then into ranges of
 * consecutive ranks in the same state (`ranks 0-127 · running`), then by state, and last into
 * even chunks, so that no level has more than `max` rows. A job whose ranks all share one state
 * is one collapsed row (`ranks 0-255 · running (256)`) over those chunks. Grouped by a parallel
 * dimension (Group Ranks by…), the top level is a row per index (`tp 0`, `tp 1`; ranges of
 * indexes `dp 0-7` past twice `max`), ranks without that coordinate under `tp ?`.
 * No `vscode` import.
 */
import type { RankRow } from './rankRow';
import { formatSpec } from './ranks';

/** The most rows one level of a job shows. */
export const MAX_ROWS = 24;

export type RankTreeNode =
    | { kind: 'rank'; row: RankRow }
    | {
          kind: 'group';
          /** Unique within the job, stable while its ranks and states stay. */
          id: string;
          label: string;
          description: string;
          ranks: number[];
          children: RankTreeNode[];
      };

/** `ranks 0-127`; a long list is cut (`ranks 0,2,4,…`), the count goes in the description. */
export function rangeLabel(ranks: readonly number[], limit = 40): string {
    let spec = formatSpec(ranks);
    if (spec.length > limit) spec = `${spec.slice(0, spec.lastIndexOf(',', limit) + 1)}…`;
    return ranks.length === 1 ? `rank ${spec}` : `ranks ${spec}`;
}

/** `120 running · 8 paused`, most first. */
export function stateCounts(rows: readonly RankRow[]): string {
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.word, (counts.get(r.word) ?? 0) + 1);
    return [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([word, n]) => `${n} ${word}`)
        .join(' · ');
}

function leaf(row: RankRow): RankTreeNode {
    return { kind: 'rank', row };
}

/** Rows split where `keyOf` changes between neighbours (rows sorted by rank). */
function runs(rows: readonly RankRow[], keyOf: (r: RankRow) => string): RankRow[][] {
    const out: RankRow[][] = [];
    for (const r of rows) {
        const last = out[out.length - 1];
        if (last && keyOf(last[0]) === keyOf(r) && last[last.length - 1].rank + 1 === r.rank) last.push(r);
        else out.push([r]);
    }
    return out;
}

function byKey(rows: readonly RankRow[], keyOf: (r: RankRow) => string): Map<string, RankRow[]> {
    const out = new Map<string, RankRow[]>();
    for (const r of rows) {
        const k = keyOf(r);
        const list = out.get(k);
        if (list) list.push(r);
        else out.set(k, [r]);
    }
    return out;
}

class TreeBuilder {
    constructor(private readonly max: number) {}

    group(id: string, label: string, description: string, rows: RankRow[], children: RankTreeNode[]): RankTreeNode {
        return { kind: 'group', id, label, description, ranks: rows.map((r) => r.rank), children };
    }

    /** A group standing for `rows`: the state when they share one, else their counts. */
    private stateGroup(id: string, rows: RankRow[]): RankTreeNode {
        const uniform = rows.every((r) => r.key === rows[0].key);
        const description = uniform ? `${rows[0].text}${rows.length > 1 ? ` (${rows.length})` : ''}` : stateCounts(rows);
        return this.group(id, rangeLabel(rows.map((r) => r.rank)), description, rows, this.build(rows, `${id}/`));
    }

    /** One level: rows as they are, else ranges, else states, else chunks. */
    build(rows: RankRow[], prefix: string): RankTreeNode[] {
        if (rows.length <= this.max) return rows.map(leaf);
        if (!prefix && rows.every((r) => r.key === rows[0].key)) return [this.stateGroup(`state:${rows[0].key}`, rows)];
        const ranges = runs(rows, (r) => r.key);
        if (ranges.length > 1 && ranges.length <= this.max) {
            return ranges.map((run) => (run.length === 1 ? leaf(run[0]) : this.stateGroup(`${prefix}run:${run[0].rank}-${run[run.length - 1].rank}`, run)));
        }
        const states = byKey(rows, (r) => r.key);
        if (states.size > 1 && states.size <= this.max) {
            return [...states].map(([key, list]) => (list.length === 1 ? leaf(list[0]) : this.stateGroup(`${prefix}state:${key}`, list)));
        }
        return this.chunks(rows, prefix);
    }

    /** Even chunks of consecutive rows, at most `max` of them. */
    private chunks(rows: RankRow[], prefix: string): RankTreeNode[] {
        const size = Math.ceil(rows.length / this.max);
        const out: RankTreeNode[] = [];
        for (let i = 0; i < rows.length; i += size) {
            const part = rows.slice(i, i + size);
            out.push(this.stateGroup(`${prefix}chunk:${part[0].rank}-${part[part.length - 1].rank}`, part));
        }
        return out;
    }

    /**
     * Per node (host) when the ranks run on more than one, up to twice `max` of them (32 nodes
     * of 8 GPUs read better as 32 rows than as state ranges), however few the ranks (a
     * multi-node job reads by node); below each, as `build` says.
     */
    top(rows: RankRow[]): RankTreeNode[] {
        const nodes = byKey(rows, (r) => r.node ?? '?');
        if (nodes.size < 2 || nodes.size > 2 * this.max) return rows.length <= this.max ? rows.map(leaf) : this.build(rows, '');
        return [...nodes].map(([node, list]) =>
            this.group(`node:${node}`, node, `${rangeLabel(list.map((r) => r.rank))} · ${stateCounts(list)}`, list, this.build(list, `node:${node}/`)),
        );
    }
}

/** The id of a dimension's group (`dim:tp=0`, `dim:dp=0-7`, `dim:tp=?`). */
function dimGroupId(dim: string, lo: number | undefined, hi: number | undefined): string {
    if (lo === undefined) return `dim:${dim}=?`;
    return lo === hi ? `dim:${dim}=${lo}` : `dim:${dim}=${lo}-${hi}`;
}

/**
 * A row per index of `dim` (`tp 0`, `tp 1`, …) over the ranks that have it, each built as
 * `build` says; past twice `max` indexes, even ranges of them (`dp 0-7`); ranks without the
 * coordinate last, under `tp ?`.
 */
function byDimension(builder: TreeBuilder, rows: RankRow[], dim: string, max: number): RankTreeNode[] {
    const byIndex = new Map<number, RankRow[]>();
    const unknown: RankRow[] = [];
    for (const r of rows) {
        const index = r.coords?.[dim];
        if (index === undefined) {
            unknown.push(r);
            continue;
        }
        const list = byIndex.get(index);
        if (list) list.push(r);
        else byIndex.set(index, [r]);
    }
    const indexes = [...byIndex.keys()].sort((a, b) => a - b);
    const per = Math.max(1, Math.ceil(indexes.length / (2 * max)));
    const out: RankTreeNode[] = [];
    for (let i = 0; i < indexes.length; i += per) {
        const part = indexes.slice(i, i + per);
        const lo = part[0];
        const hi = part[part.length - 1];
        const list = part.flatMap((x) => byIndex.get(x) ?? []).sort((a, b) => a.rank - b.rank);
        const id = dimGroupId(dim, lo, hi);
        out.push(builder.group(id, lo === hi ? `${dim} ${lo}` : `${dim} ${lo}-${hi}`, `${rangeLabel(list.map((r) => r.rank))} · ${stateCounts(list)}`, list, builder.build(list, `${id}/`)));
    }
    if (unknown.length) {
        const id = dimGroupId(dim, undefined, undefined);
        out.push(builder.group(id, `${dim} ?`, `${rangeLabel(unknown.map((r) => r.rank))} · ${stateCounts(unknown)}`, unknown, builder.build(unknown, `${id}/`)));
    }
    return out;
}

/**
 * The tree of a job's rank rows (filtered already), at most `max` rows per level (twice that
 * for nodes); `groupBy`: a parallel dimension to group by first, when some row has it.
 */
export function rankTree(rows: readonly RankRow[], max = MAX_ROWS, groupBy?: string): RankTreeNode[] {
    const sorted = [...rows].sort((a, b) => a.rank - b.rank);
    const limit = Math.max(2, max);
    const builder = new TreeBuilder(limit);
    if (groupBy && sorted.some((r) => r.coords?.[groupBy] !== undefined)) return byDimension(builder, sorted, groupBy, limit);
    return builder.top(sorted);
}

/** Every rank a node stands for. */
export function ranksOf(node: RankTreeNode): number[] {
    return node.kind === 'rank' ? [node.row.rank] : node.ranks;
}
