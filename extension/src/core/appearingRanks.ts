/**
 * The ranks of an armed job as they start, for *Choose when the ranks start* (a command whose
 * rank count the plan cannot read): each rank of `rankdebug jobs JOB --json` with its node
 * (hosts numbered in the order their first rank comes: the job's own host is node 0), local
 * rank, pid and parallel coordinates; the quick-pick's rows (`rank 2 · node 0 · dp 0 · tp 1`,
 * `local 2 · pid 4242` in the description); and what a typed choice (`1,3`, `local0`, `tp=0`)
 * names, read by the language server (`rankdebug.checkRanks`) against the ranks started so
 * far. A typed choice stands: ranks that start later and match it are attached too.
 * No `vscode` import.
 */
import { coordText, type Coords, type PlanCoords } from './coords';
import type { JobInfo, RankInfo } from './jobList';
import type { Localize } from './localize';
import type { CheckRanksReply, RankJob } from './rankCheck';
import { formatSpec, isPlanError, type PlanRank } from './ranks';

/** A rank that has started. */
export interface StartedRank {
    rank: number;
    node: number;
    local: number | null;
    pid: number | null;
    host: string | null;
    coords: Coords | null;
    /** As `jobs --json` gave it (what an attach takes). */
    info: RankInfo;
}

/** The job's started ranks, by rank (one per rank; an ended one left out), hosts numbered as nodes. */
export function startedRanks(job: JobInfo): StartedRank[] {
    const live = job.ranks.filter((r) => r.state !== 'exited').sort((a, b) => a.rank - b.rank);
    const nodes = new Map<string, number>();
    if (job.host) nodes.set(job.host, 0);
    const out: StartedRank[] = [];
    const seen = new Set<number>();
    for (const r of live) {
        if (seen.has(r.rank)) continue;
        seen.add(r.rank);
        const host = r.host ?? job.host ?? '';
        if (!nodes.has(host)) nodes.set(host, nodes.size);
        out.push({ rank: r.rank, node: nodes.get(host) as number, local: r.localRank, pid: r.pid, host: r.host, coords: r.coords ?? null, info: r });
    }
    return out;
}

/** One row of the pick (a `vscode.QuickPickItem` once `kind` is mapped). */
export interface StartedItem {
    kind: 'separator' | 'rank';
    label: string;
    description?: string;
    rank?: number;
}

/**
 * The pick's rows: per node a separator (`node 1 · host-b · 8-15`; one node: `Started: 0-3
 * of 8`) over its ranks, each `rank 9 · node 1 · dp 0 · tp 1` with `local 1 · pid 4242`.
 */
export function startedItems(ranks: readonly StartedRank[], worldSize: number | null, l10n: Localize): StartedItem[] {
    const byNode = new Map<number, StartedRank[]>();
    for (const r of ranks) {
        const list = byNode.get(r.node);
        if (list) list.push(r);
        else byNode.set(r.node, [r]);
    }
    const items: StartedItem[] = [];
    for (const [node, list] of [...byNode].sort((a, b) => a[0] - b[0])) {
        const spec = formatSpec(list.map((r) => r.rank));
        const label =
            byNode.size > 1
                ? [l10n.t('node {0}', node), list[0].host ?? '', spec].filter(Boolean).join(' · ')
                : worldSize !== null
                  ? l10n.t('Started: {0} of {1}', spec, worldSize)
                  : l10n.t('Started: {0}', spec);
        items.push({ kind: 'separator', label });
        for (const r of list) {
            const where = coordText(r.coords);
            items.push({
                kind: 'rank',
                label: [`rank ${r.rank}`, l10n.t('node {0}', r.node), where].filter(Boolean).join(' · '),
                description: [r.local !== null ? `local ${r.local}` : '', r.pid !== null ? `pid ${r.pid}` : ''].filter(Boolean).join(' · '),
                rank: r.rank,
            });
        }
    }
    return items;
}

/**
 * The started ranks as the server checks a choice against them: `{rank, node_rank,
 * local_rank}`, and their coordinates when ranks 0 to N-1 have all said theirs in the same
 * dimensions (a selector such as `tp=0` is read only then).
 */
export function checkJob(ranks: readonly StartedRank[], worldSize: number | null): RankJob {
    const plan: PlanRank[] = ranks.map((r) => ({ rank: r.rank, node_rank: r.node, local_rank: r.local }));
    return { ranks: plan, worldSize: null, coords: startedCoords(ranks, worldSize) };
}

function startedCoords(ranks: readonly StartedRank[], worldSize: number | null): PlanCoords | null {
    const first = ranks[0]?.coords;
    if (!first || ranks.some((r, i) => r.rank !== i || !r.coords)) return null;
    const names = Object.keys(first);
    const dims: Record<string, number> = {};
    for (const d of names) dims[d] = 0;
    for (const r of ranks) {
        const where = r.coords as Coords;
        if (Object.keys(where).length !== names.length || names.some((d) => where[d] === undefined)) return null;
        for (const d of names) dims[d] = Math.max(dims[d], where[d] + 1);
    }
    return { dims, order: [...names].reverse(), worldSize, source: 'job', read: [], ranks: ranks.map((r) => r.coords as Coords) };
}

/** What a typed choice names now: ranks (some may not have started yet), or the server's message. */
export type Resolved = { ranks: number[] } | { error: string };

/**
 * The ranks `text` names, asked of the server (`check`): first by number alone against the
 * job's world size (`1,3`, `0-3`, `all`: ranks that have not started count too), else against
 * the ranks started so far (`local0`, `node1`, `tp=0`: those that have started).
 */
export async function resolveChoice(
    text: string,
    started: readonly StartedRank[],
    worldSize: number | null,
    check: (job: RankJob) => Promise<CheckRanksReply>,
): Promise<Resolved> {
    if (!text.trim()) return { error: '' };
    const byNumber = await check({ ranks: [], worldSize });
    if (!isPlanError(byNumber) && byNumber.ranks !== null) return { ranks: byNumber.ranks };
    const here = await check(checkJob(started, worldSize));
    if (!isPlanError(here) && here.ranks !== null) return { ranks: here.ranks };
    return { error: isPlanError(here) ? here.error.message : isPlanError(byNumber) ? byNumber.error.message : '' };
}

/** The started ranks among `wanted` that no session has and none is being given (`taken`). */
export function toAttach(started: readonly StartedRank[], wanted: Iterable<number>, taken: ReadonlySet<number>): StartedRank[] {
    const want = new Set(wanted);
    return started.filter((r) => want.has(r.rank) && !taken.has(r.rank));
}
