import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { JobSpec, RankdebugConfiguration } from '../../../../extension/src/debug/configuration';
import { JobAdapter } from '../../../../extension/src/debug/jobAdapter';
import { endRankSession, LINK_END, LinkRegistry, LinkSession } from '../../../../extension/src/debug/linkSession';
import { openRoute } from '../../../../extension/src/debug/openRoute';
import { RankLink, type DapMessage } from '../../../../extension/src/debug/rankLink';
import { SessionCap } from '../../../../extension/src/debug/sessionCap';
import { SessionRegistry } from '../../../../extension/src/debug/sessions';
import { rankContext, type JobInfo, type RankInfo } from '../../../../extension/src/core/jobList';
import { Emitter, FakeHost, FakeJobs, fakeSession, until } from './fakes';

/**
 * A rank's gate as its DAP clients see it (supervise/gates/gate.py): initialize answered with
 * debugpy's exception filters, `initialized` after attach, attach answered after
 * configurationDone, one client at a time; `stop` sends its client a stopped event.
 */
class StandInGate {
    readonly server: net.Server;
    /** Every connection's requests, in order. */
    readonly clients: string[][] = [];
    readonly breakpoints: unknown[] = [];
    private current: net.Socket | undefined;
    private seq = 1;

    constructor() {
        this.server = net.createServer((socket) => this.accept(socket));
    }

    async listen(): Promise<number> {
        await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
        return (this.server.address() as net.AddressInfo).port;
    }

    /** The commands of the client connected now, if configured. */
    get configured(): boolean {
        return this.current !== undefined && (this.clients.at(-1) ?? []).includes('configurationDone');
    }

    stop(reason: string): void {
        this.send({ type: 'event', event: 'stopped', body: { reason, threadId: 7, allThreadsStopped: true } });
    }

    private send(m: Record<string, unknown>): void {
        const json = JSON.stringify({ ...m, seq: this.seq++ });
        this.current?.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    }

    private accept(socket: net.Socket): void {
        const said: string[] = [];
        this.clients.push(said);
        this.current = socket;
        let buffer = '';
        let attach: DapMessage | undefined;
        socket.on('error', () => undefined);
        socket.on('close', () => {
            if (this.current === socket) this.current = undefined;
        });
        socket.on('data', (chunk) => {
            buffer += chunk.toString('utf8');
            for (let end = buffer.indexOf('\r\n\r\n'); end >= 0; end = buffer.indexOf('\r\n\r\n')) {
                const length = Number(/Content-Length: (\d+)/.exec(buffer.slice(0, end))?.[1]);
                if (buffer.length < end + 4 + length) return;
                const m = JSON.parse(buffer.slice(end + 4, end + 4 + length)) as DapMessage;
                buffer = buffer.slice(end + 4 + length);
                said.push(m.command ?? '');
                const answer = (body: Record<string, unknown> = {}): void => this.send({ type: 'response', request_seq: m.seq, command: m.command, success: true, body });
                if (m.command === 'initialize') answer({ exceptionBreakpointFilters: [{ filter: 'raised', default: false }, { filter: 'uncaught', default: true }] });
                else if (m.command === 'attach') {
                    attach = m;
                    this.send({ type: 'event', event: 'initialized' });
                } else if (m.command === 'configurationDone') {
                    answer();
                    if (attach) this.send({ type: 'response', request_seq: attach.seq, command: 'attach', success: true, body: {} });
                } else if (m.command === 'setBreakpoints') {
                    this.breakpoints.push(m.arguments);
                    answer({ breakpoints: [] });
                } else if (m.command === 'setExceptionBreakpoints') {
                    this.breakpoints.push(m.arguments);
                    answer();
                } else if (m.command === 'threads') answer({ threads: [{ id: 7, name: 'MainThread' }] });
                else if (m.command === 'disconnect') {
                    answer();
                    socket.end();
                } else answer();
            }
        });
    }
}

const CAP = 16;
const CHOSEN = 40;

/** A rank of the job as the registry lists it: its gate has a client (a link), the rank no `attached` of its own yet. */
const rankInfo = (rank: number): RankInfo => ({ pid: 1000 + rank, rank, localRank: rank % 8, worldSize: CHOSEN, host: 'n0', port: 5000 + rank, address: '127.0.0.1', state: 'running', cpu: null, rss: null, gpu: null, armed: false, raised: null });
const jobInfo: JobInfo = { id: 'J40', source: 'registry', host: 'n0', launcher: 'torchrun', launcherPid: 1, command: [], cwd: null, startTime: null, worldSize: CHOSEN, armed: false, dir: '/run/J40', ranks: [] };

/** Whether Training Jobs' context menu offers `command` on a row with this contextValue (package.json's `when`). */
function menuOffers(command: string, viewItem: string): boolean {
    const pkg = JSON.parse(fs.readFileSync(path.join(process.cwd(), 'package.json'), 'utf8')) as { contributes: { menus: Record<string, { command: string; when?: string }[]> } };
    const item = pkg.contributes.menus['view/item/context'].find((m) => m.command === command && m.when?.includes('viewItem =~'));
    const re = /viewItem =~ \/(.*)\/$/.exec(item?.when ?? '')?.[1];
    return re !== undefined && new RegExp(re).test(viewItem);
}

describe('debug/sessionCap', () => {
    describe('SessionCap', () => {
        it('keeps the first sessions for the lowest chosen ranks, whatever order they come up in', () => {
            const cap = new SessionCap(2, [9, 3, 5, 7]);
            assert.equal(cap.wantsSession(9, 0, new Set()), false, 'ranks 3 and 5 are still to come');
            assert.equal(cap.wantsSession(5, 0, new Set([9])), true);
            assert.equal(cap.wantsSession(3, 2, new Set([9, 5])), false, 'the cap is reached');
            // Unknown chosen ranks: first come, first served.
            assert.equal(new SessionCap(2, null).wantsSession(9, 1, new Set([4])), true);
        });

        it('ends the least recently used running sessions, never a stopped or focused one', () => {
            const cap = new SessionCap(3, null);
            const s = (rank: number, used: number, stopped = false, focused = false) => ({ rank, used, stopped, focused });
            assert.deepEqual(cap.toEnd([s(0, 5), s(1, 1), s(2, 9)], 1), [1]);
            assert.deepEqual(cap.toEnd([s(0, 5, true), s(1, 1, false, true), s(2, 9)], 1), [2]);
            assert.deepEqual(cap.toEnd([s(0, 5, true), s(1, 1, true), s(2, 9, false, true)], 1), [], 'none idle: nothing to end');
            assert.deepEqual(cap.toEnd([s(0, 5), s(1, 1)], 1), [], 'room left');
        });
    });

    describe('a job with 40 chosen ranks and rankdebug.maxSessions 16', () => {
        let gates: StandInGate[] = [];
        let adapter: JobAdapter | undefined;
        afterEach(() => {
            adapter?.dispose();
            gates.forEach((g) => g.server.close());
            gates = [];
        });

        /** A job whose stand-in supervisor announces the ranks (highest first), then prints each stdin line as an event. */
        async function start(): Promise<{ host: FakeHost; state: FakeJobs; session: vscode.DebugSession; messages: DapMessage[]; ports: number[] }> {
            gates = Array.from({ length: CHOSEN }, () => new StandInGate());
            const ports = await Promise.all(gates.map((g) => g.listen()));
            const listening = ports.map((port, rank) => ({ event: 'listening', rank, host: '127.0.0.1', port, job: 'J40' })).reverse();
            const script = `for (const e of ${JSON.stringify(listening)}) console.log(JSON.stringify(e));
                process.stdin.setEncoding('utf8');
                process.stdin.on('data', (d) => d.split('\\n').filter(Boolean).forEach((l) => console.log(l)));`;
            const spec: JobSpec = { argv: [process.execPath, '-e', script], env: {}, cwd: os.tmpdir(), ranks: [...Array(CHOSEN).keys()], rankSpec: '0-39', worldSize: CHOSEN, title: 'train.py', armed: false };
            const host = new FakeHost();
            host.maxSessionsSetting = CAP;
            const state = new FakeJobs();
            const sessions = new SessionRegistry();
            sessions.track(host);
            const session = fakeSession({ type: 'rankdebug', request: 'launch', name: 'job', __job: spec });
            adapter = new JobAdapter(session, { state, sessions, host, links: new LinkRegistry() });
            const messages: DapMessage[] = [];
            adapter.onDidSendMessage((m) => messages.push(m as DapMessage));
            adapter.handleMessage({ seq: 1, type: 'request', command: 'launch' });
            return { host, state, session, messages, ports };
        }

        const say = (host: FakeHost, event: Record<string, unknown>): void => host.terminals[0].pty.handleInput?.(`${JSON.stringify(event)}\r`);
        const sessionRanks = (host: FakeHost): number[] => host.starts.filter((s) => s.child && !host.stopped.includes(s.child)).map((s) => (s.config as RankdebugConfiguration).__rank?.rank ?? -1);

        it('opens 16 sessions (the lowest ranks), links the 24 others and says so; a click promotes one and ends the least recently used running session', async () => {
            const { host, state, session, messages } = await start();
            await until(() => gates.slice(CAP).every((g) => g.configured), 'the 24 links to be configured', 20000);
            assert.deepEqual(sessionRanks(host), [...Array(CAP).keys()].reverse(), 'ranks 0-15 get the sessions');
            assert.ok(gates.slice(0, CAP).every((g) => g.clients.length === 0), 'no link to a rank with a session');
            assert.deepEqual(gates[20].clients[0], ['initialize', 'attach', 'setExceptionBreakpoints', 'configurationDone']);
            assert.deepEqual(gates[20].breakpoints, [{ filters: ['uncaught'] }], "debugpy's default exception filters");
            await until(() => messages.some((m) => String(m.body?.output).includes('ranks 16-39 debugged without a session')), 'the report');
            // The linked ranks are the job's, with no session: Training Jobs offers them Open Session, not Attach.
            const tracked = state.added.get(`launch:${session.id}`);
            await until(() => tracked?.ranks.size === CHOSEN, 'every chosen rank tracked');
            const entry = (rank: number) => tracked?.ranks.get(rank);
            assert.deepEqual(entry(30), { rank: 30, state: 'attached' }, 'rank 30: tracked, no session');
            const context = rankContext(rankInfo(30), jobInfo, entry(30)?.state);
            assert.equal(menuOffers('rankdebug.jobs.openSession', context), true, `Open Session on ${context}`);
            assert.equal(menuOffers('rankdebug.jobs.attach', context), false, `no Attach on ${context}`);
            assert.equal(menuOffers('rankdebug.jobs.openSession', rankContext(rankInfo(30), jobInfo, undefined)), false, 'the menu itself: an untracked rank is attached, not opened');
            assert.ok(entry(3)?.session, 'rank 3 has its session');
            // Open Session: the registry lists no port for a linked rank (it never said `attached`): its parent promotes it all the same.
            assert.equal(openRoute(tracked, { rank: 20, port: null }), 'promote');
            assert.equal(openRoute(tracked, { rank: 3, port: 5003 }), 'shown');
            assert.equal(openRoute(tracked, { rank: 45, port: null }), 'attach', 'a rank the parent does not debug, with no port: Attach');
            assert.equal(openRoute(undefined, { rank: 20, port: 5020 }), 'attach', 'no parent of this window follows the job');

            // Breakpoints set later reach the ranks with no session.
            host.changeBreakpoints([{ path: '/w/train.py', breakpoints: [{ line: 12 }] }]);
            await until(() => gates[39].breakpoints.length === 2, 'the new breakpoint');
            assert.deepEqual(gates[39].breakpoints[1], { source: { path: '/w/train.py' }, breakpoints: [{ line: 12 }] });

            // Every session but rank 9's was in view more lately.
            const child = (rank: number) => host.starts.find((s) => (s.config as RankdebugConfiguration).__rank?.rank === rank)?.child;
            for (const rank of [...Array(CAP).keys()].filter((r) => r !== 9)) {
                await new Promise((r) => setTimeout(r, 2));
                host.focus(child(rank));
            }
            assert.equal(await tracked?.startRank?.({ rank: 20, host: '127.0.0.1', port: 0, job: 'J40' }), true);
            assert.deepEqual(host.stopped, [child(9)], "rank 9's session is ended");
            const promoted = host.starts.at(-1)?.config as RankdebugConfiguration;
            assert.deepEqual(promoted.__rank, { rank: 20, job: 'J40', parentKey: `launch:${session.id}`, linked: true }, 'over the link rank 20 has');
            assert.equal(sessionRanks(host).length, CAP, '16 sessions again');
            await until(() => gates[9].configured, 'rank 9 to be linked again (it still stops together)');
            assert.equal(gates[20].clients.length, 1, "rank 20's gate saw no disconnect");
            assert.ok(entry(20)?.session, 'rank 20 has its session');
            await until(() => entry(9) !== undefined && !entry(9)?.session, 'rank 9 tracked again, with no session');
            // The user closes rank 20's session: the rank stays the job's, over its link.
            const ended = child(20);
            if (ended) host.endSession(ended);
            assert.deepEqual(entry(20), { rank: 20, state: 'attached' });
            assert.equal(tracked?.ranks.size, CHOSEN);
        });

        it('promotes a rank with no session that stops first, past the cap when every session is stopped, and keeps the cap once they run', async () => {
            const { host, state, session, messages } = await start();
            await until(() => gates.slice(CAP).every((g) => g.configured), 'the links', 20000);
            const tracked = state.added.get(`launch:${session.id}`);
            await until(() => [...(tracked?.ranks.values() ?? [])].filter((r) => r.session).length === CAP, 'the sessions registered');
            // Rank 30 hits a breakpoint; the job pauses the others (their sessions say paused).
            gates[30].stop('breakpoint');
            for (const r of tracked?.ranks.values() ?? []) r.state = 'paused';
            say(host, { event: 'stopped', rank: 30, reason: 'breakpoint', file: '/w/train.py', line: 12, function: 'step' });
            await until(() => (host.starts.at(-1)?.config as RankdebugConfiguration).__rank?.rank === 30, 'rank 30 promoted');
            assert.equal(tracked?.ranks.get(30)?.state, 'paused', 'shown paused where it stopped');
            assert.equal(host.stopped.length, 0, 'no stopped session is ended');
            assert.ok(messages.some((m) => String(m.body?.output).includes('Rank 30 gets a session past rankdebug.maxSessions (16)')));
            // Rank 31 stops at the same breakpoint after it: no promotion (the user is in rank 30).
            say(host, { event: 'stopped', rank: 31, reason: 'breakpoint', file: '/w/train.py', line: 12, function: 'step' });
            await new Promise((r) => setTimeout(r, 300));
            assert.equal(host.starts.length, CAP + 1);
            assert.equal(tracked?.ranks.get(31)?.state, 'paused', 'a rank with no session is shown paused by the supervisor\'s word');
            // Continue All: the ranks run, and the least recently used session goes.
            for (const r of tracked?.ranks.values() ?? []) r.state = 'attached';
            for (let rank = 0; rank < CHOSEN; rank++) say(host, { event: 'continued', rank });
            await until(() => host.stopped.length === 1, 'one session ended for the cap', 8000);
            assert.equal(tracked?.ranks.get(31)?.state, 'attached', 'and running again');
            assert.equal(sessionRanks(host).length, CAP);
        });
    });

    describe('endRankSession', () => {
        /** A session that records its custom requests; `refuse`: the commands its adapter refuses. */
        const session = (linked: boolean, refuse: string[] = []) => {
            const asked: [string, unknown][] = [];
            return {
                asked,
                configuration: { type: 'rankdebug', request: 'attach', name: 'rank 5', __rank: { rank: 5, ...(linked ? { linked: true } : {}) } },
                customRequest: (command: string, args?: unknown) => {
                    asked.push([command, args]);
                    return refuse.includes(command) ? Promise.reject(new Error('unknown request')) : Promise.resolve({});
                },
            };
        };

        it('ends a session on the gate with disconnect (the rank runs on), a linked one with its own request, never the job', async () => {
            const direct = session(false);
            await endRankSession(direct);
            assert.deepEqual(direct.asked, [['disconnect', { restart: false, terminateDebuggee: false }]]);
            const linked = session(true);
            await endRankSession(linked);
            assert.deepEqual(linked.asked, [[LINK_END, undefined]]);
            const gone = session(true, [LINK_END]);
            await endRankSession(gone);
            assert.deepEqual(gone.asked.map(([c]) => c), [LINK_END, 'disconnect'], 'a linked configuration the gate took (its link had gone)');
        });
    });

    describe('LinkSession', () => {
        it('ends on LINK_END (terminated, for VS Code to disconnect it), the rank left to its link', async () => {
            const gate = new StandInGate();
            const port = await gate.listen();
            try {
                const link = new RankLink(4, '127.0.0.1', port);
                await link.open({ type: 'rankdebug', request: 'attach', name: 'rank 4' }, []);
                const emitter = new Emitter<vscode.DebugProtocolMessage>();
                const view = new LinkSession(link, emitter);
                const out: DapMessage[] = [];
                emitter.event((m) => out.push(m as DapMessage));
                view.handleMessage({ seq: 1, type: 'request', command: LINK_END });
                assert.equal(out.find((m) => m.command === LINK_END)?.success, true);
                assert.equal(out.at(-1)?.event, 'terminated');
                assert.equal(link.shown, false);
                view.handleMessage({ seq: 2, type: 'request', command: 'disconnect', arguments: { terminateDebuggee: false } });
                await new Promise((r) => setTimeout(r, 100));
                assert.deepEqual(gate.clients[0], ['initialize', 'attach', 'setExceptionBreakpoints', 'configurationDone'], 'the rank saw no disconnect');
                assert.equal(link.closed, false);
                await link.close();
            } finally {
                gate.server.close();
            }
        });

        it('shows a linked rank stopped where it is, relays requests, and ends without a disconnect to the rank', async () => {
            const gate = new StandInGate();
            const port = await gate.listen();
            try {
                const link = new RankLink(3, '127.0.0.1', port);
                await link.open({ type: 'rankdebug', request: 'attach', name: 'rank 3' }, []);
                gate.stop('breakpoint');
                await until(() => link.stopped?.threadId === 7, 'the stop');
                const emitter = new Emitter<vscode.DebugProtocolMessage>();
                const view = new LinkSession(link, emitter);
                const out: DapMessage[] = [];
                emitter.event((m) => out.push(m as DapMessage));
                for (const [seq, command] of ['initialize', 'attach', 'configurationDone', 'threads'].entries()) view.handleMessage({ seq: seq + 1, type: 'request', command });
                await until(() => out.some((m) => m.command === 'threads'), 'the threads answer');
                assert.deepEqual(out.find((m) => m.command === 'initialize')?.body, link.capabilities);
                assert.deepEqual(out.find((m) => m.event === 'stopped')?.body, { reason: 'breakpoint', threadId: 7, allThreadsStopped: true });
                assert.deepEqual(out.find((m) => m.command === 'threads')?.body, { threads: [{ id: 7, name: 'MainThread' }] });
                view.handleMessage({ seq: 9, type: 'request', command: 'disconnect', arguments: { terminateDebuggee: true } });
                assert.equal(out.at(-1)?.success, true);
                assert.equal(link.shown, false);
                await new Promise((r) => setTimeout(r, 100));
                assert.deepEqual(gate.clients[0], ['initialize', 'attach', 'setExceptionBreakpoints', 'configurationDone', 'threads'], 'the rank saw no disconnect');
                await link.close();
                assert.equal(gate.clients[0].at(-1), 'disconnect');
            } finally {
                gate.server.close();
            }
        });
    });
});
