/**
 * Hundreds of ranks (issue 18): what the extension computes to open the rank quick-pick with
 * 1,024 ranks and to render and refresh Training Jobs with 256, timed, and still readable.
 * `benchmarks/scale.py` runs this file with RANKDEBUG_SCALE_JOBS naming the answer of a real
 * `rankdebug jobs --json` over its 256 armed ranks, and reads the `SCALE {...}` line it prints.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { groupPresets, readPlanCoords, type PlanCoords } from '../../../../extension/src/core/coords';
import { parseEvent, type LaunchEvent } from '../../../../extension/src/core/events';
import { readJobs, type JobInfo } from '../../../../extension/src/core/jobList';
import { jobTreeRows, type JobTreeRow } from '../../../../extension/src/core/jobTree';
import { LiveRanks } from '../../../../extension/src/core/liveRanks';
import { filtersItems, rankItems } from '../../../../extension/src/core/rankItems';
import { matchesFilter } from '../../../../extension/src/core/rankFilter';
import { rankRow } from '../../../../extension/src/core/rankRow';
import { MAX_ROWS } from '../../../../extension/src/core/rankTree';
import { byNode, formatSpec, presets, specForSelection, withGroups, type PlanRank } from '../../../../extension/src/core/ranks';
import { l10n } from '../debug/fakes';

const figures: Record<string, number | string> = {};

function ms(run: () => unknown, times = 7): number {
    const all: number[] = [];
    for (let i = 0; i < times; i++) {
        const t0 = process.hrtime.bigint();
        run();
        all.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    all.sort((a, b) => a - b);
    return Math.round(all[Math.floor(all.length / 2)] * 100) / 100;
}

/** A `rankdebug jobs --json` answer: one armed registry job of `n` ranks on one host, every field the CLI prints. */
function jobsAnswer(n: number): string {
    const ranks = Array.from({ length: n }, (_, r) => ({
        pid: 40000 + r, rank: r, local_rank: r % 8, world_size: n, host: 'node0', port: null, address: null,
        state: 'running', proc_state: 'sleeping', cpu: 0.4, cpu_time: 1.25, rss: 13 << 20, threads: 2, gpu: null,
        cuda_visible_devices: null, command: ['/venv/bin/python', '/w/many_ranks.py', 'rank'], cwd: '/w', start_time: 1795355184.5,
        armed: true, socket: `/run/user/1000/rankdebug/J/rank-${r}.sock`, raised: null, collective: null,
    }));
    return JSON.stringify({
        host: 'node0', time: 1795355200.8, scan_ms: 55, processes: 3258, warnings: [],
        jobs: [{ id: 'J', source: 'registry', host: 'node0', launcher: 'other', launcher_pid: 4242, command: ['many-ranks'], cwd: '/w', start_time: 1795355182.8, world_size: n, rendezvous: null, run_id: null, armed: true, ranks }],
    });
}

function ev(o: Record<string, unknown>): LaunchEvent {
    const e = parseEvent(JSON.stringify(o));
    assert.ok(e);
    return e;
}

function tree(text: string, live: LiveRanks): { jobs: JobInfo[]; rows: JobTreeRow[] } {
    const jobs = readJobs(JSON.parse(text)).jobs;
    const rows = jobTreeRows(jobs, {
        rows: (job) => job.ranks.map((r) => rankRow(r, job, undefined, live.get(r.rank), l10n)).filter((row) => matchesFilter(row, undefined)),
        session: () => undefined,
        jobExtra: () => '',
    });
    return { jobs, rows };
}

describe('scale: 1,024 ranks in the quick-pick, 256 in Training Jobs', () => {
    after(() => console.log(`      SCALE ${JSON.stringify(figures)}`));

    it('builds the quick-pick of 1,024 ranks (128 nodes of 8) in milliseconds, one separator per node', () => {
        const ranks: PlanRank[] = Array.from({ length: 1024 }, (_, r) => ({ rank: r, node_rank: Math.floor(r / 8), local_rank: r % 8 }));
        const all = ranks.map((r) => r.rank);
        const local0 = all.filter((r) => r % 8 === 0);
        let items = rankItems([], [], true, l10n);
        // What the quick-pick computes before it shows: presets from the server's answers, the items, the remembered selection.
        const opened = ms(() => {
            const choices = presets({ all, rank0: [0], local0 }, byNode(ranks).size);
            items = rankItems(ranks, choices, true, l10n);
            const wanted = new Set([0, 8, 16]);
            return items.filter((i) => i.rank !== undefined && wanted.has(i.rank));
        });
        figures.quickpick_ranks = 1024;
        figures.quickpick_ms = opened;
        const separators = items.filter((i) => i.kind === 'separator');
        assert.equal(separators.length, 1 + 128 + 1, 'presets, a node each, later');
        assert.equal(separators[1].label, 'node 0 · 0-7');
        assert.equal(separators[128].label, 'node 127 · 1016-1023');
        assert.deepEqual(
            items.filter((i) => i.kind === 'preset').map((i) => [i.label, i.description]),
            [['All ranks', '0-1023'], ['Rank 0', '0'], ['Local rank 0 of each node', 'local0']],
        );
        assert.equal(items.filter((i) => i.kind === 'rank').length, 1024);
        assert.ok(opened < 300, `${opened} ms`);
        // Typing: is the text a filter of the items (node 3, local 0) or ranks for the server?
        const perKey = ms(() => ['n', 'no', 'node', 'node 3', 'node 31', '0-3,8'].map((t) => filtersItems(items, t)));
        figures.quickpick_typing_ms = perKey;
        assert.equal(filtersItems(items, 'node 31'), true);
        assert.equal(filtersItems(items, 'local 7'), true);
        assert.equal(filtersItems(items, '0-3,8'), false, 'a range goes to the server');
        assert.ok(perKey < 50, `${perKey} ms for six keystrokes`);
        // A whole node checked (filter `node 3`, select all) is sent as its range.
        assert.equal(specForSelection([24, 25, 26, 27, 28, 29, 30, 31], []), '24-31');
        assert.equal(formatSpec(local0).split(',').length, 128);
    });

    it('builds the quick-pick of 1,024 ranks with coordinates (tp 8 × dp 32 × pp 4) well under a second, and filters it by `tp 5` in milliseconds', () => {
        const ranks: PlanRank[] = Array.from({ length: 1024 }, (_, r) => ({ rank: r, node_rank: Math.floor(r / 8), local_rank: r % 8 }));
        const all = ranks.map((r) => r.rank);
        // The plan's coords as `rankdebug plan --json` sends them (Megatron's order tp-cp-dp-pp), read as the extension reads them.
        const raw = JSON.stringify({
            dims: { tp: 8, dp: 32, pp: 4 }, order: ['tp', 'cp', 'dp', 'pp'], world_size: 1024, source: 'megatron',
            read: [{ name: '--tensor-model-parallel-size', value: '8', file: null, line: 1, column: 40 }, { name: '--pipeline-model-parallel-size', value: '4', file: null, line: 1, column: 70 }],
            ranks: all.map((r) => ({ tp: r % 8, dp: Math.floor(r / 8) % 32, pp: Math.floor(r / 256) })),
        });
        let coords: PlanCoords | null = null;
        let items = rankItems([], [], true, l10n);
        const opened = ms(() => {
            coords = readPlanCoords(JSON.parse(raw));
            assert.ok(coords);
            // Each group's ranks as the server answers its selector (dp=0 tp=0 …): every other dimension at 0.
            const groups = groupPresets(coords).map((g) => ({ ...g, ranks: all.filter((r) => coords!.ranks[r] && Object.entries(coords!.ranks[r]).every(([d, i]) => d === g.dim || i === 0)) }));
            const choices = withGroups(presets({ all, rank0: [0], local0: all.filter((r) => r % 8 === 0) }, 128), groups, 1024);
            items = rankItems(ranks, choices, true, l10n, coords);
            const wanted = new Set([0, 8, 16]);
            return items.filter((i) => i.rank !== undefined && wanted.has(i.rank));
        });
        figures.quickpick_coords_ms = opened;
        assert.equal(items.find((i) => i.rank === 813)?.label, 'rank 813 · node 101 · pp 3 · dp 5 · tp 5');
        assert.deepEqual(
            items.filter((i) => i.kind === 'preset' && i.preset?.id === 'group').map((i) => `${i.label}: ${i.description}`),
            ['First rank of each pipeline stage: dp=0 tp=0 · 0,256,512,768', 'One data-parallel group: pp=0 tp=0 · 0,8,16,24,32,40,48,56,64,72,80,88,96,104,…', 'One tensor-parallel group: pp=0 dp=0 · 0-7'],
        );
        assert.ok(opened < 1000, `${opened} ms`);
        // What VS Code does per keystroke, at the least: every row's label and description against the text.
        const typed = ['t', 'tp', 'tp ', 'tp 5', 'pp 0 ', 'pp 0 · dp 3 ·'];
        let shown = 0;
        const filtered = ms(() => {
            for (const t of typed) shown = items.filter((i) => i.kind === 'rank' && `${i.label} ${i.description ?? ''}`.toLowerCase().includes(t)).length;
            return typed.map((t) => filtersItems(items, t));
        });
        figures.quickpick_coords_filter_ms = Math.round((filtered / typed.length) * 1000) / 1000;
        assert.equal(shown, 8, 'pp 0 · dp 3 ·: the 8 ranks of that tensor-parallel group');
        assert.equal(items.filter((i) => i.kind === 'rank' && i.label.includes('tp 5')).length, 128);
        assert.ok(filtered / typed.length < 100, `${filtered} ms for ${typed.length} keystrokes`);
    });

    it('renders and refreshes Training Jobs with 256 ranks: a few rows, every rank reachable', () => {
        const path = process.env.RANKDEBUG_SCALE_JOBS;
        const text = path ? fs.readFileSync(path, 'utf8') : jobsAnswer(256);
        const live = new LiveRanks();
        let shown = tree(text, live);
        const render = ms(() => (shown = tree(text, live)));
        const job = shown.jobs.find((j) => j.ranks.length >= 256) ?? shown.jobs[0];
        const n = job.ranks.length;
        figures.ranks = n;
        figures.render_ms = render;
        const mine = shown.rows.filter((r) => r.job === job);
        const top = mine.filter((r) => r.parent === `job:${job.id}`);
        const leaves = mine.filter((r) => r.kind === 'rank');
        assert.equal(leaves.length, n, 'every rank has its row');
        // One state: one collapsed row over chunks of a dozen.
        assert.equal(top.length, 1);
        assert.ok(top[0].kind === 'group' && top[0].group.label === `ranks 0-${n - 1}`, JSON.stringify(top[0]));
        const perParent = new Map<string, number>();
        for (const r of mine) if (r.parent) perParent.set(r.parent, (perParent.get(r.parent) ?? 0) + 1);
        assert.ok(Math.max(...perParent.values()) <= MAX_ROWS);
        assert.ok(render < 300, `${render} ms`);

        // A refresh after a group step: 64 ranks stopped at a line, one waits in a collective.
        const before = new Map(shown.rows.map((r) => [r.id, r.signature]));
        for (let r = 64; r < 128; r++) live.apply(ev({ event: 'stopped', rank: job.ranks[r].rank, reason: 'step', file: '/w/train.py', line: 31, function: 'main', job: job.id }));
        live.apply(ev({ event: 'blocked', rank: job.ranks[200].rank, in: 'all_reduce', seq: 7, group: '0', job: job.id }));
        let after = shown;
        const refresh = ms(() => (after = tree(text, live)));
        figures.refresh_ms = refresh;
        const changed = after.rows.filter((r) => before.get(r.id) !== r.signature).length;
        figures.rows_changed = changed;
        const labels = after.rows
            .filter((r) => r.parent === `job:${job.id}`)
            .map((r) => (r.kind === 'group' ? `${r.group.label} · ${r.group.description}` : r.kind === 'rank' ? `rank ${r.rank.rank} · ${r.row.text}` : ''));
        assert.deepEqual(labels, [
            'ranks 0-63 · running (64)',
            'ranks 64-127 · paused at train.py:31 in main (step) (64)',
            'ranks 128-199 · running (72)',
            'rank 200 · waiting in all_reduce #7 (group 0)',
            `ranks 201-${n - 1} · running (${n - 201})`,
        ]);
        assert.ok(refresh < 300, `${refresh} ms`);
    });
});
