import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WhyStuckPages } from '../../../../extension/src/diagnose/whyStuckPage';
import { job, rank } from '../jobs/fakes';
import { FakeParts, FakeWhyStuckHost } from './fakes';

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-whystuck-'));
const JOB = path.join(DIR, 'hang_job.py');
fs.writeFileSync(JOB, 'print(1)\n');
const C10D = '/elsewhere/torch/distributed/distributed_c10d.py';

/** `rankdebug diagnose J1 --json` of a 4-rank job where rank 3 skipped an all_reduce (core/diagnose.test.ts's, shortened). */
const SKIP = [
    {
        event: 'class', ranks: [0, 1, 2], state: 'waiting', collective: { op: 'all_reduce', seq: 6, group: '0' },
        where: { file: JOB, line: 46, function: 'train_step' },
        frames: [{ file: C10D, line: 3252, function: 'all_reduce' }, { file: JOB, line: 46, function: 'train_step' }],
    },
    {
        event: 'class', ranks: [3], state: 'waiting', collective: { op: 'barrier', seq: 1, group: '1' },
        where: { file: JOB, line: 104, function: 'skip' },
        frames: [{ file: C10D, line: 5356, function: 'barrier' }, { file: JOB, line: 104, function: 'skip' }],
    },
    { event: 'culprit', ranks: [3], why: 'rank 3 never entered all_reduce #6 of group 0', where: { file: JOB, line: 104, function: 'skip' } },
    { event: 'done', seconds: 2.158, ranks_read: 4, ranks_unread: [] },
];
const HEALTHY = [
    { event: 'class', ranks: [0, 1, 2, 3], state: 'running', collective: null, where: { file: JOB, line: 60, function: 'train' }, frames: [] },
    { event: 'healthy', why: 'every rank made progress' },
    { event: 'done', seconds: 1.5, ranks_read: 4, ranks_unread: [] },
];

const J1 = job([rank(0), rank(1), rank(2), rank(3)]);
const row = { kind: 'job', job: J1 };

function pages(): { host: FakeWhyStuckHost; parts: FakeParts; why: WhyStuckPages } {
    const host = new FakeWhyStuckHost();
    const parts = new FakeParts();
    parts.jobs = [J1];
    return { host, parts, why: new WhyStuckPages(host, parts.deps, parts.classSessions) };
}

describe('diagnose/whyStuckPage', () => {
    after(() => fs.rmSync(DIR, { recursive: true, force: true }));

    it("diagnoses a job row's job under a cancellable progress notification, then shows its panel", async () => {
        const { host, why } = pages();
        host.settingsNow = { ...host.settingsNow, hosts: ['node1'] };
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        assert.deepEqual(host.cliCalls.map((c) => c.args), [['diagnose', 'J1', '--json', '--hosts', 'node1']]);
        assert.equal(host.cliCalls[0].options.timeoutMs, 120000);
        assert.ok(host.cliCalls[0].options.signal, 'the run can be cancelled');
        assert.deepEqual(host.progress, ['[Reading every rank of torchrun · J1…]']);
        assert.deepEqual(host.panels.map((p) => p.title), ['Why is torchrun · J1 stuck?']);
        const html = host.panels[0].panel.html;
        assert.equal(html.length, 1);
        assert.match(html[0], /rank 3 never entered all_reduce #6 of group 0/);
        assert.match(html[0], /read in 0\.00 s at /);
        assert.deepEqual(host.logged, ['why stuck J1: 2 classes, 1 findings, 1 ms']);
        assert.deepEqual(host.errors, []);
    });

    it('cancels the run when the notification is cancelled', async () => {
        const { host, why } = pages();
        let signal: AbortSignal | undefined;
        host.runCli = (_python, args, options) => {
            host.cliCalls.push({ args, options });
            signal = options.signal;
            host.cancel.fire();
            return Promise.reject(new Error('cancelled'));
        };
        await why.run(row);
        assert.equal(signal?.aborted, true);
        assert.deepEqual(host.errors, [], 'a cancelled run says nothing');
        assert.deepEqual(host.panels, []);
        assert.deepEqual(host.logged, ['warn: why stuck J1: cancelled']);
    });

    it('says an error envelope, or a run cut short, as an error message and opens no panel', async () => {
        const { host, why } = pages();
        host.cli.set('diagnose J1', [{ error: { message: 'no rank of J1 could be read' } }]);
        await why.run(row);
        host.cli.set('diagnose J1', SKIP.slice(0, 3));
        await why.run(row);
        assert.deepEqual(host.errors, ['Cannot diagnose torchrun · J1: no rank of J1 could be read', 'Cannot diagnose torchrun · J1: rankdebug diagnose ended without its last line (done)']);
        assert.deepEqual(host.panels, []);
        assert.equal(host.logged[0], 'warn: why stuck J1: no rank of J1 could be read');
    });

    it("reuses the job's panel: revealed and read again, one run at a time, an error keeping the last view", async () => {
        const { host, why } = pages();
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        const { panel } = host.panels[0];
        host.cli.set('diagnose J1', HEALTHY);
        await Promise.all([why.run(row), why.run(row)]);
        assert.equal(host.panels.length, 1);
        assert.equal(panel.revealed, 2);
        assert.equal(host.cliCalls.length, 2, 'a read while one runs joins it');
        assert.match(panel.html[1], /Reading every rank…/);
        assert.match(panel.html.at(-1) ?? '', /every rank made progress/);
        host.cli.set('diagnose J1', new Error('rankdebug diagnose timed out'));
        await panel.post({ type: 'refresh' });
        assert.deepEqual(host.errors, ['Cannot diagnose torchrun · J1: rankdebug diagnose timed out']);
        const last = panel.html.at(-1) ?? '';
        assert.match(last, /every rank made progress/);
        assert.doesNotMatch(last, /Reading every rank…/);
        // Closed: the next run opens a new panel.
        panel.dispose();
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        assert.equal(host.panels.length, 2);
    });

    it('takes the job of an id (the notification) or asks which, and says when the job has ended', async () => {
        const { host, parts, why } = pages();
        host.cli.set('diagnose J1', SKIP);
        await why.run('J9');
        assert.deepEqual(host.infos, ['Job J9 is not running any more.']);
        assert.equal(host.cliCalls.length, 0);
        await why.run();
        assert.deepEqual(parts.pickTitles, ['Why is which job stuck?']);
        assert.equal(host.cliCalls.length, 0);
        await why.run('J1');
        assert.deepEqual(host.cliCalls.map((c) => c.args.slice(0, 2)), [['diagnose', 'J1']]);
    });

    it("acts on the ranks of this side's model: the culprit, one per class, and compare across the classes", async () => {
        const { host, parts, why } = pages();
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        const { panel } = host.panels[0];
        await panel.post({ type: 'debugCulprit', ranks: [0] });
        await panel.post({ type: 'debugClasses' });
        await panel.post({ type: 'compare' });
        assert.deepEqual(parts.classes, [
            { job: 'J1', reps: [{ rank: 3, others: 0 }], what: 'why stuck: debug' },
            { job: 'J1', reps: [{ rank: 0, others: 2, cls: 0 }, { rank: 3, others: 0, cls: 1 }], what: 'why stuck: debug' },
        ]);
        assert.deepEqual(parts.compared, [{ job: 'J1', ranks: [0, 3], fn: 'skip', title: 'Compare across the classes of J1: ranks 0,3' }]);
        // A healthy job has no culprit to debug.
        host.cli.set('diagnose J1', HEALTHY);
        await panel.post({ type: 'refresh' });
        await panel.post({ type: 'debugCulprit' });
        await panel.post({ type: 'unknown' });
        assert.equal(parts.classes.length, 2);
    });

    it("opens a finding's or a frame's file beside the panel, and says when the file is not here", async () => {
        const { host, why } = pages();
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        const { panel } = host.panels[0];
        await panel.post({ type: 'open', finding: 0 });
        await panel.post({ type: 'open', cls: 0, frame: 1 });
        await panel.post({ type: 'open', cls: 1, frame: -1 });
        assert.deepEqual(host.opened, [`${JOB}:103`, `${JOB}:45`, `${JOB}:103`]);
        await panel.post({ type: 'open', cls: 0, frame: 0 });
        assert.deepEqual(host.warnings, [`${C10D} is not on this machine.`]);
        await panel.post({ type: 'open', finding: 5 });
        await panel.post({ type: 'open', cls: 9, frame: 0 });
        await panel.post({ type: 'open', cls: '0', frame: 1 });
        assert.equal(host.opened.length, 3);
        assert.equal(host.warnings.length, 1);
    });

    it("the notification's Debug rank N: attaches to that live rank, or says it is gone", async () => {
        const { host, parts, why } = pages();
        await why.debugRank('J1', 2);
        assert.deepEqual(parts.attached, [{ job: 'J1', ranks: [2], told: undefined }]);
        await why.debugRank('J1', 7);
        await why.debugRank('J2', 0);
        assert.deepEqual(host.infos, ['Job J1 has no live rank 7 any more.', 'Job J2 has no live rank 0 any more.']);
        await why.debugRank('J1', '2');
        await why.debugRank(undefined, 2);
        assert.equal(parts.attached.length, 1);
        assert.equal(host.infos.length, 2);
    });

    it('closes its panels and the class sessions when disposed', async () => {
        const { host, parts, why } = pages();
        host.cli.set('diagnose J1', SKIP);
        await why.run(row);
        let closed = 0;
        host.panels[0].panel.onDidDispose(() => (closed += 1));
        why.dispose();
        assert.equal(closed, 1);
        assert.equal(parts.classesDisposed, 1);
    });
});
