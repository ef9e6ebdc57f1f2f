import * as assert from 'node:assert/strict';
import type { JobInfo, RankInfo } from '../../../../extension/src/core/jobList';
import { RankAttacher } from '../../../../extension/src/jobs/attachRanks';
import type { JobState, TrackedJob } from '../../../../extension/src/jobs/jobState';
import type { JobNode } from '../../../../extension/src/jobs/jobsView';
import { tick } from '../launch/fakes';
import { FakeAttachHost, job, rank } from './fakes';

/** The part of the window's job state attaching reads: ranks with a session, and the job's own parent. */
class FakeState {
    claims = new Set<number>();
    followed: Partial<TrackedJob> | undefined;
    claimed(): Set<number> {
        return new Set(this.claims);
    }
    follower(): TrackedJob | undefined {
        return this.followed as TrackedJob | undefined;
    }
}

function attacher(): { host: FakeAttachHost; state: FakeState; attach: RankAttacher; refreshed: () => number; picked: string[] } {
    const host = new FakeAttachHost();
    const state = new FakeState();
    let refreshes = 0;
    const picked: string[] = [];
    const jobs = {
        pickJob: (title: string) => {
            picked.push(title);
            return Promise.resolve(undefined);
        },
        refresh: () => {
            refreshes += 1;
            return Promise.resolve();
        },
    };
    const attach = new RankAttacher(host, () => Promise.resolve('/venv/bin/python'), jobs, state as unknown as JobState);
    return { host, state, attach, refreshed: () => refreshes, picked };
}

const rankRow = (j: JobInfo, r: RankInfo): JobNode => ({ kind: 'rank', job: j, rank: r }) as unknown as JobNode;
const jobRow = (j: JobInfo): JobNode => ({ kind: 'job', job: j }) as unknown as JobNode;

describe('jobs/attachRanks', () => {
    it('connects straight to a rank that listens: a parent over the job with that endpoint', async () => {
        const { host, attach, refreshed } = attacher();
        const listening = rank(1, { state: 'listening', port: 5679, address: '10.0.0.2' });
        const j = job([rank(0), listening]);
        host.settingsNow = { ...host.settingsNow, justMyCode: false };
        await attach.attach(rankRow(j, listening));
        assert.deepEqual(host.cliCalls, []);
        assert.deepEqual(host.sessions, [
            {
                type: 'rankdebug',
                request: 'attach',
                name: 'torchrun · J1 · rank 1',
                justMyCode: false,
                __attach: { job: 'J1', dir: '/run/rankdebug/J1', ranks: [{ rank: 1, host: '10.0.0.2', port: 5679 }], worldSize: 2, title: 'torchrun · J1' },
            },
        ]);
        assert.equal(refreshed(), 1);
    });

    it('asks rankdebug attach to start a debugger in a rank that does not listen, with the hosts setting', async () => {
        const { host, attach } = attacher();
        const j = job([rank(0), rank(1)]);
        host.settingsNow = { ...host.settingsNow, hosts: ['node1'] };
        host.cli.set('attach J1 1', [{ event: 'listening', rank: 1, host: '127.0.0.1', port: 6001 }]);
        await attach.attach(rankRow(j, j.ranks[1]));
        assert.deepEqual(
            host.cliCalls.map((c) => c.args),
            [['attach', 'J1', '1', '--json', '--hosts', 'node1']],
        );
        assert.deepEqual(host.progress, ['[Rank Debugger]', 'Starting a debugger in rank 1 of J1…']);
        assert.deepEqual(host.sessions[0].__attach.ranks, [{ rank: 1, host: '127.0.0.1', port: 6001 }]);
    });

    it("shows the CLI's words when a debugger cannot be started, and starts no session", async () => {
        const { host, attach } = attacher();
        const j = job([rank(0), rank(1)]);
        host.cli.set('attach J1 1', new Error('ptrace is not permitted: set kernel.yama.ptrace_scope to 0'));
        await attach.attach(rankRow(j, j.ranks[1]));
        assert.deepEqual(host.errors, ['Cannot attach to rank 1 of J1: ptrace is not permitted: set kernel.yama.ptrace_scope to 0']);
        assert.deepEqual(host.sessions, []);
        host.cli.set('attach J1 1', [{ event: 'attached', rank: 1 }]);
        await attach.attach(rankRow(j, j.ranks[1]));
        assert.equal(host.errors[1], 'Cannot attach to rank 1 of J1: rankdebug attach gave no port', 'and the rank may be attached again after a failure');
    });

    it('attaches several ranks with one rankdebug attach, saying each one that failed', async () => {
        const { host, attach, state } = attacher();
        const j = job([rank(0), rank(1), rank(2), rank(3)]);
        state.claims = new Set([0]);
        host.cli.set('attach J1 1-3', [
            { event: 'listening', rank: 1, host: '127.0.0.1', port: 6001 },
            { event: 'failed', rank: 2, message: 'rank 2 exited' },
            { event: 'listening', rank: 3, host: '127.0.0.1', port: 6003 },
        ]);
        await attach.attachRanks(j, j.ranks);
        assert.deepEqual(
            host.cliCalls.map((c) => c.args),
            [['attach', 'J1', '1-3', '--json']],
            'rank 0 has a session of this window already',
        );
        assert.deepEqual(host.errors, ['Cannot attach to rank 2 of J1: rank 2 exited']);
        assert.equal(host.sessions.length, 1);
        assert.equal(host.sessions[0].name, 'torchrun · J1 · ranks 1,3');
        assert.deepEqual(
            host.sessions[0].__attach.ranks.map((r: { rank: number }) => r.rank),
            [1, 3],
        );
    });

    it('says a rank row clicked is attached already, and lets a second click wait for the first', async () => {
        const { host, attach, state } = attacher();
        const j = job([rank(0), rank(1)]);
        state.claims = new Set([1]);
        await attach.attach(rankRow(j, j.ranks[1]));
        assert.deepEqual(host.infos, ['Rank 1 of J1 is attached already: see the Call Stack.']);
        state.claims = new Set();
        let answer: (v: Record<string, unknown>[]) => void = () => undefined;
        host.runCli = (_python, args) => {
            host.cliCalls.push({ args, options: {} });
            return new Promise((r) => (answer = (lines) => r({ answer: lines[0], lines, code: 0, ms: 1 })));
        };
        const first = attach.attach(rankRow(j, j.ranks[0]));
        await tick();
        assert.deepEqual(attach.sessionsOf('J1'), new Set([0]));
        await attach.attach(rankRow(j, j.ranks[0]));
        assert.equal(host.cliCalls.length, 1, 'the second click does nothing while the first attaches');
        answer([{ event: 'listening', rank: 0, host: '127.0.0.1', port: 6000 }]);
        await first;
        assert.equal(host.sessions.length, 1);
        assert.deepEqual(attach.sessionsOf('J1'), new Set());
    });

    it("starts a rank through the job's own session when this window follows the job", async () => {
        const { host, attach, state } = attacher();
        const started: unknown[] = [];
        state.followed = {
            startRank: (ep: unknown) => {
                started.push(ep);
                return Promise.resolve(true);
            },
        } as Partial<TrackedJob>;
        const listening = rank(2, { state: 'listening', port: 6002 });
        const j = job([rank(0), rank(1), listening]);
        await attach.attach(rankRow(j, listening));
        assert.deepEqual(started, [{ rank: 2, host: '127.0.0.1', port: 6002, job: 'J1' }]);
        assert.deepEqual(host.sessions, [], 'no parent of its own');
    });

    it('on a job row: the ranks waiting for a debugger, else a pick; says when no rank is left to attach', async () => {
        const { host, attach, state } = attacher();
        const waiting = rank(3, { state: 'listening', port: 6003 });
        await attach.attach(jobRow(job([rank(0), rank(1), rank(2), waiting])));
        assert.deepEqual(
            host.sessions.map((s) => s.name),
            ['torchrun · J1 · rank 3'],
            'the one rank waiting, with no pick',
        );
        assert.equal(host.picks.length, 0);
        state.claims = new Set([0, 1]);
        const gone = job([rank(0), rank(1), rank(2, { state: 'exited' })]);
        await attach.attach(jobRow(gone));
        assert.deepEqual(host.infos, ['Every rank of torchrun · J1 has a debugger already, or none runs.']);
        state.claims = new Set();
        const done = attach.attach(jobRow(job([rank(0), rank(1)])));
        await tick();
        assert.equal(host.pick.title, 'Attach to which ranks?');
        host.pick.escape();
        await done;
        assert.equal(host.sessions.length, 1, 'cancelled: nothing attached');
    });

    it('asks which job from the palette', async () => {
        const { attach, picked } = attacher();
        await attach.attach();
        assert.deepEqual(picked, ['Attach to which job?']);
    });
});
