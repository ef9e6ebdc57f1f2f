import * as assert from 'node:assert/strict';
import { watchable, watchArgs, watchFoundMode, watching, watchPlan } from '../../../../extension/src/core/foundWatch';
import { readJobs } from '../../../../extension/src/core/jobList';

// `rankdebug jobs --json`: a job found running, one launched by rankdebug (the registry's), and a found job whose ranks all exited.
const SNAPSHOT = readJobs({
    jobs: [
        { id: '4242@vm', source: 'scan', launcher: 'torchrun', ranks: [{ rank: 0, pid: 11, state: 'running' }, { rank: 1, pid: 12, state: 'running' }] },
        { id: 'a1b2', source: 'registry', dir: '/run/user/1/rankdebug/a1b2', launcher: 'torchrun', ranks: [{ rank: 0, pid: 21, state: 'running' }] },
        { id: '5151@vm', source: 'scan', launcher: 'deepspeed', ranks: [{ rank: 0, pid: 31, state: 'exited' }] },
    ],
});
const [FOUND, OURS, GONE] = SNAPSHOT.jobs;

describe('the hang watch of found jobs', () => {
    it('watches jobs found running with a live rank, never a job rankdebug launch supervises', () => {
        assert.equal(watchable(FOUND), true);
        assert.equal(watchable(OURS), false);
        assert.equal(watchable(GONE), false);
        assert.equal(watchable({ ...FOUND, dir: '/somewhere' }), false);
    });

    it('runs while the view is visible, always, or never, and never with hangSeconds 0', () => {
        assert.equal(watching('whileVisible', true, 120), true);
        assert.equal(watching('whileVisible', false, 120), false);
        assert.equal(watching('always', false, 120), true);
        assert.equal(watching('off', true, 120), false);
        assert.equal(watching('always', true, 0), false);
        assert.equal(watchFoundMode('always'), 'always');
        assert.equal(watchFoundMode('sometimes'), 'whileVisible');
        assert.equal(watchFoundMode(undefined), 'whileVisible');
    });

    it('starts one watcher per job, stops those of jobs gone or when off, and never restarts an ended one', () => {
        assert.deepEqual(watchPlan(SNAPSHOT.jobs, new Set(), new Set(), true), { start: ['4242@vm'], stop: [] });
        assert.deepEqual(watchPlan(SNAPSHOT.jobs, new Set(['4242@vm']), new Set(), true), { start: [], stop: [] });
        assert.deepEqual(watchPlan([OURS], new Set(['4242@vm']), new Set(), true), { start: [], stop: ['4242@vm'] });
        assert.deepEqual(watchPlan(SNAPSHOT.jobs, new Set(['4242@vm']), new Set(), false), { start: [], stop: ['4242@vm'] });
        assert.deepEqual(watchPlan(SNAPSHOT.jobs, new Set(), new Set(['4242@vm']), true), { start: [], stop: [] });
        assert.deepEqual(watchArgs('4242@vm', 90), ['watch', '4242@vm', '--hang-seconds', '90', '--json']);
    });
});
