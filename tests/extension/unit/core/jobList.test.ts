import * as assert from 'node:assert/strict';
import { cliAnswer, CliError, jsonLines } from '../../../../extension/src/core/cliOutput';
import { evalLine, readEvalResult, remember } from '../../../../extension/src/core/evaluate';
import {
    canAttach,
    formatBytes,
    formatCpu,
    formatGpu,
    jobContext,
    jobLabel,
    listensNow,
    rankContext,
    rankCount,
    readJobs,
    refreshMs,
    rowSignature,
    shownState,
} from '../../../../extension/src/core/jobList';

// Trimmed from a real `rankdebug jobs --json` (a plain torchrun job found by the scan, and a
// `rankdebug launch` job from the registry with rank 0 waiting for a debugger).
const ANSWER = {
    host: 'vm',
    time: 1795361100.88,
    scan_ms: 1.5,
    processes: 81,
    warnings: ['nvidia-smi not found'],
    jobs: [
        {
            id: '16837@vm', source: 'scan', host: 'vm', launcher: 'torchrun', launcher_pid: 16837,
            command: ['/v/bin/python3', '/v/bin/torchrun', '--nproc_per_node', '2', 'long_train.py'],
            cwd: '/tmp/rdtest', start_time: 1795361088.2, world_size: 2, rendezvous: 'localhost:43105', run_id: 'f61e',
            ranks: [
                { pid: 16844, rank: 1, local_rank: 1, world_size: 2, host: 'vm', port: 49945, address: '127.0.0.1', state: 'listening', proc_state: 'sleeping', cpu: 46.5, cpu_time: 4.46, rss: 316985344, threads: 4, gpu: null, cuda_visible_devices: null, command: [], cwd: '/tmp/rdtest', start_time: 1 },
                { pid: 16843, rank: 0, local_rank: 0, world_size: 2, host: 'vm', port: null, address: null, state: 'running', proc_state: 'sleeping', cpu: 45.0, cpu_time: 4.32, rss: 316932096, threads: 4, gpu: [{ index: 0, uuid: 'GPU-x', memory_mib: 4000 }], cuda_visible_devices: '0', command: [], cwd: '/tmp/rdtest', start_time: 1 },
            ],
        },
        {
            id: '20261122-134622-10902', source: 'registry', dir: '/run/user/1000/rankdebug/20261122-134622-10902', host: 'vm', launcher: 'torchrun', launcher_pid: 10902,
            command: ['torchrun', 'train.py'], cwd: '/w', start_time: 1, world_size: 2, rendezvous: null, run_id: null, armed: true,
            ranks: [
                { pid: 11, rank: 0, state: 'listening', port: 5678, address: '127.0.0.1', armed: false },
                { pid: 12, rank: 1, state: 'armed', port: null, armed: true },
                { pid: 13, rank: 2, state: 'exited', port: null },
            ],
        },
        { source: 'scan', ranks: [] },
    ],
};

describe('core/jobList', () => {
    const snap = readJobs(ANSWER);
    const [scan, reg] = snap.jobs;

    it('reads the jobs, ranks in order, missing fields as null/false, entries without an id dropped', () => {
        assert.equal(snap.jobs.length, 2);
        assert.deepEqual(snap.warnings, ['nvidia-smi not found']);
        assert.equal(scan.id, '16837@vm');
        assert.equal(scan.launcherPid, 16837);
        assert.equal(scan.armed, false);
        assert.deepEqual(scan.ranks.map((r) => r.rank), [0, 1]);
        assert.equal(scan.ranks[1].port, 49945);
        assert.equal(reg.armed, true);
        assert.equal(reg.ranks[0].localRank, null);
        assert.equal(reg.ranks[1].armed, true);
        assert.deepEqual(readJobs('nonsense').jobs, []);
        assert.deepEqual(readJobs({ jobs: [{ id: 'x', ranks: [{ rank: 'a' }, { rank: 0, state: 'weird' }] }] }).jobs[0].ranks.map((r) => r.state), ['running']);
    });

    it('words rows: label, counts, CPU, memory, GPU', () => {
        assert.equal(jobLabel(scan), 'torchrun · 16837@vm');
        assert.equal(rankCount(scan), 2);
        assert.equal(formatCpu(45.4), '45%');
        assert.equal(formatCpu(null), '');
        assert.equal(formatBytes(316932096), '302 MiB');
        assert.equal(formatBytes(3 * 1024 ** 3), '3.0 GiB');
        assert.equal(formatBytes(null), '');
        assert.equal(formatGpu(scan.ranks[0].gpu), 'GPU 0');
        assert.equal(formatGpu(null), '');
    });

    it('shows this window\'s session state first; a scanned listening rank listens, a launched one waits', () => {
        assert.equal(shownState(scan.ranks[1], scan, undefined), 'listening');
        assert.equal(shownState(reg.ranks[0], reg, undefined), 'waiting for debugger');
        assert.equal(shownState(reg.ranks[0], reg, 'paused'), 'paused');
        assert.equal(shownState(reg.ranks[1], reg, undefined), 'armed');
    });

    it('offers Attach on live ranks without a session here, Evaluate on armed jobs\' ranks', () => {
        assert.equal(canAttach(scan.ranks[0], undefined), true);
        assert.equal(canAttach(scan.ranks[0], 'attached'), false);
        assert.equal(canAttach(reg.ranks[2], undefined), false);
        assert.equal(listensNow(scan.ranks[1]), true);
        assert.equal(listensNow(scan.ranks[0]), false);
        assert.equal(rankContext(scan.ranks[0], scan, undefined), 'rankdebug.rank attachable');
        assert.equal(rankContext(reg.ranks[1], reg, undefined), 'rankdebug.rank attachable armed control');
        assert.equal(rankContext(reg.ranks[0], reg, 'paused'), 'rankdebug.rank armed control');
        assert.equal(rankContext(reg.ranks[2], reg, undefined), 'rankdebug.rank exited control');
        assert.equal(jobContext(scan, false), 'rankdebug.job scan');
        assert.equal(jobContext(reg, true), 'rankdebug.job registry terminal armed');
        // The package.json `when` clauses match these.
        const attachable = /^rankdebug\.job\b|^rankdebug\.rank\b.*\battachable\b/;
        assert.ok(attachable.test('rankdebug.job scan'));
        assert.ok(!attachable.test('rankdebug.rank armed'));
        assert.ok(/^rankdebug\.job\b.*\bterminal\b/.test(jobContext(reg, true)));
    });

    it("reads each rank's parallel coordinates in the job's order, and null for anything else", () => {
        const ranks = [
            { rank: 0, coords: { dp: 1, tp: 3 } },
            { rank: 1, coords: { tp: 0, dp: 0 } },
            { rank: 2, coords: null },
            { rank: 3 },
            { rank: 4, coords: { tp: -1 } },
            { rank: 5, coords: ['dp', 1] },
            { rank: 6, coords: { 'tp;rm -rf': 1 } },
        ];
        const got = readJobs({ jobs: [{ id: 'c', ranks }] }).jobs[0].ranks;
        assert.deepEqual(got.map((r) => (r.coords ? Object.entries(r.coords) : null)), [[['dp', 1], ['tp', 3]], [['tp', 0], ['dp', 0]], null, null, null, null, null]);
    });

    it('changes a row signature only when the row would show something else', () => {
        const again = readJobs(JSON.parse(JSON.stringify(ANSWER).replace('"cpu":46.5', '"cpu":46.7'))).jobs[0];
        assert.equal(rowSignature(again, again.ranks[1]), rowSignature(scan, scan.ranks[1]));
        assert.notEqual(rowSignature(scan, scan.ranks[1], 'paused'), rowSignature(scan, scan.ranks[1]));
    });

    it('reads the refresh setting', () => {
        assert.equal(refreshMs(5), 5000);
        assert.equal(refreshMs(0), 0);
        assert.equal(refreshMs(-1), 0);
        assert.equal(refreshMs('5'), 0);
        assert.equal(refreshMs(0.2), 1000);
    });
});

describe('core/cliOutput', () => {
    it('takes the last JSON object on stdout', () => {
        assert.deepEqual(jsonLines('noise\n{"a": 1}\n{bad\n{"b": 2}\n'), [{ a: 1 }, { b: 2 }]);
        assert.deepEqual(cliAnswer('{"event": "listening", "port": 5}\n', '', 0), { event: 'listening', port: 5 });
    });

    it('turns {"error"} and silence into errors with the CLI\'s words', () => {
        const fix = 'ptrace is not permitted: sudo sysctl -w kernel.yama.ptrace_scope=0';
        assert.throws(() => cliAnswer(JSON.stringify({ error: { message: fix } }), '', 1), (e: unknown) => e instanceof CliError && e.message === fix && e.code === 1);
        assert.throws(() => cliAnswer('', 'Traceback...\nImportError: no rankdebug\n', 1), /ImportError: no rankdebug/);
        assert.throws(() => cliAnswer('', '', 3), /exit status 3/);
    });
});

describe('core/evaluate', () => {
    it('reads a result and words the output line', () => {
        const compareLine = { event: 'compare', groups: [{ ranks: [1], text: '0.001' }] };
        const r = readEvalResult([{ event: 'result', job: 'j', rank: 1, pid: 9, expr: "opt.param_groups[0]['lr']", text: '0.001', type: 'float' }, compareLine], 'x');
        assert.ok(r);
        assert.equal(evalLine(1, r), "rank 1 › opt.param_groups[0]['lr'] = 0.001");
        assert.equal(evalLine(0, { ...r, expr: 't', text: 'tensor([1,\n 2])' }), 'rank 0 › t = \ntensor([1,\n 2])');
        assert.equal(readEvalResult([{ event: 'listening' }], 'x'), undefined);
        assert.throws(() => readEvalResult([{ event: 'error', rank: 1, message: 'line 2: NameError: x' }, compareLine], 'x'), /line 2: NameError: x/);
    });

    it('remembers recent expressions, newest first, no duplicates', () => {
        assert.deepEqual(remember(['a', 'b'], 'b'), ['b', 'a']);
        assert.deepEqual(remember(['a'], '  '), ['a']);
        assert.deepEqual(remember(['a', 'b', 'c'], 'd', 3), ['d', 'a', 'b']);
    });
});
