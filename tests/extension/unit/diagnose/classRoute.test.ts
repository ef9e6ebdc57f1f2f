import * as assert from 'node:assert/strict';
import { ClassRoute } from '../../../../extension/src/diagnose/classRoute';
import { fakeSession } from '../debug/fakes';
import { job, rank } from '../jobs/fakes';
import { FakeClassHost, FakeParts } from './fakes';

/** Four classes of a 16-rank job: rank 0 for 0-11, rank 12 for 12-13, rank 14 alone, rank 15 for 15. */
const REPS = [
    { rank: 0, others: 11 },
    { rank: 12, others: 1 },
    { rank: 14, others: 0 },
    { rank: 15, others: 0 },
];

function route(maxSessions = 16): { host: FakeClassHost; parts: FakeParts; classes: ClassRoute } {
    const host = new FakeClassHost();
    host.settingsNow = { ...host.settingsNow, maxSessions };
    const parts = new FakeParts();
    parts.jobs = [job(Array.from({ length: 16 }, (_, r) => rank(r)))];
    return { host, parts, classes: new ClassRoute(host, { jobs: parts.jobStore, attach: parts.attach }) };
}

describe('diagnose/classRoute', () => {
    it('attaches to every representative of the job as it runs now, and says nothing more under the cap', async () => {
        const { host, parts, classes } = route();
        await classes.open('J1', REPS, 'why stuck: debug');
        assert.deepEqual(parts.attached, [{ job: 'J1', ranks: [0, 12, 14, 15], told: false }]);
        assert.deepEqual(host.infos, []);
        assert.deepEqual(host.warnings, []);
        assert.deepEqual(host.logged, ['why stuck: debug of J1: 4 classes, open 0,12,14,15']);
    });

    it('opens the first classes up to rankdebug.maxSessions, counting the sessions the window has, and says what is left', async () => {
        const { host, parts, classes } = route(3);
        parts.sessions.set('J1', [7]);
        await classes.open('J1', REPS, 'stacks: debug one rank per class');
        assert.deepEqual(parts.attached, [{ job: 'J1', ranks: [0, 12], told: false }]);
        assert.deepEqual(host.infos, [
            'rankdebug.maxSessions is 3: 2 classes left without a session (2 ranks, represented by ranks 14,15). Debug this class in Show Stacks opens one.',
        ]);
        assert.deepEqual(host.logged, ['stacks: debug one rank per class of J1: 4 classes, open 0,12, 2 past rankdebug.maxSessions (3)']);
    });

    it('opens nothing at the cap, and says a class already shown is attached', async () => {
        const { host, parts, classes } = route(1);
        parts.sessions.set('J1', [3]);
        await classes.open('J1', [{ rank: 14, others: 0 }], 'why stuck: debug');
        assert.deepEqual(parts.attached, []);
        assert.deepEqual(host.infos, ['rankdebug.maxSessions is 1: 1 classes left without a session (1 ranks, represented by ranks 14). Debug this class in Show Stacks opens one.']);
        parts.sessions.set('J1', [3, 14]);
        await classes.open('J1', [{ rank: 14, others: 0 }], 'why stuck: debug');
        assert.deepEqual(parts.attached, []);
        assert.equal(host.infos[1], 'Rank 14 of J1 is attached already: see the Call Stack.');
        assert.equal(host.logged[1], 'why stuck: debug of J1: 1 classes, open none, shown already 14');
    });

    it('says the ranks that are not live, attaches to the others, one of them told', async () => {
        const { host, parts, classes } = route();
        parts.jobs = [job([rank(0), rank(1, { pid: null }), rank(2, { state: 'exited' }), rank(3)])];
        await classes.open('J1', [{ rank: 1, others: 0 }, { rank: 2, others: 0 }, { rank: 3, others: 0 }, { rank: 9, others: 0 }], 'why stuck: debug');
        assert.deepEqual(host.warnings, ['torchrun · J1 has no live rank 1,2,9 to attach to.']);
        assert.deepEqual(parts.attached, [{ job: 'J1', ranks: [3], told: true }]);
    });

    it('says a job that is not running any more, and attaches to nothing', async () => {
        const { host, parts, classes } = route();
        await classes.open('J2', REPS, 'why stuck: debug');
        assert.deepEqual(host.infos, ['Job J2 is not running any more.']);
        assert.deepEqual(parts.attached, []);
    });

    it('names each session it starts after the class it stands for, once, and no other', async () => {
        const { host, classes } = route();
        await classes.open('J1', REPS, 'why stuck: debug');
        const s0 = fakeSession({ type: 'rankdebug', name: 'rank 0', request: 'attach', __rank: { rank: 0, job: 'J1' } });
        const s12 = fakeSession({ type: 'rankdebug', name: 'rank 12', request: 'attach', __rank: { rank: 12 } });
        const s14 = fakeSession({ type: 'rankdebug', name: 'rank 14', request: 'attach', __rank: { rank: 14, job: 'J1' } });
        const again = fakeSession({ type: 'rankdebug', name: 'rank 0', request: 'attach', __rank: { rank: 0, job: 'J1' } });
        const other = fakeSession({ type: 'rankdebug', name: 'rank 0', request: 'attach', __rank: { rank: 0, job: 'J2' } });
        const plain = fakeSession({ type: 'python', name: 'Python', request: 'launch' });
        for (const s of [s0, s12, s14, again, other, plain]) host.started.fire(s);
        assert.deepEqual([s0, s12, s14, again, other, plain].map((s) => s.name), ['rank 0 · 11 like it', 'rank 12 · 1 like it', 'rank 14', 'rank 0', 'rank 0', 'Python']);
        classes.dispose();
        await classes.open('J1', REPS, 'why stuck: debug');
        const late = fakeSession({ type: 'rankdebug', name: 'rank 0', request: 'attach', __rank: { rank: 0, job: 'J1' } });
        host.started.fire(late);
        assert.equal(late.name, 'rank 0', 'disposed: no longer listening');
    });
});
