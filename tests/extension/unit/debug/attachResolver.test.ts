import * as assert from 'node:assert/strict';
import { readJobs, type JobInfo } from '../../../../extension/src/core/jobList';
import { CHECK_RANKS } from '../../../../extension/src/core/rankCheck';
import { AttachResolver } from '../../../../extension/src/debug/attachResolver';
import type { RankdebugConfiguration } from '../../../../extension/src/debug/configuration';
import { FakeHost, FakeServer } from './fakes';

/**
 * A job `rankdebug launch` supervises, of 4 ranks: 0 and 1 listen (1 on the default address),
 * 2 has no port yet, 3 has exited; read from `rankdebug jobs --json`'s shape as the view reads it.
 */
function runningJob(over: Record<string, unknown> = {}): JobInfo {
    const job = {
        id: 'J1',
        source: 'registry',
        launcher_pid: 4242,
        dir: '/run/user/1000/rankdebug/J1',
        launcher: 'torchrun',
        world_size: 4,
        start_time: 100,
        ranks: [
            { rank: 0, local_rank: 0, host: 'node0', address: '10.0.0.2', port: 5001, state: 'listening' },
            { rank: 1, local_rank: 1, host: 'node0', port: 5002, state: 'attached' },
            { rank: 2, local_rank: 2, port: null, state: 'running' },
            { rank: 3, local_rank: 3, port: 5004, state: 'exited' },
        ],
        ...over,
    };
    const [read] = readJobs({ jobs: [job] }).jobs;
    return read;
}

function attach(over: Partial<RankdebugConfiguration>): RankdebugConfiguration {
    return { type: 'rankdebug', request: 'attach', name: 'Attach to job', ...over };
}

function setup(jobs: JobInfo[], answer: (command: string, arg: unknown) => unknown = () => undefined): { host: FakeHost; server: FakeServer; resolver: AttachResolver } {
    const host = new FakeHost();
    host.jobs = jobs;
    const server = new FakeServer(answer);
    return { host, server, resolver: new AttachResolver(server, host) };
}

const LISTENING = [
    { rank: 0, host: '10.0.0.2', port: 5001 },
    { rank: 1, host: '127.0.0.1', port: 5002 },
];

describe('debug/attachResolver', () => {
    it("lets `connect` through to the rank's port, with justMyCode filled in", async () => {
        const { host, resolver } = setup([runningJob()]);
        host.justMyCodeSetting = false;
        const config = await resolver.resolve(undefined, attach({ connect: { host: 'node2', port: 5678 } }));
        assert.deepEqual(config.connect, { host: 'node2', port: 5678 });
        assert.equal(config.justMyCode, false);
        assert.equal(config.__attach, undefined);
        assert.equal(host.listed, 0, 'the registry is not read');
    });

    it('rejects `connect` without a port', async () => {
        const { resolver } = setup([]);
        await assert.rejects(resolver.resolve(undefined, attach({ connect: { host: 'node2', port: 0 } })), { message: '"connect" needs a "port"' });
    });

    it('says which job is not running', async () => {
        await assert.rejects(setup([]).resolver.resolve(undefined, attach({})), { message: 'no running training job was found' });
        await assert.rejects(setup([runningJob()]).resolver.resolve(undefined, attach({ job: 'J9' })), { message: 'no running job J9' });
    });

    it('becomes a parent over every listening rank of the newest job when it names none', async () => {
        const older = runningJob({ id: 'J0', launcher_pid: 1, start_time: 50 });
        const found = runningJob({ id: '4242@node0', source: 'scan', dir: null, start_time: 200 });
        const { server, resolver } = setup([runningJob(), older, found]);
        const config = await resolver.resolve(undefined, attach({}));
        assert.deepEqual(config.__attach, { job: 'J1', supervisorPid: 4242, dir: '/run/user/1000/rankdebug/J1', ranks: LISTENING, worldSize: 4, title: 'torchrun' });
        assert.equal(config.connect, undefined);
        assert.equal(server.calls.length, 0, 'no ranks to read');
    });

    it('finds a job by its id, titled by its id when its launcher is not known', async () => {
        const { resolver } = setup([runningJob({ id: 'J0', launcher: undefined, world_size: undefined }), runningJob()]);
        const config = await resolver.resolve(undefined, attach({ job: 'J0' }));
        assert.equal(config.__attach?.job, 'J0');
        assert.equal(config.__attach?.title, 'other');
        assert.equal(config.__attach?.worldSize, null);
    });

    it("asks the server which ranks `ranks` names, with the job's ranks, and keeps the listening ones", async () => {
        const { server, resolver } = setup([runningJob()], () => ({ rankSpec: '1-2', ranks: [1, 2], arm: false }));
        const config = await resolver.resolve(undefined, attach({ ranks: '1-2' }));
        assert.deepEqual(server.calls, [
            {
                command: CHECK_RANKS,
                arg: {
                    spec: '1-2',
                    ranks: [0, 1, 2, 3].map((rank) => ({ rank, local_rank: rank })),
                    worldSize: 4,
                },
            },
        ]);
        assert.deepEqual(config.__attach?.ranks, [LISTENING[1]]);
    });

    it('sends a list of ranks as a spec', async () => {
        const { server, resolver } = setup([runningJob()], () => ({ rankSpec: '0,1', ranks: [0, 1], arm: false }));
        await resolver.resolve(undefined, attach({ ranks: [0, 1] }));
        assert.equal((server.calls[0].arg as { spec: string }).spec, '0,1');
    });

    it('connects a `rank N` configuration of one rank straight to it', async () => {
        const { resolver } = setup([runningJob()], () => ({ rankSpec: '1', ranks: [1], arm: false }));
        const config = await resolver.resolve(undefined, attach({ name: 'rank 1', job: 'J1', ranks: [1] }));
        assert.deepEqual(config.connect, { host: '127.0.0.1', port: 5002 });
        assert.equal(config.__attach, undefined);
    });

    it('rejects ranks none of which listens', async () => {
        const { resolver } = setup([runningJob()], () => ({ rankSpec: '2-3', ranks: [2, 3], arm: false }));
        await assert.rejects(resolver.resolve(undefined, attach({ ranks: '2-3' })), { message: 'no rank of job J1 is listening for a debugger' });
        const quiet = runningJob({ ranks: [{ rank: 0, port: null }] });
        await assert.rejects(setup([quiet]).resolver.resolve(undefined, attach({})), { message: 'no rank of job J1 is listening for a debugger' });
    });

    it("rejects with the server's reading of a bad spec, and a spec each rank decides", async () => {
        await assert.rejects(setup([runningJob()], () => ({ error: { message: 'rank 9 is out of range (world size 4)' } })).resolver.resolve(undefined, attach({ ranks: '9' })), {
            message: 'rank 9 is out of range (world size 4)',
        });
        await assert.rejects(setup([runningJob()], () => ({ rankSpec: 'local0', ranks: null, arm: false })).resolver.resolve(undefined, attach({ ranks: 'local0' })), {
            message: 'which ranks "local0" names in job J1 is not known here; give rank numbers',
        });
    });

    it('reads a plain list of ranks itself when the server cannot run, and nothing else', async () => {
        const down = (): never => {
            throw new Error('the language server cannot start');
        };
        const config = await setup([runningJob()], down).resolver.resolve(undefined, attach({ ranks: '1, 0' }));
        assert.deepEqual(config.__attach?.ranks, LISTENING);
        await assert.rejects(setup([runningJob()], down).resolver.resolve(undefined, attach({ ranks: '0-1' })), { message: 'the language server cannot start' });
    });
});
