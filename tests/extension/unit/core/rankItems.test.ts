import * as assert from 'node:assert/strict';
import { readPlanCoords, type PlanCoords } from '../../../../extension/src/core/coords';
import { filtersItems, rankItems } from '../../../../extension/src/core/rankItems';
import { presets, specForSelection, withGroups, type PlanRank, type Preset } from '../../../../extension/src/core/ranks';
import { l10n } from '../debug/fakes';

/** Megatron tp 2 × dp 2 × pp 2 over 2 nodes of 4, as `rankdebug plan --json` gives it (order tp-cp-dp-pp). */
const COORDS = readPlanCoords({
    dims: { tp: 2, dp: 2, pp: 2 },
    order: ['tp', 'cp', 'dp', 'pp'],
    world_size: 8,
    source: 'megatron',
    read: [
        { name: '--tensor-model-parallel-size', value: '2', file: null, line: 1, column: 74 },
        { name: '--pipeline-model-parallel-size', value: '2', file: null, line: 1, column: 107 },
    ],
    ranks: Array.from({ length: 8 }, (_, r) => ({ tp: r % 2, dp: Math.floor(r / 2) % 2, pp: Math.floor(r / 4) })),
}) as PlanCoords;
const RANKS: PlanRank[] = Array.from({ length: 8 }, (_, r) => ({ rank: r, node_rank: Math.floor(r / 4), local_rank: r % 4 }));
const ALL = [0, 1, 2, 3, 4, 5, 6, 7];

/** The presets as the server resolves them for this layout (tests/lsp/test_check_selectors.py checks those answers). */
function choices(): Preset[] {
    return withGroups(
        presets({ all: ALL, rank0: [0], local0: [0, 4] }, 2),
        [
            { dim: 'pp', spec: 'dp=0 tp=0', ranks: [0, 4] },
            { dim: 'dp', spec: 'pp=0 tp=0', ranks: [0, 2] },
            { dim: 'tp', spec: 'pp=0 dp=0', ranks: [0, 1] },
        ],
        8,
    );
}

describe('core/rankItems with parallel coordinates', () => {
    it('labels each rank with its coordinates, outermost first, its local rank in the description', () => {
        const items = rankItems(RANKS, [], false, l10n, COORDS);
        const rank5 = items.find((i) => i.rank === 5);
        assert.equal(rank5?.label, 'rank 5 · node 1 · pp 1 · dp 0 · tp 1');
        assert.equal(rank5?.description, 'local 1');
        // Without coordinates the rows are as before.
        assert.equal(rankItems(RANKS, [], false, l10n).find((i) => i.rank === 5)?.label, 'rank 5 · node 1 · local 1');
        // A plan whose coordinates cover fewer ranks: the rest show none.
        const short = rankItems(RANKS, [], false, l10n, { ...COORDS, ranks: COORDS.ranks.slice(0, 4) });
        assert.equal(short.find((i) => i.rank === 6)?.label, 'rank 6 · node 1 · local 2');
    });

    it("offers a preset per dimension's group under a separator that names their source", () => {
        const items = rankItems(RANKS, choices(), true, l10n, COORDS);
        assert.deepEqual(
            items.slice(0, 10).map((i) => `${i.kind}:${i.label}${i.description ? ` (${i.description})` : ''}`),
            [
                'separator:Presets',
                'preset:All ranks (0-7)',
                'preset:Rank 0 (0)',
                'preset:Local rank 0 of each node (local0)',
                'armOnly:No rank now — arm every rank (attach, evaluate or read stacks later from Training Jobs)',
                'separator:coordinates (megatron)',
                'preset:First rank of each pipeline stage (dp=0 tp=0 · 0,4)',
                'preset:One data-parallel group (pp=0 tp=0 · 0,2)',
                'preset:One tensor-parallel group (pp=0 dp=0 · 0,1)',
                'separator:node 0 · 0-3',
            ],
        );
        // A selection that is exactly a group is sent as its selector, which the server resolves again.
        assert.equal(specForSelection([0, 4], choices()), 'local0', 'the first preset with those ranks names them');
        assert.equal(specForSelection([0, 2], choices()), 'pp=0 tp=0');
    });

    it("keeps only groups of more than one rank and fewer than all, each set once, other dimensions' words for the rest", () => {
        const fixed = presets({ all: [0, 1, 2, 3], rank0: [0] }, 1);
        const got = withGroups(
            fixed,
            [
                { dim: 'tp', spec: 'dp=0', ranks: [0, 1, 2, 3] },
                { dim: 'dp', spec: 'tp=0', ranks: [0] },
                { dim: 'ep', spec: 'tp=0 dp=0', ranks: null },
                { dim: 'cp', spec: 'x=0', ranks: [0, 2] },
                { dim: 'xx', spec: 'y=0', ranks: [0, 2] },
                { dim: 'moe', spec: 'z=0', ranks: [1, 3] },
            ],
            4,
        );
        assert.deepEqual(got.map((p) => `${p.id}:${p.dim ?? ''}`), ['all:', 'rank0:', 'group:cp', 'group:moe']);
        const labels = rankItems([{ rank: 0 }], got, false, l10n, { ...COORDS, ranks: [{ cp: 0 }] }).filter((i) => i.kind === 'preset').map((i) => i.label);
        assert.deepEqual(labels, ['All ranks', 'Rank 0', 'One context-parallel group', 'One moe group']);
    });

    it('lets `tp 1` or `pp 0` filter the rows, while a selector goes to the server', () => {
        const items = rankItems(RANKS, choices(), true, l10n, COORDS);
        assert.equal(filtersItems(items, 'tp 1'), true);
        assert.equal(filtersItems(items, 'PP 0'), true);
        assert.equal(filtersItems(items, 'local 3'), true, 'the local rank is still matched, in the description');
        for (const typed of ['tp=0', 'pp=1 tp=0-1', 'dp=0 and tp=0', 'pp=last']) assert.equal(filtersItems(items, typed), false, typed);
    });
});
