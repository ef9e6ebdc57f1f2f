import * as assert from 'node:assert/strict';
import { attachItems, jobCoords, nodeNumbers, planRanks } from '../../../../extension/src/core/attachItems';
import type { RankInfo } from '../../../../extension/src/core/jobList';

const rank = (r: number, extra: Partial<RankInfo> = {}): RankInfo => ({
    pid: 1000 + r,
    rank: r,
    localRank: r % 8,
    worldSize: 16,
    host: r < 8 ? 'gpu-a' : 'gpu-b',
    port: null,
    address: null,
    state: 'running',
    cpu: null,
    rss: null,
    gpu: null,
    armed: false,
    raised: null,
    // 16 ranks as dp 2 × tp 8 (tp fastest).
    coords: { dp: Math.floor(r / 8), tp: r % 8 },
    ...extra,
});
const RANKS = Array.from({ length: 16 }, (_x, r) => rank(r));

describe('Attach to which ranks? rows', () => {
    it('word a rank as the launch pick does: rank, node, coordinates; local rank, pid and port after', () => {
        const items = attachItems([RANKS[13], RANKS[2]], RANKS);
        assert.deepEqual(
            items.map((i) => [i.label, i.description]),
            [
                ['rank 13 · node 1 · dp 1 · tp 5', 'local 5 · pid 1013'],
                ['rank 2 · node 0 · dp 0 · tp 2', 'local 2 · pid 1002'],
            ],
        );
        const listening = attachItems([rank(3, { port: 5678, coords: null })], RANKS)[0];
        assert.equal(listening.label, 'rank 3 · node 0');
        assert.equal(listening.description, 'local 3 · pid 1003 · 127.0.0.1:5678');
    });

    it('numbers nodes by the ranks they hold, and names none when a host is unknown', () => {
        assert.deepEqual([...(nodeNumbers([RANKS[9], RANKS[0]]) ?? [])], [['gpu-a', 0], ['gpu-b', 1]]);
        assert.equal(nodeNumbers([rank(0, { host: null })]), null);
        assert.deepEqual(planRanks([RANKS[9]])[0], { rank: 9, node_rank: 0, local_rank: 1 });
        assert.equal(attachItems([rank(0, { host: null, coords: null })], [rank(0, { host: null })])[0].label, 'rank 0');
    });

    it("give the checker the job's coordinates only when every rank reports them", () => {
        const coords = jobCoords(RANKS, 16);
        assert.deepEqual(coords?.dims, { dp: 2, tp: 8 });
        assert.deepEqual(coords?.ranks[13], { dp: 1, tp: 5 });
        assert.equal(jobCoords(RANKS.slice(0, 15), 16), null, 'rank 15 not seen yet');
        assert.equal(jobCoords([...RANKS.slice(0, 15), rank(15, { coords: null })], 16), null);
        assert.equal(jobCoords([...RANKS.slice(0, 15), rank(15, { coords: { dp: 1 } })], 16), null, 'tp missing');
        assert.equal(jobCoords(RANKS.map((r) => ({ ...r, coords: null })), 16), null);
    });
});
