import * as assert from 'node:assert/strict';
import { byNode, formatSpec, isPlanError, parseSpec, planTitle, presets, rankLabel, specForSelection, type PlanRank } from '../../../extension/src/core/ranks';

function job(nodes: number, perNode: number): PlanRank[] {
    const out: PlanRank[] = [];
    for (let n = 0; n < nodes; n++) for (let l = 0; l < perNode; l++) out.push({ rank: n * perNode + l, node_rank: n, local_rank: l });
    return out;
}

describe('core/ranks', () => {
    it('labels a rank with its node and local rank', () => {
        assert.equal(rankLabel({ rank: 2, node_rank: 0, local_rank: 2 }), 'rank 2 · node 0 · local 2');
        assert.equal(rankLabel({ rank: 5 }), 'rank 5');
        assert.equal(rankLabel({ rank: 5, node_rank: null, local_rank: 1 }), 'rank 5 · local 1');
    });

    it('formats specs compactly', () => {
        assert.equal(formatSpec([0, 1, 2, 3, 8]), '0-3,8');
        assert.equal(formatSpec([3, 1]), '1,3');
        assert.equal(formatSpec([4, 5]), '4,5');
        assert.equal(formatSpec([]), '');
        assert.equal(formatSpec([1, 1, 2, 3]), '1-3');
    });

    it('parses specs against the job', () => {
        const ranks = job(2, 4);
        assert.deepEqual(parseSpec('1,3', ranks), [1, 3]);
        assert.deepEqual(parseSpec('0-3,8', []), [0, 1, 2, 3, 8]);
        assert.deepEqual(parseSpec('0-3,100', ranks), [0, 1, 2, 3]);
        assert.deepEqual(parseSpec('all', ranks), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert.deepEqual(parseSpec('local0', ranks), [0, 4]);
        assert.deepEqual(parseSpec(' 2 , 2 ', ranks), [2]);
        assert.equal(parseSpec('3-1', ranks), undefined);
        assert.equal(parseSpec('rank 1', ranks), undefined);
        assert.equal(parseSpec('', ranks), undefined);
        assert.equal(parseSpec('all', []), undefined);
        assert.equal(parseSpec('100', ranks), undefined);
    });

    it('round-trips format and parse for many ranks', () => {
        const ranks = job(64, 8);
        const pick = ranks.filter((r) => r.rank % 3 === 0 || (r.rank > 100 && r.rank < 200)).map((r) => r.rank);
        assert.deepEqual(parseSpec(formatSpec(pick), ranks), pick);
    });

    it('offers presets: all, rank 0, and local 0 of each node when there are several nodes', () => {
        assert.deepEqual(presets(job(1, 2)).map((p) => p.id), ['all', 'rank0']);
        const multi = presets(job(3, 2));
        assert.deepEqual(multi.map((p) => p.id), ['all', 'rank0', 'local0']);
        assert.deepEqual(multi[2].ranks, [0, 2, 4]);
    });

    it('sends a preset spec when the selection is exactly that preset', () => {
        const ranks = job(2, 2);
        assert.equal(specForSelection([0, 1, 2, 3], ranks), 'all');
        assert.equal(specForSelection([0, 2], ranks), 'local0');
        assert.equal(specForSelection([0], ranks), '0');
        assert.equal(specForSelection([1, 3], ranks), '1,3');
    });

    it('groups by node and titles plans', () => {
        const groups = byNode(job(2, 3));
        assert.deepEqual([...groups.keys()], [0, 1]);
        assert.equal(groups.get(1)?.length, 3);
        assert.equal(planTitle({ launcher: 'torchrun', entry: { kind: 'script', target: 'src/train.py' } }), 'torchrun train.py');
        assert.equal(planTitle({ launcher: 'deepspeed', entry: null }), 'deepspeed');
        assert.ok(isPlanError({ error: { message: 'x' } }));
        assert.ok(!isPlanError({ launcher: 'torchrun' }));
    });
});
