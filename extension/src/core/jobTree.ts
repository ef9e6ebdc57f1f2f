/**
 * The Training Jobs tree as a list of rows (jobsView.ts renders them): per job its row, then its
 * rank rows grouped by core/rankTree.ts (by node, or by a parallel dimension when asked, then
 * ranges of one state, at most a few dozen rows a level), each with its id, its parent's id
 * and a signature that changes when what the row shows changes, so a refresh re-renders only
 * the rows that changed. 256 ranks take a few
 * milliseconds (tests/extension/unit/scale.test.ts). No `vscode` import.
 */
import { rowSignature, type JobInfo, type RankInfo, type SessionState } from './jobList';
import type { RankRow } from './rankRow';
import { MAX_ROWS, rankTree, type RankTreeNode } from './rankTree';

export type GroupTreeNode = Extract<RankTreeNode, { kind: 'group' }>;

export type JobTreeRow =
    | { kind: 'job'; id: string; parent?: undefined; signature: string; job: JobInfo }
    | { kind: 'group'; id: string; parent: string; signature: string; job: JobInfo; group: GroupTreeNode }
    | { kind: 'rank'; id: string; parent: string; signature: string; job: JobInfo; rank: RankInfo; row: RankRow };

/** What the view knows beside the scan: each job's rank rows (filtered), a rank's session state, and what else the job row shows. */
export interface JobTreeSource {
    rows(job: JobInfo): RankRow[];
    session(job: JobInfo, rank: RankInfo): SessionState;
    /** Anything else the job row shows (whether this window has its terminal). */
    jobExtra(job: JobInfo): string;
    /** The parallel dimension to group the job's ranks by (Group Ranks by…), if any. */
    groupBy?(job: JobInfo): string | undefined;
}

export function jobRowId(job: JobInfo): string {
    return `job:${job.id}`;
}

export function groupRowId(job: JobInfo, group: GroupTreeNode): string {
    return `group:${job.id}:${group.id}`;
}

export function rankRowId(job: JobInfo, rank: number): string {
    return `rank:${job.id}:${rank}`;
}

/** Every row of the tree, parents before their children, in the order they are shown. */
export function jobTreeRows(jobs: readonly JobInfo[], source: JobTreeSource): JobTreeRow[] {
    const out: JobTreeRow[] = [];
    for (const job of jobs) {
        const rows = source.rows(job);
        out.push({ kind: 'job', id: jobRowId(job), signature: rowSignature(job, undefined, undefined, `${source.jobExtra(job)}:${rows.length}`), job });
        const byRank = new Map(job.ranks.map((r) => [r.rank, r]));
        const walk = (list: RankTreeNode[], parent: string): void => {
            for (const t of list) {
                if (t.kind === 'group') {
                    const id = groupRowId(job, t);
                    out.push({ kind: 'group', id, parent, signature: JSON.stringify([t.label, t.description, t.ranks.length]), job, group: t });
                    walk(t.children, id);
                    continue;
                }
                const rank = byRank.get(t.row.rank);
                if (!rank) continue;
                const signature = rowSignature(job, rank, source.session(job, rank), `${t.row.text}:${t.row.icon}`);
                out.push({ kind: 'rank', id: rankRowId(job, rank.rank), parent, signature, job, rank, row: t.row });
            }
        };
        walk(rankTree(rows, MAX_ROWS, source.groupBy?.(job)), jobRowId(job));
    }
    return out;
}
