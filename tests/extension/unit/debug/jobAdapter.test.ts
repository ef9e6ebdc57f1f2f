import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { HangEvent, HangOverEvent } from '../../../../extension/src/core/hangEvents';
import type { AttachSpec, JobSpec, RankdebugConfiguration } from '../../../../extension/src/debug/configuration';
import { JobAdapter, stopModeOf } from '../../../../extension/src/debug/jobAdapter';
import { SessionRegistry } from '../../../../extension/src/debug/sessions';
import { FakeHost, FakeJobs, fakeSession, until } from './fakes';

interface Message {
    type: string;
    seq: number;
    command?: string;
    request_seq?: number;
    success?: boolean;
    message?: string;
    event?: string;
    body?: Record<string, unknown>;
}

/** The stand-in for `rankdebug launch --json`: a node script that prints events with `out(...)`. */
function job(script: string, over: Partial<JobSpec> = {}): JobSpec {
    const prelude = 'const out = (o) => console.log(JSON.stringify(o));';
    return { argv: [process.execPath, '-e', `${prelude}\n${script}`], env: {}, cwd: os.tmpdir(), ranks: [1], rankSpec: '1', worldSize: 2, title: 'train.py', armed: false, ...over };
}

/** A parent session with its adapter, as VS Code drives it. */
class Parent {
    readonly host = new FakeHost();
    readonly state = new FakeJobs();
    readonly sessions = new SessionRegistry();
    readonly messages: Message[] = [];
    readonly session: vscode.DebugSession;
    readonly adapter: JobAdapter;
    private seq = 0;

    constructor(config: Partial<RankdebugConfiguration>) {
        this.sessions.track(this.host);
        this.session = fakeSession({ type: 'rankdebug', request: config.__job ? 'launch' : 'attach', name: 'job', ...config });
        this.adapter = new JobAdapter(this.session, { state: this.state, sessions: this.sessions, host: this.host });
        this.adapter.onDidSendMessage((m) => this.messages.push(m as Message));
    }

    request(command: string): number {
        this.seq += 1;
        this.adapter.handleMessage({ seq: this.seq, type: 'request', command });
        return this.seq;
    }

    response(seq: number): Message | undefined {
        return this.messages.find((m) => m.type === 'response' && m.request_seq === seq);
    }

    events(name: string): Message[] {
        return this.messages.filter((m) => m.type === 'event' && m.event === name);
    }

    outputs(category: string): string[] {
        return this.events('output').filter((m) => m.body?.category === category).map((m) => String(m.body?.output));
    }

    get terminated(): boolean {
        return this.events('terminated').length > 0;
    }

    index(m: Message | undefined): number {
        return m ? this.messages.indexOf(m) : -1;
    }

    get terminal(): string {
        return this.host.terminals[0]?.written ?? '';
    }

    /** The child configurations the adapter started. */
    get children(): RankdebugConfiguration[] {
        return this.host.starts.map((s) => s.config as RankdebugConfiguration);
    }
}

/** A process that runs until killed, standing for a job's supervisor. */
function sleeper(): ChildProcess & { gone: Promise<NodeJS.Signals | null> } {
    const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    return Object.assign(proc, { gone: new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal))) });
}

describe('debug/jobAdapter', () => {
    const parents: Parent[] = [];
    const sleepers: ChildProcess[] = [];
    const parent = (config: Partial<RankdebugConfiguration>): Parent => {
        const p = new Parent(config);
        parents.push(p);
        return p;
    };
    afterEach(() => {
        parents.splice(0).forEach((p) => p.adapter.dispose());
        sleepers.splice(0).forEach((s) => s.kill('SIGKILL'));
    });

    it('answers the requests of a session that runs no Python', async () => {
        const p = parent({ __job: job('') });
        const init = p.request('initialize');
        const threads = p.request('threads');
        const stack = p.request('stackTrace');
        await until(() => p.messages.length === 3, 'three responses');
        assert.deepEqual(p.response(init)?.body, { supportsConfigurationDoneRequest: false, supportsTerminateRequest: true });
        assert.deepEqual(p.response(threads)?.body, { threads: [] });
        assert.equal(p.response(stack)?.success, false);
        assert.equal(p.response(stack)?.message, 'Select a rank in the Call Stack: the job session itself runs no Python.');
    });

    it('fails a launch or attach whose configuration was not resolved', async () => {
        const p = parent({});
        const l = p.request('launch');
        const a = p.request('attach');
        await until(() => p.messages.length === 2, 'two responses');
        assert.equal(p.response(l)?.message, 'internal: launch without a resolved job');
        assert.equal(p.response(a)?.message, 'internal: attach without a resolved job');
        assert.equal(p.host.terminals.length, 0);
    });

    it("runs the job in its terminal, starts `rank N` once per listening rank, and ends with the job's exit", async () => {
        const spec = job(
            `out({ event: 'job', job: 'J7', pid: 1 });
             out({ event: 'listening', rank: 1, host: '127.0.0.1', port: 29001, job: 'J7' });
             console.log('step 1 loss 0.5');
             out({ event: 'listening', rank: 1, host: '127.0.0.1', port: 29001, job: 'J7' });
             console.error('a warning');
             out({ event: 'exited', code: 0 });
             setTimeout(() => process.exit(3), 100);`,
            { configurations: [{ type: 'rankdebug', request: 'attach', name: 'rank 1', job: null, ranks: [1], pathMappings: [{ localRoot: '/w', remoteRoot: '/w' }] }] },
        );
        const p = parent({ __job: spec, justMyCode: false });
        const launch = p.request('launch');
        await until(() => p.terminated, 'the parent to end');

        assert.equal(p.response(launch)?.success, true);
        assert.equal(p.host.terminals[0].name, 'rankdebug: train.py');
        assert.ok(p.host.terminals[0].shown);
        assert.equal(p.children.length, 1, 'rank 1 is started once');
        const key = `launch:${p.session.id}`;
        assert.deepEqual(p.children[0], {
            type: 'rankdebug',
            request: 'attach',
            name: 'rank 1',
            ranks: [1],
            pathMappings: [{ localRoot: '/w', remoteRoot: '/w' }],
            job: 'J7',
            connect: { host: '127.0.0.1', port: 29001 },
            justMyCode: false,
            __rank: { rank: 1, job: 'J7', parentKey: key },
        });
        assert.equal(p.host.starts[0].parent, p.session);

        const tracked = p.state.added.get(key);
        assert.equal(tracked?.job, 'J7');
        assert.equal(tracked?.title, 'train.py');
        assert.equal(tracked?.ranks.get(1)?.session, p.host.starts[0].child, "the rank's session is the child that started");
        assert.equal(tracked?.ranks.get(1)?.state, 'attached');
        assert.ok(typeof tracked?.supervisorPid === 'number' && tracked.supervisorPid !== 1, 'the process this session runs is the supervisor');
        assert.deepEqual(p.state.removed, [key]);

        const command = p.terminal.indexOf(process.execPath);
        assert.ok(p.terminal.startsWith('\x1b[2m$ ') && command > 0 && command < p.terminal.indexOf('step 1'), 'the terminal shows the command first');
        assert.ok(p.terminal.includes('step 1 loss 0.5\r\n'));
        assert.ok(p.terminal.includes('a warning\r\n'));
        assert.ok(p.terminal.includes('[job exited with code 3]'));
        assert.ok(!p.terminal.includes('"listening"'), 'events are not printed');
        assert.deepEqual(p.outputs('console'), ['The job exited with code 0.\n']);
        assert.equal(p.events('terminated').length, 1);
    });

    it("records the job's folder and stop mode and passes the ranks' events on", async () => {
        const spec = job(
            `out({ event: 'job', job: 'J9', dir: '/run/user/1000/rankdebug/J9', pid: 1 });
             out({ event: 'stopped', rank: 1, reason: 'breakpoint', file: '/w/train.py', line: 30, function: 'main', job: 'J9' });
             out({ event: 'blocked', rank: 2, in: 'all_reduce', job: 'J9' });
             out({ event: 'arrived', command: 'step', ranks: [1, 2], job: 'J9' });
             setTimeout(() => process.exit(0), 300);`,
        );
        // `rankdebug launch --stop alone` (node takes what follows its first argument as the script's).
        spec.argv.push('launch', '--stop', 'alone', '--', 'torchrun', '--stop', 'together');
        const p = parent({ __job: spec });
        p.request('launch');
        const key = `launch:${p.session.id}`;
        await until(() => p.state.rankEvents.length === 3, 'three rank events');
        const tracked = p.state.added.get(key);
        assert.equal(tracked?.dir, '/run/user/1000/rankdebug/J9');
        assert.equal(tracked?.stopMode, 'alone');
        assert.deepEqual(
            p.state.rankEvents.map(([k, e]) => [k, e.event]),
            [
                [key, 'stopped'],
                [key, 'blocked'],
                [key, 'arrived'],
            ],
        );
        await until(() => p.terminated, 'the parent to end');
        assert.deepEqual(p.outputs('console'), []);
    });

    it('tells the host of a hang and its end (with the job id of the job event), and never prints them in the terminal', async () => {
        const told: HangEvent[] = [];
        const over: HangOverEvent[] = [];
        const p = parent({
            __job: job(
                `out({ event: 'job', job: 'J8', pid: 1 });
                 out({ event: 'hang', job: 'J8', seconds: 120.5, why: 'rank 1 never reached all_reduce #12', culprits: [{ ranks: [1], why: 'rank 1 never reached all_reduce #12', where: null }] });
                 console.log('step 2 loss 0.4');
                 out({ event: 'hang_over', seconds: 130 });
                 setTimeout(() => process.exit(0), 300);`,
            ),
        });
        Object.assign(p.host, { hang: { hang: (ev: HangEvent) => told.push(ev), hangOver: (ev: HangOverEvent) => over.push(ev) } });
        p.request('launch');
        await until(() => p.terminated, 'the parent to end');
        assert.deepEqual(told, [{ event: 'hang', job: 'J8', seconds: 120.5, why: 'rank 1 never reached all_reduce #12', culprits: [{ ranks: [1], why: 'rank 1 never reached all_reduce #12', where: null }] }]);
        assert.deepEqual(over, [{ event: 'hang_over', job: 'J8', seconds: 130 }]);
        assert.match(p.terminal, /step 2 loss 0\.4/);
        assert.doesNotMatch(p.terminal, /"event":"hang/);
    });

    it('reads the stop mode of a launch argv', () => {
        assert.equal(stopModeOf(['python', 'main.py', 'launch', '--stop', 'alone', '--', 'torchrun']), 'alone');
        assert.equal(stopModeOf(['python', 'main.py', 'launch', '--stop=alone']), 'alone');
        assert.equal(stopModeOf(['python', 'main.py', 'launch', '--stop', 'together']), 'together');
        assert.equal(stopModeOf(['python', 'main.py', 'launch']), 'together');
        assert.equal(stopModeOf(['python', 'main.py', 'launch', '--', 'torchrun', 'train.py', '--stop', 'alone']), 'together', "the job's own arguments are not rankdebug's");
    });

    it('shows an error event and ends when the process does', async () => {
        const p = parent({ __job: job(`out({ error: { message: 'torchrun: no such file train.py' } }); setTimeout(() => process.exit(2), 500);`) });
        p.request('launch');
        await until(() => p.host.errors.length > 0, 'the error');
        assert.deepEqual(p.host.errors, ['Rank Debugger: torchrun: no such file train.py']);
        assert.deepEqual(p.outputs('stderr'), ['torchrun: no such file train.py\n']);
        assert.equal(p.terminated, false, 'the job still runs');
        await until(() => p.terminated, 'the parent to end');
        assert.ok(p.terminal.includes('[job exited with code 2]'));
    });

    it('says why the job could not start', async () => {
        const p = parent({ __job: job('', { argv: ['/nonexistent/rankdebug-python', 'main.py'] }) });
        p.request('launch');
        await until(() => p.terminated, 'the parent to end');
        const [output] = p.outputs('stderr');
        assert.match(output, /^Could not start \/nonexistent\/rankdebug-python: .*ENOENT/);
        assert.ok(p.terminal.includes('rankdebug: spawn /nonexistent/rankdebug-python ENOENT\r\n'));
        assert.ok(p.terminal.includes('[job exited with code 127]'));
    });

    it('says so when every rank is armed and none is debugged', async () => {
        const p = parent({ __job: job('', { armed: true, ranks: [], rankSpec: 'arm' }) });
        p.request('launch');
        await until(() => p.terminated, 'the parent to end');
        assert.equal(p.outputs('console')[0], 'Every rank is armed, none is debugged now: attach, evaluate or read stacks from Training Jobs (Run and Debug).\n');
        assert.equal(p.state.added.get(`launch:${p.session.id}`)?.armed, true);
    });

    it('stops the job on terminate (answered first) and on disconnect (answered once it is stopped)', async () => {
        const script = `out({ event: 'listening', rank: 1, host: '127.0.0.1', port: 29002 }); setInterval(() => {}, 1000);`;
        const t = parent({ __job: job(script) });
        t.request('launch');
        await until(() => t.children.length === 1, 'rank 1');
        const terminate = t.request('terminate');
        await until(() => t.terminated, 'the parent to end');
        assert.ok(t.index(t.response(terminate)) < t.index(t.events('terminated')[0]));
        assert.ok(t.terminal.includes('[job exited with code 128]'), 'killed by SIGTERM');

        const d = parent({ __job: job(script) });
        d.request('launch');
        await until(() => d.children.length === 1, 'rank 1');
        const disconnect = d.request('disconnect');
        await until(() => d.response(disconnect) !== undefined, 'the disconnect response');
        assert.ok(d.index(d.events('terminated')[0]) >= 0 && d.index(d.events('terminated')[0]) < d.index(d.response(disconnect)));
        assert.ok(d.terminal.includes('[job exited with code 128]'));
    });

    it('says so when something else killed rankdebug launch outright', async () => {
        const p = parent({ __job: job(`setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50);`) });
        p.request('launch');
        await until(() => p.terminated, 'the parent to end');
        assert.match(p.terminal, /\[rankdebug launch \(pid \d+\) was killed by SIGKILL; the job was ended\]/);
    });

    it("passes the terminal's input to the job, and Ctrl+C as SIGINT", async () => {
        const p = parent({
            __job: job(
                `process.stdin.on('data', (d) => { if (String(d) === 'go\\n') out({ event: 'listening', rank: 0, host: '127.0.0.1', port: 29003 }); });
                 process.on('SIGINT', () => process.exit(130));`,
            ),
        });
        p.request('launch');
        const pty = p.host.terminals[0].pty;
        // The pipe keeps what is typed until the job reads it.
        pty.handleInput?.('go\r');
        await until(() => p.children.length === 1, 'the typed line to reach the job');
        assert.ok(p.terminal.includes('go\r\n'), 'the input is echoed');
        pty.handleInput?.('\x03');
        await until(() => p.terminated, 'the parent to end');
        assert.ok(p.terminal.includes('[job exited with code 130]'), "the job's SIGINT handler ran");
    });

    it('stops the job when the user closes its terminal', async () => {
        const p = parent({ __job: job('setInterval(() => {}, 1000);') });
        p.request('launch');
        await until(() => p.host.terminals.length === 1, 'the terminal');
        p.host.terminals[0].pty.close();
        await until(() => p.terminated, 'the parent to end');
        assert.ok(p.terminal.includes('[job exited with code 128]'));
    });

    it('tries a rank again when its session did not start', async () => {
        const p = parent({
            __job: job(`const l = () => out({ event: 'listening', rank: 0, host: '127.0.0.1', port: 29004 }); l(); setTimeout(l, 300); setTimeout(() => {}, 600);`),
        });
        p.host.startAnswers = [false];
        p.request('launch');
        await until(() => p.terminated, 'the parent to end');
        assert.equal(p.children.length, 2);
        assert.ok(p.state.added.get(`launch:${p.session.id}`)?.ranks.has(0));
    });

    it('lets the jobs view start a rank through a parent that follows the job, keeping the state the rank reported early', async () => {
        const events = path.join(os.tmpdir(), `rankdebug-no-such-events-${process.pid}.jsonl`);
        const p = parent({ __attach: { job: 'J2', ranks: [], events } });
        p.request('attach');
        await until(() => p.messages.length === 1, 'the attach response');
        // A breakpoint hit at once: the rank reports "paused" as soon as its session starts.
        p.host.onDidStartDebugSession((s) => p.state.early.set(s.id, 'paused'));
        const tracked = p.state.added.get(`attach:${p.session.id}`);
        assert.equal(await tracked?.startRank?.({ rank: 5, host: '127.0.0.1', port: 5005 }), true);
        assert.equal(tracked?.ranks.get(5)?.state, 'paused');
        assert.equal(tracked?.ranks.get(5)?.session, p.host.starts[0].child);
        assert.equal(await tracked?.startRank?.({ rank: 5, host: '127.0.0.1', port: 5005 }), true, 'a rank being debugged counts as started');
        assert.equal(p.children.length, 1);
    });

    describe('attach', () => {
        const spec = (over: Partial<AttachSpec> = {}): AttachSpec => ({
            job: 'J3',
            dir: '/run/user/1000/rankdebug/J3',
            ranks: [
                { rank: 0, host: '10.0.0.2', port: 5001 },
                { rank: 1, host: '127.0.0.1', port: 5002 },
            ],
            title: 'torchrun',
            ...over,
        });

        it('starts a child per rank of a running job and ends with the last one', async () => {
            const p = parent({ __attach: spec() });
            p.request('attach');
            await until(() => p.children.length === 2, 'both ranks');
            const key = `attach:${p.session.id}`;
            assert.deepEqual(
                p.children.map((c) => [c.name, c.job, c.connect, c.__rank]),
                [
                    ['rank 0', 'J3', { host: '10.0.0.2', port: 5001 }, { rank: 0, job: 'J3', parentKey: key }],
                    ['rank 1', 'J3', { host: '127.0.0.1', port: 5002 }, { rank: 1, job: 'J3', parentKey: key }],
                ],
            );
            await until(() => p.state.added.get(key)?.ranks.size === 2, 'both ranks tracked');
            const tracked = p.state.added.get(key);
            assert.equal(tracked?.startRank, undefined);
            assert.equal(tracked?.title, 'torchrun');
            assert.equal(tracked?.dir, '/run/user/1000/rankdebug/J3');

            const [first, second] = p.host.starts.map((s) => s.child as vscode.DebugSession);
            p.host.endSession(fakeSession({ type: 'rankdebug', request: 'attach', name: 'elsewhere', __rank: { rank: 0 } }));
            p.host.endSession(first);
            assert.equal(p.terminated, false, 'rank 1 is still debugged');
            assert.equal(tracked?.claimed?.has(0), false, 'rank 0 can be attached again');
            p.host.endSession(second);
            assert.equal(p.events('terminated').length, 1);
            assert.deepEqual(p.state.removed, [key]);
        });

        it('leaves a job it does not own running when it stops', async () => {
            const supervisor = sleeper();
            sleepers.push(supervisor);
            const p = parent({ __attach: spec({ supervisorPid: supervisor.pid }) });
            p.request('attach');
            const disconnect = p.request('disconnect');
            await until(() => p.response(disconnect) !== undefined, 'the disconnect response');
            assert.ok(p.terminated);
            await new Promise((r) => setTimeout(r, 200));
            assert.equal(supervisor.exitCode, null);
            assert.equal(supervisor.signalCode, null);
        });

        describe('following the events file of a job the terminal shim started', () => {
            let dir: string;
            beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-events-'))));
            afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
            const line = (o: object): string => `${JSON.stringify(o)}\n`;

            it('starts the ranks the file announces and ends with its exit', async () => {
                const file = path.join(dir, 'events.jsonl');
                fs.writeFileSync(file, line({ event: 'job', job: 'J5', pid: 777, dir: '/run/user/1000/rankdebug/J5' }) + line({ event: 'listening', rank: 2, host: '127.0.0.1', port: 5003, job: 'J5' }));
                const p = parent({ __attach: spec({ job: 'J5', ranks: [], events: file, stopJobOnEnd: true }) });
                p.request('attach');
                await until(() => p.children.length === 1, 'rank 2');
                const tracked = p.state.added.get(`attach:${p.session.id}`);
                assert.equal(tracked?.supervisorPid, 777, "the file's supervisor");
                assert.equal(tracked?.dir, '/run/user/1000/rankdebug/J5', "the job's folder: its control socket");
                assert.equal(typeof tracked?.startRank, 'function', 'the jobs view lets this parent start its ranks');
                assert.deepEqual(p.children[0].connect, { host: '127.0.0.1', port: 5003 });

                // The child ending does not end a parent that still follows its job.
                p.host.endSession(p.host.starts[0].child as vscode.DebugSession);
                assert.equal(p.terminated, false);

                fs.appendFileSync(file, 'not an event\n' + line({ event: 'listening', rank: 3, host: '127.0.0.1', port: 5004, job: 'J5' }));
                await until(() => p.children.length === 2, 'rank 3');
                fs.appendFileSync(file, line({ event: 'exited', code: 1 }));
                await until(() => p.terminated, 'the parent to end');
                assert.deepEqual(p.outputs('console'), ['The job exited with code 1.\n']);
            });

            it("ends on the file's error, shown", async () => {
                const file = path.join(dir, 'events.jsonl');
                fs.writeFileSync(file, line({ error: { message: 'no GPU' } }));
                const p = parent({ __attach: spec({ job: 'J6', ranks: [], events: file }) });
                p.request('attach');
                await until(() => p.terminated, 'the parent to end');
                assert.deepEqual(p.host.errors, ['Rank Debugger: no GPU']);
            });

            it("stops the shim's job with the session", async () => {
                const supervisor = sleeper();
                sleepers.push(supervisor);
                const file = path.join(dir, 'events.jsonl');
                fs.writeFileSync(file, line({ event: 'job', job: 'J8', pid: supervisor.pid }));
                const p = parent({ __attach: spec({ job: 'J8', ranks: [], events: file, stopJobOnEnd: true }) });
                p.request('attach');
                p.request('terminate');
                assert.equal(await supervisor.gone, 'SIGTERM');
                await until(() => p.terminated, 'the parent to end');
            });
        });
    });
});
