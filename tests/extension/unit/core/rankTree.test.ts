import * as assert from 'node:assert/strict';
import { parseEvent, type LaunchEvent } from '../../../../extension/src/core/events';
import { readJobs, type JobInfo } from '../../../../extension/src/core/jobList';
import { jobTreeRows } from '../../../../extension/src/core/jobTree';
import { LiveRanks, liveText, stateKey } from '../../../../extension/src/core/liveRanks';
import { matchesFilter, readFilter } from '../../../../extension/src/core/rankFilter';
import { rankRow, type RankRow } from '../../../../extension/src/core/rankRow';
import { MAX_ROWS, rangeLabel, rankTree, ranksOf, stateCounts, type RankTreeNode } from '../../../../extension/src/core/rankTree';
import { l10n } from '../debug/fakes';

const ev = (o: Record<string, unknown>): LaunchEvent => {
    const e = parseEvent(JSON.stringify(o));
    assert.ok(e, JSON.stringify(o));
    return e;
};

/** A registry job of `n` ranks, `perNode` to a host (node0, node1, …). */
function job(n: number, perNode = n): JobInfo {
    const ranks = Array.from({ length: n }, (_, r) => ({ pid: 1000 + r, rank: r, local_rank: r % perNode, world_size: n, host: `node${Math.floor(r / perNode)}`, state: 'running' }));
    return readJobs({ jobs: [{ id: 'J', source: 'registry', launcher: 'torchrun', world_size: n, ranks }] }).jobs[0];
}

function rows(j: JobInfo, live: LiveRanks): RankRow[] {
    return j.ranks.map((r) => rankRow(r, j, undefined, live.get(r.rank), l10n));
}

/** Every rank row below `nodes`, in order. */
function leaves(nodes: RankTreeNode[]): number[] {
    return nodes.flatMap((n) => (n.kind === 'rank' ? [n.row.rank] : leaves(n.children)));
}

function widest(nodes: RankTreeNode[]): number {
    return Math.max(nodes.length, ...nodes.map((n) => (n.kind === 'group' ? widest(n.children) : 0)));
}

describe('core/liveRanks', () => {
    it('follows a rank through the supervisor\'s events', () => {
        const live = new LiveRanks();
        assert.equal(live.apply(ev({ event: 'stopped', rank: 1, reason: 'breakpoint', file: '/w/model.py', line: 88, function: 'forward', job: 'J' })), true);
        assert.equal(liveText(live.get(1)!, l10n), 'paused at model.py:88 in forward (breakpoint)');
        assert.equal(live.apply(ev({ event: 'stopped', rank: 1, reason: 'breakpoint', file: '/w/model.py', line: 88, function: 'forward' })), false, 'the same state again changes nothing');
        live.apply(ev({ event: 'continued', rank: 1 }));
        assert.equal(liveText(live.get(1)!, l10n), 'running');
        live.apply(ev({ event: 'blocked', rank: 2, in: 'all_reduce' }));
        assert.equal(liveText(live.get(2)!, l10n), 'waiting in all_reduce');
        live.apply(ev({ event: 'raised', rank: 3, pid: 77, exception: 'ValueError', message: 'bad shape', file: '/w/model.py', line: 88, function: 'forward' }));
        assert.equal(liveText(live.get(3)!, l10n), 'raised ValueError at model.py:88');
        live.apply(ev({ event: 'stopped', rank: 0, reason: 'pause', file: null, line: null, function: null }));
        assert.equal(liveText(live.get(0)!, l10n), 'paused (pause)');
        // Paused from outside while it waits in a collective (its peer stopped): where it waits.
        live.apply(ev({ event: 'stopped', rank: 4, reason: 'pause', file: '/w/model.py', line: 90, function: 'forward', waiting: 'all_reduce' }));
        assert.equal(liveText(live.get(4)!, l10n), 'paused at model.py:90 in forward, waiting in all_reduce');
        assert.equal(stateKey(live.get(4)!), 'paused:pause:/w/model.py:90:all_reduce');
        live.apply(ev({ event: 'stopped', rank: 4, reason: 'pause', file: '/w/model.py', line: 90, function: 'forward' }));
        assert.equal(liveText(live.get(4)!, l10n), 'paused at model.py:90 in forward (pause)', 'stopped for real once the collective returned');
        assert.equal(live.apply(ev({ event: 'exited', code: 0 })), false, 'the job\'s own end is no rank\'s');
        assert.equal(live.apply(ev({ event: 'arrived', command: 'step', ranks: [0, 1] })), false);
        assert.equal(stateKey(live.get(2)!), 'blocked:all_reduce');
    });

    it('says which collective a rank waits in: the operation, its number and its group', () => {
        const live = new LiveRanks();
        // A group step that did not arrive: the rank's own records said which.
        live.apply(ev({ event: 'blocked', rank: 5, in: 'all_reduce', seq: 1204, group: '0', job: 'J' }));
        assert.equal(liveText(live.get(5)!, l10n), 'waiting in all_reduce #1204 (group 0)');
        assert.equal(stateKey(live.get(5)!), 'blocked:all_reduce#1204@0');
        live.apply(ev({ event: 'blocked', rank: 6, in: 'all_reduce', seq: 1205, group: '0', job: 'J' }));
        assert.notEqual(stateKey(live.get(6)!), stateKey(live.get(5)!), 'another number: another row');
        // A number without its group, and a rank that could not say (py-spy's name alone).
        live.apply(ev({ event: 'blocked', rank: 7, in: 'barrier', seq: 2 }));
        assert.equal(liveText(live.get(7)!, l10n), 'waiting in barrier #2');
        live.apply(ev({ event: 'blocked', rank: 8, in: 'all_reduce' }));
        assert.equal(liveText(live.get(8)!, l10n), 'waiting in all_reduce');
        // Shown paused while a peer is stopped.
        live.apply(ev({ event: 'stopped', rank: 1, reason: 'pause', file: '/w/model.py', line: 90, function: 'forward', waiting: 'all_reduce', seq: 6, group: '0' }));
        assert.equal(liveText(live.get(1)!, l10n), 'paused at model.py:90 in forward, waiting in all_reduce #6 (group 0)');
        assert.equal(stateKey(live.get(1)!), 'paused:pause:/w/model.py:90:all_reduce#6@0');
        live.apply(ev({ event: 'stopped', rank: 2, reason: 'pause', file: null, line: null, function: null, waiting: 'all_reduce', seq: 6, group: '1' }));
        assert.equal(liveText(live.get(2)!, l10n), 'paused, waiting in all_reduce #6 (group 1)');
        // Stopped for real once the collective returned: the number goes with it.
        live.apply(ev({ event: 'stopped', rank: 1, reason: 'pause', file: '/w/model.py', line: 91, function: 'forward' }));
        assert.deepEqual(live.get(1), { state: 'paused', reason: 'pause', file: '/w/model.py', line: 91, function: 'forward' });
        const j = job(8);
        const row = rankRow(j.ranks[5], j, undefined, live.get(5), l10n);
        assert.deepEqual([row.text, row.icon, row.word], ['waiting in all_reduce #1204 (group 0)', 'watch', 'waiting']);
    });

    it('words a rank row: live state over the scan\'s, a raised rank from the scan too', () => {
        const j = readJobs({
            jobs: [{ id: 'J', source: 'registry', ranks: [
                { pid: 1, rank: 0, state: 'running' },
                { pid: 2, rank: 1, state: 'raised', raised: { exception: 'KeyError', message: "'x'", file: '/w/data.py', line: 12, function: 'load' } },
            ] }],
        }).jobs[0];
        const live = new LiveRanks();
        assert.equal(rankRow(j.ranks[0], j, undefined, undefined, l10n).text, 'running');
        assert.equal(rankRow(j.ranks[0], j, 'paused', undefined, l10n).text, 'paused');
        live.apply(ev({ event: 'stopped', rank: 0, reason: 'step', file: '/w/train.py', line: 31, function: 'main' }));
        const row = rankRow(j.ranks[0], j, 'paused', live.get(0), l10n);
        assert.deepEqual([row.text, row.icon, row.word], ['paused at train.py:31 in main (step)', 'debug-pause', 'paused']);
        const raised = rankRow(j.ranks[1], j, undefined, undefined, l10n);
        assert.deepEqual([raised.text, raised.icon], ['raised KeyError at data.py:12', 'error']);
    });
});

describe('core/rankTree', () => {
    it('shows a small job\'s ranks as they are', () => {
        const j = job(8);
        const tree = rankTree(rows(j, new LiveRanks()));
        assert.deepEqual(tree.map((n) => n.kind), Array(8).fill('rank'));
    });

    it('keeps 256 ranks usable: a few dozen rows per level, ranges by state, every rank reachable, fast', () => {
        const j = job(256);
        const live = new LiveRanks();
        const t0 = process.hrtime.bigint();
        // Every rank reports (as a group step makes them), then some move on.
        for (let r = 0; r < 256; r++) live.apply(ev({ event: 'continued', rank: r, job: 'J' }));
        for (let r = 128; r < 256; r++) live.apply(ev({ event: 'stopped', rank: r, reason: 'step', file: '/w/train.py', line: 31, function: 'main', job: 'J' }));
        live.apply(ev({ event: 'blocked', rank: 200, in: 'all_reduce', job: 'J' }));
        live.apply(ev({ event: 'raised', rank: 7, pid: 9, exception: 'ValueError', message: 'nan', file: '/w/model.py', line: 88, function: 'forward', job: 'J' }));
        const tree = rankTree(rows(j, live));
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        console.log(`      256 ranks: ${tree.length} top rows, events + rows + tree in ${ms.toFixed(1)} ms`);
        assert.ok(tree.length <= MAX_ROWS, `${tree.length} top rows`);
        assert.ok(widest(tree) <= MAX_ROWS);
        assert.deepEqual(leaves(tree), Array.from({ length: 256 }, (_, r) => r));
        assert.ok(ms < 500, `${ms} ms`);
        const labels = tree.map((n) => (n.kind === 'group' ? `${n.label} · ${n.description}` : `rank ${n.row.rank} · ${n.row.text}`));
        assert.deepEqual(labels, [
            'ranks 0-6 · running (7)',
            'rank 7 · raised ValueError at model.py:88',
            'ranks 8-127 · running (120)',
            'ranks 128-199 · paused at train.py:31 in main (step) (72)',
            'rank 200 · waiting in all_reduce',
            'ranks 201-255 · paused at train.py:31 in main (step) (55)',
        ]);
        const big = tree[2];
        assert.equal(big.kind, 'group');
        assert.deepEqual(ranksOf(big), Array.from({ length: 120 }, (_, i) => i + 8));
    });

    it('groups per node when the ranks run on several hosts', () => {
        const j = job(256, 8);
        const tree = rankTree(rows(j, new LiveRanks()));
        assert.equal(tree.length, 32);
        const first = tree[0];
        assert.ok(first.kind === 'group');
        assert.equal(first.label, 'node0');
        assert.equal(first.description, 'ranks 0-7 · 8 running');
        assert.equal(first.children.length, 8);
        assert.deepEqual(leaves(tree).length, 256);
    });

    it('shows a small multi-node job by node too (4 ranks on 2 hosts: 2 node rows)', () => {
        const j = job(4, 2);
        const tree = rankTree(rows(j, new LiveRanks()));
        assert.deepEqual(tree.map((n) => (n.kind === 'group' ? [n.label, n.description] : n.row.rank)), [
            ['node0', 'ranks 0,1 · 2 running'],
            ['node1', 'ranks 2,3 · 2 running'],
        ]);
        assert.deepEqual(leaves(tree), [0, 1, 2, 3]);
        // One host: the ranks as they are.
        assert.deepEqual(rankTree(rows(job(4, 4), new LiveRanks())).map((n) => n.kind), ['rank', 'rank', 'rank', 'rank']);
    });

    it('falls back to states, then to chunks, when ranges alone would be too many', () => {
        const j = job(256);
        const live = new LiveRanks();
        // Every other rank paused: 256 one-rank ranges, two states.
        for (let r = 0; r < 256; r += 2) live.apply(ev({ event: 'stopped', rank: r, reason: 'breakpoint', file: '/w/a.py', line: 1, function: 'f' }));
        const byState = rankTree(rows(j, live));
        assert.equal(byState.length, 2);
        assert.ok(widest(byState) <= MAX_ROWS);
        // Every rank at its own line: 256 states.
        const scattered = new LiveRanks();
        for (let r = 0; r < 256; r++) scattered.apply(ev({ event: 'stopped', rank: r, reason: 'step', file: '/w/a.py', line: r + 1, function: 'f' }));
        const chunks = rankTree(rows(j, scattered));
        assert.ok(chunks.length <= MAX_ROWS && chunks.length > 1);
        assert.ok(widest(chunks) <= MAX_ROWS);
        assert.deepEqual(leaves(chunks), Array.from({ length: 256 }, (_, r) => r));
        const ids = new Set<string>();
        const walk = (nodes: RankTreeNode[]): void => nodes.forEach((n) => n.kind === 'group' && (assert.ok(!ids.has(n.id), n.id), ids.add(n.id), walk(n.children)));
        walk(chunks);
    });

    it('words ranges and counts', () => {
        assert.equal(rangeLabel([3]), 'rank 3');
        assert.equal(rangeLabel([0, 1, 2, 3, 8]), 'ranks 0-3,8');
        const many = Array.from({ length: 100 }, (_, i) => i * 2);
        assert.match(rangeLabel(many), /^ranks 0,2,4,.*,…$/);
        const r = (rank: number, word: string): RankRow => ({ rank, node: null, key: word, word, text: word, icon: '' });
        assert.equal(stateCounts([r(0, 'running'), r(1, 'paused'), r(2, 'running')]), '2 running · 1 paused');
    });
});

describe('core/rankTree grouped by a parallel dimension', () => {
    /** `n` ranks, 8 to a host, laid out dp × tp (tp fastest, size `tp`) as a DeviceMesh reports them; `missing` report none yet. */
    function meshJob(n: number, tp: number, missing: readonly number[] = []): JobInfo {
        const ranks = Array.from({ length: n }, (_, r) => ({
            pid: 1000 + r, rank: r, local_rank: r % 8, world_size: n, host: `node${Math.floor(r / 8)}`, state: 'running',
            coords: missing.includes(r) ? null : { dp: Math.floor(r / tp), tp: r % tp },
        }));
        return readJobs({ jobs: [{ id: 'M', source: 'registry', launcher: 'torchrun', world_size: n, ranks }] }).jobs[0];
    }
    const labels = (nodes: RankTreeNode[]): string[] => nodes.map((n) => (n.kind === 'group' ? `${n.label} · ${n.description}` : `rank ${n.row.rank}`));

    it('puts the ranks under a row per index (tp 0, tp 1, …), ranks without coordinates last', () => {
        const j = meshJob(8, 4, [7]);
        assert.deepEqual(j.ranks[5].coords, { dp: 1, tp: 1 });
        const tree = rankTree(rows(j, new LiveRanks()), MAX_ROWS, 'tp');
        assert.deepEqual(labels(tree), [
            'tp 0 · ranks 0,4 · 2 running',
            'tp 1 · ranks 1,5 · 2 running',
            'tp 2 · ranks 2,6 · 2 running',
            'tp 3 · rank 3 · 1 running',
            'tp ? · rank 7 · 1 running',
        ]);
        assert.deepEqual(tree.map((n) => (n.kind === 'group' ? n.id : '')), ['dim:tp=0', 'dim:tp=1', 'dim:tp=2', 'dim:tp=3', 'dim:tp=?']);
        assert.deepEqual(leaves(tree).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
        // A dimension no rank reports: the usual tree (by node here: one host, as they are).
        assert.deepEqual(labels(rankTree(rows(j, new LiveRanks()), MAX_ROWS, 'pp')), labels(rankTree(rows(j, new LiveRanks()))));
    });

    it('keeps 1,024 ranks by dp readable: ranges of indexes past twice the row limit, every rank reachable', () => {
        const j = meshJob(1024, 8);
        const tree = rankTree(rows(j, new LiveRanks()), MAX_ROWS, 'dp');
        assert.equal(tree.length, 43, '128 dp indexes, 3 to a row');
        assert.equal(labels(tree)[0], 'dp 0-2 · ranks 0-23 · 24 running');
        assert.ok(widest(tree) <= 2 * MAX_ROWS);
        assert.equal(new Set(leaves(tree)).size, 1024);
        // By tp: 8 rows of 128 ranks each, those split into chunks below.
        const byTp = rankTree(rows(j, new LiveRanks()), MAX_ROWS, 'tp');
        assert.equal(byTp.length, 8);
        assert.ok(byTp[3].kind === 'group' && byTp[3].label === 'tp 3' && byTp[3].ranks.length === 128 && byTp[3].ranks.every((r) => r % 8 === 3));
        assert.ok(widest(byTp) <= 2 * MAX_ROWS);
    });

    it("lets Training Jobs' rows follow the grouping, and re-render a rank row when its coordinates arrive", () => {
        const j = meshJob(8, 2);
        const source = (groupBy?: string) => ({ rows: (job: JobInfo) => rows(job, new LiveRanks()), session: () => undefined, jobExtra: () => '', groupBy: () => groupBy });
        const grouped = jobTreeRows([j], source('tp'));
        assert.deepEqual(grouped.filter((r) => r.kind === 'group').map((r) => r.id), ['group:M:dim:tp=0', 'group:M:dim:tp=1']);
        assert.equal(grouped.find((r) => r.kind === 'rank' && r.rank.rank === 3)?.parent, 'group:M:dim:tp=1');
        assert.deepEqual(jobTreeRows([j], source()).filter((r) => r.kind === 'group'), [], 'no grouping: 8 ranks on one host as they are');
        const before = jobTreeRows([meshJob(8, 2, [3])], source()).find((r) => r.id === 'rank:M:3')?.signature;
        const after = jobTreeRows([j], source()).find((r) => r.id === 'rank:M:3')?.signature;
        assert.notEqual(before, after);
    });
});

describe('core/rankFilter', () => {
    const row: RankRow = { rank: 5, node: 'node1', key: 'blocked:all_reduce', word: 'waiting', text: 'waiting in all_reduce', icon: 'watch' };

    it('keeps rows by rank spec (read by the server) or by text', async () => {
        const server = async <T>(_c: string, arg: unknown): Promise<T> => {
            const spec = (arg as { spec: string }).spec;
            if (spec === '0-7') return { rankSpec: '0-7', ranks: [0, 1, 2, 3, 4, 5, 6, 7], arm: false } as T;
            if (spec === 'all') return { rankSpec: 'all', ranks: null, arm: false } as T;
            return { error: { message: 'not ranks' } } as T;
        };
        const byRanks = await readFilter(' 0-7 ', server);
        assert.deepEqual([byRanks?.label, [...(byRanks?.ranks ?? [])].length], ['0-7', 8]);
        assert.equal(matchesFilter(row, byRanks), true);
        assert.equal(matchesFilter({ ...row, rank: 9 }, byRanks), false);
        const byText = await readFilter('ALL_reduce', server);
        assert.deepEqual(byText, { label: 'ALL_reduce', text: 'ALL_reduce' });
        assert.equal(matchesFilter(row, byText), true);
        assert.equal(matchesFilter(row, { label: 'node1', text: 'node1' }), true);
        assert.equal(matchesFilter(row, { label: 'paused', text: 'paused' }), false);
        assert.equal(await readFilter('all', server), undefined);
        assert.equal(await readFilter('  ', server), undefined);
        const down = async <T>(): Promise<T> => {
            throw new Error('no server');
        };
        assert.deepEqual([...((await readFilter('1,3', down))?.ranks ?? [])], [1, 3]);
        assert.deepEqual(await readFilter('0-3', down), { label: '0-3', text: '0-3' });
    });
});
