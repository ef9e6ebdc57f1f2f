import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { coordText, exampleSelector, groupPresets, layoutText, layoutTitle, readCoords, readPlanCoords, readText, reportedDims, shownDims } from '../../../../extension/src/core/coords';
import { l10n } from '../debug/fakes';

const ROOT = path.resolve(__dirname, '../../..');

/** `rankdebug plan --json` of a command, run by the project's own interpreter. */
function plan(...argv: string[]): Record<string, unknown> {
    const out = execFileSync(path.join(ROOT, '.venv/bin/python'), ['-m', 'rankdebug', 'plan', '--json', '--', ...argv], { cwd: ROOT, encoding: 'utf8' });
    return JSON.parse(out) as Record<string, unknown>;
}

describe('core/coords', () => {
    it("reads the coordinates `rankdebug plan` gives a Megatron command, outermost first, and a preset per dimension's group", () => {
        const p = plan('torchrun', '--nproc_per_node', '8', 'pretrain_gpt.py', '--tensor-model-parallel-size', '2', '--pipeline-model-parallel-size', '2');
        const coords = readPlanCoords(p.coords);
        assert.ok(coords);
        assert.equal(coords.source, 'megatron');
        assert.equal(coords.ranks.length, 8);
        // Megatron writes its order fastest first (tp-cp-dp-pp): rows show pp, then dp, then tp.
        assert.deepEqual(shownDims(coords), ['pp', 'dp', 'tp']);
        assert.equal(coordText(coords.ranks[5], shownDims(coords)), 'pp 1 · dp 0 · tp 1');
        assert.equal(layoutText(coords), 'pp 2 × dp 2 × tp 2');
        assert.equal(readText(coords), '--tensor-model-parallel-size 2, --pipeline-model-parallel-size 2');
        assert.equal(layoutTitle(coords, l10n), 'pp 2 × dp 2 × tp 2 from --tensor-model-parallel-size 2, --pipeline-model-parallel-size 2');
        assert.deepEqual(groupPresets(coords), [
            { dim: 'pp', spec: 'dp=0 tp=0' },
            { dim: 'dp', spec: 'pp=0 tp=0' },
            { dim: 'tp', spec: 'pp=0 dp=0' },
        ]);
        assert.equal(exampleSelector(shownDims(coords)), 'pp=last tp=0');
        assert.equal(readPlanCoords(plan('torchrun', '--nproc_per_node', '2', 'train.py').coords), null, 'a plain command has none');
    });

    it("reads torchtitan's TOML: the file and its lines said, dimensions of size 1 left out, a view after the grid and without a preset", () => {
        const toml = path.join(ROOT, 'tests/command/coords_data/torchtitan_llama3_70b.toml');
        const coords = readPlanCoords(plan('torchrun', '--nproc_per_node=64', '-m', 'torchtitan.train', '--job.config_file', toml).coords);
        assert.ok(coords);
        assert.equal(coords.dims.pp, 1);
        assert.deepEqual(shownDims(coords), ['dp_shard', 'tp', 'dp']);
        assert.equal(readText(coords), 'torchtitan_llama3_70b.toml:40-44');
        assert.equal(coordText(coords.ranks[13], shownDims(coords)), 'dp_shard 1 · tp 5 · dp 1');
        assert.deepEqual(groupPresets(coords), [
            { dim: 'dp_shard', spec: 'tp=0' },
            { dim: 'tp', spec: 'dp_shard=0' },
        ]);
    });

    it('leaves out dimensions of size 1 from the presets, and offers none for a single dimension', () => {
        assert.deepEqual(groupPresets({ dims: { tp: 4, dp: 1, pp: 2 }, order: ['tp', 'dp', 'pp'] }), [
            { dim: 'pp', spec: 'tp=0' },
            { dim: 'tp', spec: 'pp=0' },
        ]);
        assert.deepEqual(groupPresets({ dims: { tp: 8 }, order: ['tp'] }), [], 'one tp group is every rank');
        assert.deepEqual(groupPresets({ dims: { tp: 2, dp: 2 }, order: [] }).map((g) => g.spec), ['dp=0', 'tp=0'], 'no order said: every dimension is the grid');
        // A view (torchtitan's dp over dp_replicate × dp_shard) comes after the grid's own dimensions.
        assert.deepEqual(shownDims({ dims: { tp: 2, dp_shard: 2, dp: 2 }, order: ['tp', 'cp', 'dp_shard'] }), ['dp_shard', 'tp', 'dp']);
        assert.equal(exampleSelector(['tp']), 'tp=0');
        assert.equal(exampleSelector([]), 'tp=0');
    });

    it('reads coordinates defensively: a bad value, name or shape is none at all', () => {
        assert.deepEqual(Object.keys(readCoords({ pp: 0, dp: 1, tp: 3 }) ?? {}), ['pp', 'dp', 'tp'], 'the order given is kept');
        for (const bad of [null, 3, 'tp=0', [0, 1], {}, { tp: -1 }, { tp: 1.5 }, { tp: '1' }, { 'tp x': 0 }, { '': 0 }, Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`d${i}`, 0]))]) {
            assert.equal(readCoords(bad), null, JSON.stringify(bad));
        }
        const good = { dims: { tp: 2 }, order: ['tp'], world_size: 2, source: 'megatron', read: [{ name: '--tensor-model-parallel-size', value: '2', file: null, line: 1 }, 'junk'], ranks: [{ tp: 0 }, { tp: 1 }] };
        assert.equal(readPlanCoords(good)?.read.length, 1);
        for (const bad of [null, [], { ...good, dims: { tp: 0 } }, { ...good, ranks: [{ tp: 0 }, 'x'] }, { ...good, ranks: {} }, { ...good, dims: null }]) {
            assert.equal(readPlanCoords(bad), null, JSON.stringify(bad));
        }
        assert.deepEqual(readPlanCoords({ ...good, read: null, order: 'tp' })?.order, []);
        assert.equal(readText({ ...readPlanCoords(good)!, read: [] }), 'megatron', 'the framework when nothing says where');
    });

    it('words a rank and lists the dimensions a job reports', () => {
        assert.equal(coordText({ dp: 1, tp: 3 }), 'dp 1 · tp 3');
        assert.equal(coordText(null), '');
        assert.equal(coordText({ dp: 1 }, ['pp', 'dp']), 'dp 1', 'a dimension the rank lacks is left out');
        assert.deepEqual(reportedDims([{ coords: null }, { coords: { dp: 0, tp: 1 } }, {}, { coords: { dp: 1, ep: 0, tp: 0 } }]), ['dp', 'tp', 'ep']);
        assert.deepEqual(reportedDims([]), []);
    });
});

describe('core/coords readCoords against coords_value.valid', () => {
    it('takes and refuses the coordinates the job side does', () => {
        // Written by scripts/gen_wire.py from rankdebug.jobs.coords_value.valid.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const cases = require('../fixtures/coords-cases.json') as { value: unknown; valid: Record<string, number> | null }[];
        assert.ok(cases.length >= 20);
        for (const c of cases) assert.deepEqual(readCoords(c.value), c.valid, JSON.stringify(c.value));
    });
});
