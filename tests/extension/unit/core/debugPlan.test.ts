import * as assert from 'node:assert/strict';
import { rankConfiguration, registryRanks, specText, whereOf } from '../../../../extension/src/core/debugPlan';
import { readJobs, type JobInfo } from '../../../../extension/src/core/jobList';

describe('core/debugPlan', () => {
    it('finds where the command is: the source first, else `command`', () => {
        assert.deepEqual(whereOf({ source: { uri: 'file:///w/train.sh', line: 3 }, command: 'x' }), { uri: 'file:///w/train.sh', line: 3 });
        assert.deepEqual(whereOf({ source: { uri: 'file:///w/train.sh' } }), { uri: 'file:///w/train.sh', line: 0 });
        assert.deepEqual(whereOf({ source: { argv: ['torchrun', 'a.py'] } }), { argv: ['torchrun', 'a.py'] });
        assert.deepEqual(whereOf({ source: { text: 'torchrun a.py' } }), { text: 'torchrun a.py', language: 'shellscript' });
        assert.deepEqual(whereOf({ command: ['python', 'a.py'] }), { argv: ['python', 'a.py'] });
        assert.deepEqual(whereOf({ command: 'torchrun a.py' }), { text: 'torchrun a.py', language: 'shellscript' });
        assert.equal(whereOf({ command: '  ' }), undefined);
        assert.equal(whereOf({}), undefined);
    });

    it("takes the server's child configuration of a rank, and builds one only where it has none", () => {
        const server = [
            { type: 'rankdebug', request: 'attach', name: 'rank 1', job: null, ranks: [1] },
            { type: 'rankdebug', request: 'attach', name: 'rank 3', job: null, ranks: [3], pathMappings: [] },
        ];
        const three = rankConfiguration(server, 3);
        assert.deepEqual(three, server[1]);
        assert.notEqual(three, server[1]);
        assert.deepEqual(rankConfiguration(server, 2), { type: 'rankdebug', request: 'attach', name: 'rank 2', job: null, ranks: [2] });
        assert.deepEqual(rankConfiguration(undefined, 0).name, 'rank 0');
    });

    it("writes an attach configuration's ranks as the spec the server reads", () => {
        assert.equal(specText(undefined), undefined);
        assert.equal(specText(null), undefined);
        assert.equal(specText(2), '2');
        assert.equal(specText([3, 1]), '3,1');
        assert.equal(specText('0-3'), '0-3');
    });

    it("gives a running job's ranks as a plan's only when the registry has every rank", () => {
        const job = (worldSize: number | null, ranks: object[]): JobInfo => readJobs({ jobs: [{ id: 'J', world_size: worldSize, ranks }] }).jobs[0];
        const entries = [{ rank: 1, local_rank: 1 }, { rank: 0, local_rank: 0 }];
        assert.deepEqual(registryRanks(job(2, entries)), [{ rank: 0, local_rank: 0 }, { rank: 1, local_rank: 1 }]);
        assert.deepEqual(registryRanks(job(4, entries)), []);
        assert.deepEqual(registryRanks(job(null, entries)), []);
        assert.deepEqual(registryRanks(job(2, [{ rank: 0 }, { rank: 2 }])), []);
    });
});
