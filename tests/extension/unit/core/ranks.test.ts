import * as assert from 'node:assert/strict';
import { filtersItems, rankItems } from '../../../../extension/src/core/rankItems';
import { byNode, formatSpec, isPlanError, plainRankList, presets, rankLabel, specForSelection, titleOf, type PlanRank } from '../../../../extension/src/core/ranks';
import { l10n } from '../debug/fakes';

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

    it('offers the presets the server resolved: all, rank 0, and local 0 only with several nodes', () => {
        assert.deepEqual(presets({ all: [0, 1], rank0: [0], local0: [0] }, 1).map((p) => p.id), ['all', 'rank0']);
        const multi = presets({ all: [0, 1, 2, 3, 4, 5], rank0: [0], local0: [0, 2, 4] }, 3);
        assert.deepEqual(multi.map((p) => p.id), ['all', 'rank0', 'local0']);
        assert.deepEqual(multi[2], { id: 'local0', spec: 'local0', ranks: [0, 2, 4] });
        // A spec the server refused (missing) or could not resolve (null) is no preset.
        assert.deepEqual(presets({ all: [0, 1], local0: null }, 2).map((p) => p.id), ['all']);
    });

    it('sends a preset spec when the selection is exactly that preset', () => {
        const choices = presets({ all: [0, 1, 2, 3], rank0: [0], local0: [0, 2] }, 2);
        assert.equal(specForSelection([0, 1, 2, 3], choices), 'all');
        assert.equal(specForSelection([0, 2], choices), 'local0');
        assert.equal(specForSelection([0], choices), '0');
        assert.equal(specForSelection([1, 3], choices), '1,3');
        assert.equal(specForSelection([0, 1, 2, 3], []), '0-3');
    });

    it('groups by node', () => {
        const groups = byNode(job(2, 3));
        assert.deepEqual([...groups.keys()], [0, 1]);
        assert.equal(groups.get(1)?.length, 3);
        assert.ok(isPlanError({ error: { message: 'x' } }));
        assert.ok(!isPlanError({ launcher: 'torchrun' }));
    });

    it("titles a plan with the server's title, else as the server would", () => {
        assert.equal(titleOf({ launcher: 'torchrun', title: 'train.py', entry: { kind: 'script', target: 'src/other.py' } }), 'train.py');
        assert.equal(titleOf({ launcher: 'torchrun', entry: { kind: 'script', target: 'src/train.py' } }), 'train.py');
        assert.equal(titleOf({ launcher: 'torchrun', entry: { kind: 'module', target: 'pkg.train' } }), 'pkg.train');
        assert.equal(titleOf({ launcher: 'deepspeed', entry: null }), 'deepspeed');
    });

    it('reads only plain rank lists without a server', () => {
        assert.deepEqual(plainRankList('3, 1,3'), [1, 3]);
        assert.deepEqual(plainRankList('0'), [0]);
        for (const spec of ['0-3', 'all', 'local0', '', '1,,2', 'x']) assert.equal(plainRankList(spec), undefined, spec);
    });

    it('lays out the quick-pick: presets, a separator per node with its ranks, arming last', () => {
        const one = rankItems(job(1, 4), presets({ all: [0, 1, 2, 3], rank0: [0] }, 1), false, l10n);
        assert.deepEqual(
            one.map((i) => `${i.kind}:${i.label}`),
            ['separator:Presets', 'preset:All ranks', 'preset:Rank 0', 'separator:Ranks', 'rank:rank 0 · node 0 · local 0', 'rank:rank 1 · node 0 · local 1', 'rank:rank 2 · node 0 · local 2', 'rank:rank 3 · node 0 · local 3'],
        );
        const two = rankItems(job(2, 2), [], true, l10n);
        assert.deepEqual(
            two.map((i) => `${i.kind}:${i.label}`),
            ['separator:Presets', 'armOnly:No rank now — arm every rank', 'separator:node 0 · 0,1', 'rank:rank 0 · node 0 · local 0', 'rank:rank 1 · node 0 · local 1', 'separator:node 1 · 2,3', 'rank:rank 2 · node 1 · local 0', 'rank:rank 3 · node 1 · local 1', 'separator:Later', 'arm:Arm every rank'],
        );
        assert.equal(filtersItems(two, 'NODE 1'), true);
        assert.equal(filtersItems(two, 'node 1 ·'), true, 'a separator is no item, its rank labels are');
        assert.equal(filtersItems(two, '1,3'), false);
    });
});

describe('core/ranks formatSpec against ranks.compact', () => {
    it('writes every spec as the Python side does', () => {
        // Written by scripts/gen_wire.py from rankdebug.ranks.compact.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const cases = require('../fixtures/rank-specs.json') as { ranks: number[]; spec: string }[];
        assert.ok(cases.length >= 10);
        for (const c of cases) assert.equal(formatSpec(c.ranks), c.spec, JSON.stringify(c.ranks.slice(0, 8)));
    });
});
