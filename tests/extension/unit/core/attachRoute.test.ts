import * as assert from 'node:assert/strict';
import { attachSteps, InFlight, offerable } from '../../../../extension/src/core/attachRoute';
import { canAttach, type RankInfo } from '../../../../extension/src/core/jobList';

function rank(n: number, state: RankInfo['state'], port: number | null = null): RankInfo {
    return { pid: 100 + n, rank: n, localRank: n, worldSize: 4, host: 'h', port, address: '127.0.0.1', state, cpu: null, rss: null, gpu: null, armed: true, raised: null };
}

describe('core/attachRoute', () => {
    const ranks = [rank(3, 'armed'), rank(0, 'listening', 5000), rank(1, 'armed'), rank(2, 'attached', 5002)];

    it('asks armed ranks to listen, connects to listening ones, in rank order', () => {
        const steps = attachSteps(ranks, { claimed: new Set(), pending: new Set() });
        assert.deepEqual(
            steps.map((s) => [s.rank.rank, s.action]),
            [
                [0, 'connect'],
                [1, 'ask'],
                [2, 'connect'],
                [3, 'ask'],
            ],
        );
    });

    it('never attaches a rank this window has or is attaching', () => {
        const steps = attachSteps(ranks, { claimed: new Set([0, 1]), pending: new Set([3]) });
        assert.deepEqual(
            steps.map((s) => [s.rank.rank, s.action]),
            [
                [0, 'attached'],
                [1, 'attached'],
                [2, 'connect'],
                [3, 'pending'],
            ],
        );
    });

    it('offers on a job row only live ranks nobody here is attaching', () => {
        const live = (r: RankInfo): boolean => canAttach(r, undefined);
        assert.deepEqual(
            offerable(ranks, { claimed: new Set(), pending: new Set() }, live).map((r) => r.rank),
            [3, 0, 1],
        );
        assert.deepEqual(
            offerable(ranks, { claimed: new Set([1]), pending: new Set([3]) }, live).map((r) => r.rank),
            [0],
        );
    });

    it('lets one click at a time attach a rank (a second click finds it taken)', () => {
        const f = new InFlight();
        assert.equal(f.take('job-a', 1), true);
        assert.equal(f.take('job-a', 1), false);
        assert.equal(f.take('job-a', 2), true);
        assert.equal(f.take('job-b', 1), true);
        assert.deepEqual([...f.ranks('job-a')].sort(), [1, 2]);
        f.release('job-a', 1);
        assert.deepEqual([...f.ranks('job-a')], [2]);
        assert.equal(f.take('job-a', 1), true);
        // A job id that is a prefix of another does not mix their ranks.
        assert.deepEqual([...f.ranks('job')], []);
    });
});
