import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { CliOptions, CliRun } from '../../../../extension/src/common/cli';
import type { JobInfo, RankInfo } from '../../../../extension/src/core/jobList';
import type { StartedHost } from '../../../../extension/src/launch/host';
import { StartedPicks } from '../../../../extension/src/launch/startedPicks';
import type { JobState } from '../../../../extension/src/jobs/jobState';
import { Emitter } from '../debug/fakes';
import { FakePickHost, fakeChecks, ranksReply, tick } from './fakes';

/** `rankdebug jobs J1 --json` as the ranks that have started so far answer it (world size 4, one host). */
function jobsAnswer(ranks: number[], world = 4): Record<string, unknown> {
    return { jobs: [{ id: 'J1', source: 'registry', host: 'gpu-a', launcher: 'torchrun', world_size: world, armed: true, dir: '/run/J1', command: [], ranks: ranks.map((r) => ({ rank: r, pid: 100 + r, local_rank: r, host: 'gpu-a', state: 'armed', armed: true })) }] };
}

class FakeStartedHost extends FakePickHost implements StartedHost {
    readonly logged: string[] = [];
    readonly log = { info: (m: string) => this.logged.push(m), warn: (m: string) => this.logged.push(`warn: ${m}`), debug: (m: string) => this.logged.push(`debug: ${m}`) };
    readonly infos: string[] = [];
    readonly status: string[] = [];
    statusShown = 0;
    readonly started = new Emitter<vscode.DebugSession>();
    readonly terminated = new Emitter<vscode.DebugSession>();
    readonly onDidStartDebugSession = this.started.event;
    readonly onDidTerminateDebugSession = this.terminated.event;
    /** The ranks started so far, as the next `rankdebug jobs` answers. */
    ranks: number[] = [];
    reads = 0;

    runCli(_python: string, args: string[], _options: CliOptions): Promise<CliRun> {
        assert.deepEqual(args, ['jobs', 'J1', '--json', '--no-gpu']);
        this.reads += 1;
        const answer = jobsAnswer(this.ranks);
        return Promise.resolve({ answer, lines: [answer], code: 0, ms: 1 });
    }
    showInfo(message: string): void {
        this.infos.push(message);
    }
    setStatus(text: string): vscode.Disposable {
        this.status.push(text);
        this.statusShown += 1;
        return { dispose: () => (this.statusShown -= 1) };
    }
}

const SESSION = { id: 's1', type: 'rankdebug', name: 'train.py · ranks as they start', parentSession: undefined } as unknown as vscode.DebugSession;

interface World {
    host: FakeStartedHost;
    attached: number[][];
    dir: string;
}

/** A followed job session (J1, its folder watched) whose pick is open. */
async function follow(): Promise<World> {
    const host = new FakeStartedHost();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-started-'));
    const attached: number[][] = [];
    const state = {
        onDidChange: new Emitter<void>().event,
        bySession: (id: string) => (id === 's1' ? { job: 'J1', dir } : undefined),
        claimed: () => new Set<number>(),
    } as unknown as JobState;
    const { execute } = fakeChecks({ '1': ranksReply([1]), '2,3': ranksReply([2, 3]) });
    const deps = { python: () => Promise.resolve('/venv/bin/python'), state, execute, attach: (_job: JobInfo, ranks: RankInfo[]) => Promise.resolve(void attached.push(ranks.map((r) => r.rank))) };
    new StartedPicks(host, deps).follow(SESSION.name, 'train.py');
    host.started.fire({ ...SESSION, name: 'another session' } as vscode.DebugSession);
    host.started.fire(SESSION);
    await until('the pick', () => Boolean(host.picks[0]?.shown));
    return { host, attached, dir };
}

async function until(what: string, ok: () => boolean, ms = 1500): Promise<void> {
    const end = Date.now() + ms;
    while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await tick(10);
    }
}

/** A rank starts: it writes itself into the job's folder, which is watched. */
async function rankStarts(w: World, rank: number): Promise<void> {
    const reads = w.host.reads;
    w.host.ranks = [...w.host.ranks, rank];
    fs.writeFileSync(path.join(w.dir, `rank${rank}.json`), '{}');
    await until(`a read after rank ${rank} started`, () => w.host.reads > reads);
    await tick(5);
}

describe('launch/startedPicks', () => {
    let open: World | undefined;
    afterEach(() => {
        open?.host.terminated.fire(SESSION);
        if (open) fs.rmSync(open.dir, { recursive: true, force: true });
        open = undefined;
    });

    it('fills the pick as ranks start, and attaches the ranks checked at Enter', async () => {
        const w = (open = await follow());
        const qp = w.host.pick;
        assert.equal(qp.title, 'train.py: choose ranks as they start — waiting for the first rank');
        await rankStarts(w, 0);
        await rankStarts(w, 1);
        assert.deepEqual(
            qp.items.map((i) => i.label),
            ['Started: 0,1 of 4', 'rank 0 · node 0', 'rank 1 · node 0'],
        );
        assert.equal(qp.title, 'train.py: choose ranks as they start — 2 of 4 started');
        assert.equal(qp.busy, true, 'busy until every rank has started');
        qp.check('rank 1 · node 0');
        await qp.enter();
        await until('the attach', () => w.attached.length > 0);
        assert.deepEqual(w.attached, [[1]]);
        assert.ok(qp.hidden && qp.disposed);
        assert.deepEqual(w.host.infos, [], 'Enter is no Escape');
    });

    it('lets a typed choice stand: its ranks that have started now, the others as they start', async () => {
        const w = (open = await follow());
        await rankStarts(w, 0);
        await rankStarts(w, 2);
        w.host.pick.type('2,3');
        await w.host.pick.enter();
        await until('rank 2 attached', () => w.attached.length > 0);
        assert.deepEqual(w.attached, [[2]]);
        assert.deepEqual(w.host.status, ['$(watch) Rank Debugger: ranks 2,3 are attached as they start']);
        await rankStarts(w, 3);
        await until('rank 3 attached', () => w.attached.length > 1);
        assert.deepEqual(w.attached, [[2], [3]]);
        await rankStarts(w, 1);
        assert.equal(w.attached.length, 2, 'rank 1 is not in the choice');
    });

    it("says the server's word on a typed text, and takes nothing while nothing is chosen", async () => {
        const w = (open = await follow());
        await rankStarts(w, 0);
        const qp = w.host.pick;
        qp.type('x');
        await qp.enter();
        assert.equal(qp.title, 'train.py: choose ranks as they start — not a rank choice: x');
        qp.type('');
        await qp.enter();
        assert.equal(qp.hidden, false);
        assert.deepEqual(w.attached, []);
    });

    it('stops following the job on Escape (it runs on, every rank armed), and closes when the job ends', async () => {
        const w = (open = await follow());
        w.host.pick.escape();
        assert.ok(w.host.pick.disposed);
        const reads = w.host.reads;
        w.host.ranks = [0];
        fs.writeFileSync(path.join(w.dir, 'rank0.json'), '{}');
        await tick(300);
        assert.equal(w.host.reads, reads, 'no read after Escape');
        assert.deepEqual(w.attached, []);
        // Said once: the job runs on, and where to find its ranks.
        assert.equal(w.host.infos.length, 1);
        assert.match(w.host.infos[0] ?? '', /runs on with every rank armed/);
        const ended = (open = await follow());
        ended.host.terminated.fire(SESSION);
        assert.ok(ended.host.pick.hidden);
        assert.match(ended.host.logged.join('\n'), /ranks as they start: J1: the job ended/);
        assert.deepEqual(ended.host.infos, [], 'the job ended: nothing runs on to say so of');
    });
});
