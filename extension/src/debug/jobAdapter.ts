/**
 * The parent session's debug adapter (DAP, in this process). It has no threads of its own: it
 * owns a job and its rank sessions. `launch` runs the job (jobProcess.ts) and follows its
 * stdout events; `attach` is a parent over ranks of a running job, following the shim's events
 * file (eventsFile.ts) when it has one. A `listening` rank gets a child session `rank N` (up to
 * `rankdebug.maxSessions`; the other chosen ranks get a link, rankLink.ts, and a session when
 * promoted: a click in Training Jobs, or the first stop of the group at a breakpoint); the
 * ranks' `stopped`/`continued`/`blocked`/`raised`/`arrived` events go to the jobs' state (live
 * states, group command reports); the `job` event names the job's folder, where its control
 * socket is; the hang watch's `hang`/`hang_over` go to the host's `hang` (the notification). The
 * job's exit (or, for a job it does not own, its last rank's end) ends the parent.
 */
import type * as vscode from 'vscode';
import { rankConfiguration } from '../core/debugPlan';
import type { StopMode } from '../core/control';
import { parseEvent, rankLabel, type JobEvent, type LaunchEvent, type ListeningEvent } from '../core/events';
import { formatSpec } from '../core/ranks';
import { parseHangEvent, type HangEvent, type HangOverEvent } from '../core/hangEvents';
import type { JobState, TrackedJob } from '../jobs/jobState';
import type { RankdebugConfiguration } from './configuration';
import { EventsFile } from './eventsFile';
import type { AdapterHost } from './host';
import { JobProcess } from './jobProcess';
import { LinkRegistry } from './linkSession';
import { RankLink } from './rankLink';
import { SessionCap, type CapSession } from './sessionCap';
import type { SessionRegistry } from './sessions';

/** The parts of the jobs' state (jobState.ts) the adapter writes. */
export type JobStore = Pick<JobState, 'add' | 'update' | 'remove' | 'setRankState' | 'takeEarlyState' | 'rankEvent'>;

/** The `--stop` mode an argv of `rankdebug launch` asks for (the flag's default: together). */
export function stopModeOf(argv: readonly string[]): StopMode {
    // Only rankdebug's own options: the job's command follows `--`.
    const end = argv.indexOf('--');
    const own = end >= 0 ? argv.slice(0, end) : argv;
    const i = own.lastIndexOf('--stop');
    const value = i >= 0 ? own[i + 1] : own.find((a) => a.startsWith('--stop='))?.slice('--stop='.length);
    return value === 'alone' ? 'alone' : 'together';
}

/** What a job adapter works with besides its session. */
export interface JobAdapterDeps {
    state: JobStore;
    sessions: Pick<SessionRegistry, 'find'>;
    host: AdapterHost;
    /** Where linked sessions find their rank's link (descriptorFactory.ts); one of its own when not given. */
    links?: LinkRegistry;
}

/** Milliseconds the ranks that came up without a session are gathered before one line says them all. */
const REPORT_GATHER_MS = 1000;
/** Milliseconds after the last `continued` before sessions past the cap are ended. */
const TRIM_AFTER_MS = 1500;

interface DapRequest {
    seq: number;
    type: 'request';
    command: string;
    arguments?: Record<string, unknown>;
}

export class JobAdapter implements vscode.DebugAdapter {
    private readonly emitter: vscode.EventEmitter<vscode.DebugProtocolMessage>;
    readonly onDidSendMessage: vscode.Event<vscode.DebugProtocolMessage>;
    private readonly state: JobStore;
    private readonly host: AdapterHost;
    private seq = 1;
    /** The job this session runs (launch), until it exits. */
    private job: JobProcess | undefined;
    /** The events file this session follows (attach from the terminal shim). */
    private events: EventsFile | undefined;
    private tracked: TrackedJob | undefined;
    private terminatedSent = false;
    private readonly disposables: vscode.Disposable[] = [];
    /** Ranks with a child session, or one starting. */
    private readonly started = new Set<number>();
    /** Ray actor ranks' roles (`role` events), for their sessions' labels. */
    private readonly roles = new Map<number, string>();
    private stopJobOnEnd = true;
    /** The cap on rank sessions (`rankdebug.maxSessions`), once the chosen ranks are known. */
    private cap: SessionCap;
    private readonly links: LinkRegistry;
    /** Ranks debugged over a link of this parent (no session, or a linked one). */
    private readonly linked = new Map<number, RankLink>();
    /** Links being opened. */
    private readonly linking = new Map<number, Promise<boolean>>();
    /** Each rank's endpoint, as it listens. */
    private readonly endpoints = new Map<number, ListeningEvent>();
    /** When each rank's session was last started, focused or stopped (the cap's LRU). */
    private readonly used = new Map<number, number>();
    /** Ranks the supervisor says are stopped, with why. */
    private readonly stops = new Map<number, string>();
    /** Sessions the cap ended: their rank gets a link again. */
    private readonly evicted = new Set<number>();
    private readonly unreported = new Set<number>();
    private reportTimer: NodeJS.Timeout | undefined;
    private trimTimer: NodeJS.Timeout | undefined;

    constructor(
        private readonly session: vscode.DebugSession,
        private readonly deps: JobAdapterDeps,
    ) {
        this.state = deps.state;
        this.host = deps.host;
        this.emitter = deps.host.emitter<vscode.DebugProtocolMessage>();
        this.onDidSendMessage = this.emitter.event;
        this.links = deps.links ?? new LinkRegistry();
        this.cap = new SessionCap(Math.max(1, deps.host.maxSessions()), null);
        this.disposables.push(
            deps.host.onDidTerminateDebugSession((s) => this.onChildEnded(s)),
            deps.host.onDidChangeActiveDebugSession((s) => this.onFocus(s)),
            deps.host.onDidChangeBreakpoints(() => this.syncBreakpoints()),
        );
    }

    private get config(): RankdebugConfiguration {
        return this.session.configuration as RankdebugConfiguration;
    }

    handleMessage(message: vscode.DebugProtocolMessage): void {
        const req = message as DapRequest;
        if (req.type !== 'request') return;
        void this.handle(req).catch((e: unknown) => this.respond(req, false, {}, e instanceof Error ? e.message : String(e)));
    }

    private async handle(req: DapRequest): Promise<void> {
        switch (req.command) {
            case 'initialize':
                this.respond(req, true, { supportsConfigurationDoneRequest: false, supportsTerminateRequest: true });
                return;
            case 'launch':
                this.launch();
                this.respond(req, true);
                return;
            case 'attach':
                this.attach();
                this.respond(req, true);
                return;
            case 'terminate':
                this.respond(req, true);
                await this.stop();
                return;
            case 'disconnect':
                await this.stop();
                this.respond(req, true);
                return;
            case 'threads':
                this.respond(req, true, { threads: [] });
                return;
            default:
                this.respond(req, false, {}, this.host.l10n.t('Select a rank in the Call Stack: the job session itself runs no Python.'));
        }
    }

    private respond(req: DapRequest, success: boolean, body: Record<string, unknown> = {}, message?: string): void {
        this.emitter.fire({ seq: this.seq++, type: 'response', request_seq: req.seq, command: req.command, success, body, ...(message ? { message } : {}) } as vscode.DebugProtocolMessage);
    }

    private event(event: string, body: Record<string, unknown> = {}): void {
        this.emitter.fire({ seq: this.seq++, type: 'event', event, body } as vscode.DebugProtocolMessage);
    }

    private output(text: string, category = 'console'): void {
        this.event('output', { category, output: text.endsWith('\n') ? text : `${text}\n` });
    }

    private sendTerminated(): void {
        if (this.terminatedSent) return;
        this.terminatedSent = true;
        this.event('terminated');
        if (this.tracked) this.state.remove(this.tracked.key);
    }

    /** A child session of this parent has ended. */
    private onChildEnded(s: vscode.DebugSession): void {
        if (s.parentSession?.id !== this.session.id || !this.tracked) return;
        // The rank can be attached again (its adapter takes a new client).
        const rank = (s.configuration as RankdebugConfiguration).__rank?.rank;
        if (rank !== undefined) {
            this.started.delete(rank);
            this.used.delete(rank);
            // A session the cap ended straight on the gate: the rank gets its link back, so it
            // still stops together (a linked session's rank never left its link).
            const ep = this.endpoints.get(rank);
            if (this.evicted.delete(rank) && ep && !this.linked.has(rank)) void this.openLink(ep);
        }
        const still = [...this.tracked.ranks.values()].some((r) => r.session && r.session.id !== s.id);
        this.state.setRankState(s, undefined);
        // A rank shown over its link goes back to being debugged without a session.
        if (rank !== undefined && this.linked.has(rank)) this.trackLinked(rank);
        // A parent over a job it does not own ends with its last rank.
        if (!this.job && !still && !this.events?.watching) this.sendTerminated();
    }

    /** Starts `rankdebug launch --json` in a pseudoterminal and follows its events. */
    private launch(): void {
        const spec = this.config.__job;
        if (!spec) throw new Error('internal: launch without a resolved job');
        const tracked = this.state.add({
            key: `launch:${this.session.id}`,
            title: spec.title,
            worldSize: spec.worldSize,
            command: spec.argv,
            parent: this.session,
            ranks: new Map(),
            armed: spec.armed,
            stopMode: stopModeOf(spec.argv),
            claimed: this.started,
            startRank: (ep) => this.promote({ event: 'listening', ...ep }),
        });
        this.tracked = tracked;
        this.cap = new SessionCap(this.cap.cap, spec.ranks);
        const job = new JobProcess(spec, this.host, {
            onLine: (line) => this.onLine(line),
            onSpawnError: (e) => this.output(this.host.l10n.t('Could not start {0}: {1}', spec.argv[0], e.message), 'stderr'),
            onExit: () => {
                this.job = undefined;
                this.sendTerminated();
            },
            onClose: () => void this.stop(),
        });
        this.job = job;
        const terminal = job.openTerminal();
        this.state.update(tracked, (j) => (j.terminal = terminal));
        if (spec.armed && !spec.ranks?.length) {
            this.output(this.host.l10n.t('Every rank is armed, none is debugged now: attach, evaluate or read stacks from Training Jobs (Run and Debug).'));
        }
        const pid = job.spawn();
        this.state.update(tracked, (j) => (j.supervisorPid = pid));
    }

    /** A parent over ranks of a job already running (jobs view, terminal shim, launch.json). */
    private attach(): void {
        const spec = this.config.__attach;
        if (!spec) throw new Error('internal: attach without a resolved job');
        this.stopJobOnEnd = spec.stopJobOnEnd ?? false;
        this.tracked = this.state.add({
            key: `attach:${this.session.id}`,
            job: spec.job,
            title: spec.title ?? spec.job,
            worldSize: spec.worldSize,
            parent: this.session,
            supervisorPid: spec.supervisorPid,
            dir: spec.dir,
            ranks: new Map(),
            claimed: this.started,
            // A parent that follows the job's events (the terminal shim) starts its ranks' sessions itself.
            startRank: spec.events ? (ep) => this.promote({ event: 'listening', ...ep }) : undefined,
        });
        // Ranks picked by hand in Training Jobs each get their session; the cap is for the
        // ranks a followed job announces.
        if (spec.events) this.cap = new SessionCap(this.cap.cap, null);
        else this.cap = new SessionCap(Math.max(this.cap.cap, spec.ranks.length), null);
        for (const r of spec.ranks) void this.comeUp({ event: 'listening', rank: r.rank, host: r.host, port: r.port, job: spec.job });
        if (spec.events) {
            this.events = new EventsFile(spec.events, (line) => this.onLine(line));
            this.events.start();
        }
    }

    /** One line of `rankdebug launch --json`: an event, or the job's output for its terminal. */
    private onLine(line: string): void {
        const hang = parseHangEvent(line);
        if (hang) {
            this.onHang(hang);
            return;
        }
        const ev: LaunchEvent | undefined = parseEvent(line);
        if (!ev) {
            if (line.trim()) this.job?.print(line);
            return;
        }
        const tracked = this.tracked;
        switch (ev.event) {
            case 'job':
                this.onJob(ev);
                break;
            case 'listening':
                void this.comeUp(ev);
                break;
            case 'role':
                this.roles.set(ev.rank, ev.role);
                this.nameRank(ev.rank);
                break;
            case 'error':
                this.host.showError(this.host.l10n.t('Rank Debugger: {0}', ev.message));
                this.output(ev.message, 'stderr');
                // A job this session runs ends with its process; a followed one with its events.
                if (!this.job) this.finish();
                break;
            case 'exited':
                this.output(this.host.l10n.t('The job exited with code {0}.', ev.code));
                if (!this.job) this.finish();
                break;
            default:
                this.onRankEvent(ev);
                if (tracked) this.state.rankEvent(tracked, ev);
                break;
        }
    }

    /** What the cap follows of the ranks' events: who is stopped, who runs again. */
    private onRankEvent(ev: LaunchEvent): void {
        if (ev.event === 'stopped') this.onStopped(ev.rank, ev.reason);
        else if (ev.event === 'continued') {
            this.stops.delete(ev.rank);
            this.scheduleTrim();
        }
        // A rank with no session has no session events: the supervisor's say whether it is paused.
        if (ev.event === 'stopped' || ev.event === 'continued') {
            const entry = this.tracked?.ranks.get(ev.rank);
            const now = ev.event === 'stopped' ? 'paused' : 'attached';
            if (this.tracked && entry && !entry.session && entry.state !== now) {
                this.state.update(this.tracked, () => {
                    entry.state = now;
                });
            }
        }
    }

    /**
     * A rank debugged over a link with no session is the job's (tracked with no session): its
     * Training Jobs row offers Open Session, not Attach (its gate has a client already), and the
     * status bar counts it.
     */
    private trackLinked(rank: number): void {
        const link = this.linked.get(rank);
        const tracked = this.tracked;
        if (!tracked || !link || link.closed || tracked.ranks.get(rank)?.session) return;
        this.state.update(tracked, (j) => j.ranks.set(rank, { rank, state: link.stopped || this.stops.has(rank) ? 'paused' : 'attached' }));
    }

    /**
     * A chosen rank stopped: a rank with no session that is the first to stop on its own (a
     * breakpoint, an exception; not the group's pause) gets one, so the user lands where it stopped.
     */
    private onStopped(rank: number, reason: string): void {
        const first = reason !== 'pause' && ![...this.stops].some(([r, why]) => r !== rank && why !== 'pause');
        this.stops.set(rank, reason);
        if (this.started.has(rank)) this.used.set(rank, Date.now());
        const ep = this.endpoints.get(rank);
        if (first && ep && this.linked.has(rank) && !this.started.has(rank)) {
            this.host.log.info(`rank ${rank} stopped first (${reason}) with no session: promoted`);
            void this.promote(ep);
        }
    }

    private onFocus(s: vscode.DebugSession | undefined): void {
        const rank = s?.parentSession?.id === this.session.id ? (s.configuration as RankdebugConfiguration).__rank?.rank : undefined;
        if (rank !== undefined) this.used.set(rank, Date.now());
    }

    /** The hang watch's word, with the job's id when the line has none. */
    private onHang(ev: HangEvent | HangOverEvent): void {
        const job = ev.job ?? this.tracked?.job ?? null;
        if (ev.event === 'hang') this.host.hang?.hang({ ...ev, job });
        else this.host.hang?.hangOver({ ...ev, job });
    }

    /** The job's id, its folder (the control socket's), and for a job this session did not start its supervisor's pid. */
    private onJob(ev: JobEvent): void {
        const tracked = this.tracked;
        if (!tracked) return;
        this.state.update(tracked, (j) => {
            j.job = ev.job;
            if (ev.dir) j.dir = ev.dir;
            if (ev.pid && !this.job) j.supervisorPid = ev.pid;
        });
    }

    private finish(): void {
        this.events?.close();
        // A job that runs on (attached, not owned) lets its ranks run on: the links say goodbye.
        for (const link of this.linked.values()) void link.close();
        this.sendTerminated();
    }

    /**
     * A chosen rank listens: a session while the cap has room (kept for the lowest chosen
     * ranks), else a link. Once per rank (its gate takes one client).
     */
    private async comeUp(ev: ListeningEvent): Promise<boolean> {
        if (this.terminatedSent) return false;
        this.endpoints.set(ev.rank, ev);
        if (this.started.has(ev.rank) || this.linked.has(ev.rank)) return true;
        const opening = this.linking.get(ev.rank);
        if (opening) return opening;
        const seen = new Set([...this.started, ...this.linked.keys(), ...this.linking.keys()]);
        if (this.cap.wantsSession(ev.rank, this.started.size, seen)) return this.startRank(ev);
        return this.openLink(ev);
    }

    /**
     * A rank's full session, asked for (Training Jobs, or its stop): over its link when it has
     * one. Past the cap the least recently used idle session is ended first; with none idle
     * (every session stopped or in view), the rank's session goes past the cap, said.
     */
    private async promote(ev: ListeningEvent): Promise<boolean> {
        if (this.terminatedSent) return false;
        if (!this.endpoints.has(ev.rank)) this.endpoints.set(ev.rank, ev);
        if (this.started.has(ev.rank)) return true;
        const opening = this.linking.get(ev.rank);
        if (opening) await opening;
        if (this.started.has(ev.rank)) return true;
        await this.makeRoom(1, ev.rank);
        return this.startRank(this.endpoints.get(ev.rank) ?? ev);
    }

    /** The sessions as the cap weighs them. */
    private capSessions(): CapSession[] {
        const active = this.host.activeSession();
        return [...this.started].map((rank) => {
            const child = this.deps.sessions.find(this.session, rank);
            const paused = this.tracked?.ranks.get(rank)?.state === 'paused';
            return { rank, stopped: paused || this.stops.has(rank), focused: child !== undefined && child.id === active?.id, used: this.used.get(rank) ?? 0 };
        });
    }

    /** Ends the least recently used idle sessions so that `adding` more fit the cap; says when they cannot. */
    private async makeRoom(adding: number, forRank?: number): Promise<void> {
        const sessions = this.capSessions();
        const end = this.cap.toEnd(sessions, adding);
        const short = sessions.length + adding - this.cap.cap - end.length;
        if (short > 0 && forRank !== undefined) {
            const text = this.host.l10n.t(
                'Rank {0} gets a session past rankdebug.maxSessions ({1}): every other rank session is stopped or in view. The cap is kept again once ranks run.',
                forRank,
                this.cap.cap,
            );
            this.output(text);
            this.host.log.warn(text);
        }
        await Promise.all(end.map((rank) => this.evict(rank)));
    }

    /** Ends a rank's session to make room: only VS Code lets go of the rank; the rank stays debugged over its link. */
    private async evict(rank: number): Promise<void> {
        const child = this.deps.sessions.find(this.session, rank);
        if (!child) return;
        this.host.log.info(`rank ${rank}: session ended for the cap (least recently used, running)`);
        this.evicted.add(rank);
        await this.host.stopSession(child);
    }

    /** After ranks ran on: sessions past the cap (a stopped rank promoted) are ended once idle. */
    private scheduleTrim(): void {
        if (this.trimTimer) clearTimeout(this.trimTimer);
        this.trimTimer = setTimeout(() => {
            this.trimTimer = undefined;
            if (!this.terminatedSent && this.started.size > this.cap.cap) void this.makeRoom(0);
        }, TRIM_AFTER_MS);
    }

    /** The configuration of a rank's session (and the attach arguments of its link). */
    private rankConfig(ev: ListeningEvent, linked: boolean): RankdebugConfiguration {
        const base = rankConfiguration(this.config.__job?.configurations, ev.rank);
        return {
            ...base,
            job: ev.job ?? base.job ?? null,
            connect: { host: ev.host, port: ev.port },
            justMyCode: this.config.justMyCode ?? this.host.justMyCode(),
            __rank: { rank: ev.rank, job: ev.job, parentKey: this.tracked?.key, ...(linked ? { linked: true } : {}) },
        };
    }

    /** A link to a rank with no session: it stops together and takes group commands with the rest. */
    private openLink(ev: ListeningEvent): Promise<boolean> {
        const opening = (async (): Promise<boolean> => {
            const link = new RankLink(ev.rank, ev.host, ev.port);
            const t0 = Date.now();
            try {
                await link.open(this.rankConfig(ev, false), this.host.sourceBreakpoints());
            } catch (e) {
                link.destroy();
                this.host.log.warn(`rank ${ev.rank}: no link (${e instanceof Error ? e.message : String(e)})`);
                return false;
            } finally {
                this.linking.delete(ev.rank);
            }
            if (this.terminatedSent) {
                void link.close();
                return false;
            }
            this.host.log.info(`rank ${ev.rank}: debugged without a session (${ev.host}:${ev.port}, ${Date.now() - t0} ms)`);
            this.linked.set(ev.rank, link);
            this.links.set(this.session, ev.rank, link);
            void link.whenClosed.then(() => {
                if (this.linked.get(ev.rank) !== link) return;
                this.linked.delete(ev.rank);
                this.links.set(this.session, ev.rank, undefined);
                const entry = this.tracked?.ranks.get(ev.rank);
                if (this.tracked && entry && !entry.session) this.state.update(this.tracked, (j) => j.ranks.delete(ev.rank));
            });
            this.trackLinked(ev.rank);
            if (link.stopped) this.onStopped(ev.rank, link.stopped.reason);
            this.report(ev.rank);
            return true;
        })();
        this.linking.set(ev.rank, opening);
        return opening;
    }

    /** Says once which ranks came up without a session (gathered: they come up together). */
    private report(rank: number): void {
        this.unreported.add(rank);
        if (this.reportTimer) return;
        this.reportTimer = setTimeout(() => {
            this.reportTimer = undefined;
            const ranks = [...this.unreported].filter((r) => this.linked.has(r) && !this.started.has(r));
            this.unreported.clear();
            if (!ranks.length) return;
            this.output(
                this.host.l10n.t(
                    'rankdebug.maxSessions is {0}: {1} debugged without a session. They stop together and take the group commands with the other ranks; Open Session on a rank in Training Jobs shows one.',
                    this.cap.cap,
                    `${ranks.length === 1 ? 'rank' : 'ranks'} ${formatSpec(ranks)}`,
                ),
            );
        }, REPORT_GATHER_MS);
    }

    /** The editor's breakpoints changed: ranks with no session get them too (a session's are sent by VS Code). */
    private syncBreakpoints(): void {
        if (!this.linked.size) return;
        const sources = this.host.sourceBreakpoints();
        for (const link of this.linked.values()) if (!link.shown) void link.setBreakpoints(sources);
    }

    /**
     * Starts the child session `rank N` that attaches to the rank's debugpy adapter (or over
     * its link); once per rank (its adapter takes one client), whether the supervisor's
     * `listening` event or an Attach from Training Jobs comes first. True when the rank has a
     * session or is getting one.
     */
    private async startRank(ev: ListeningEvent): Promise<boolean> {
        if (this.terminatedSent) return false;
        if (this.started.has(ev.rank)) return true;
        this.started.add(ev.rank);
        this.used.set(ev.rank, Date.now());
        const link = this.linked.get(ev.rank);
        const config = this.rankConfig(ev, link !== undefined && !link.shown);
        const t0 = Date.now();
        const ok = await this.host.startChildSession(this.session, config);
        this.host.log.info(`rank ${ev.rank}: ${ok ? 'attached' : 'attach failed'}${config.__rank?.linked ? ' over its link' : ''} (${ev.host}:${ev.port}, ${Date.now() - t0} ms)`);
        if (!ok) {
            this.started.delete(ev.rank);
            if (this.tracked) this.state.update(this.tracked, () => undefined);
            return false;
        }
        const child = this.deps.sessions.find(this.session, ev.rank);
        this.nameRank(ev.rank);
        if (this.tracked) {
            this.state.update(this.tracked, (j) => {
                j.job ??= ev.job;
                j.ranks.set(ev.rank, { rank: ev.rank, session: child, state: this.state.takeEarlyState(child) ?? (link?.stopped ? 'paused' : 'attached') });
            });
        }
        return true;
    }

    /** A Ray actor rank's session gets its role in its label (`rank 2 · actor/rollout/ref`); the session's name can change while it runs. */
    private nameRank(rank: number): void {
        const role = this.roles.get(rank);
        const child = role ? this.deps.sessions.find(this.session, rank) : undefined;
        if (child && role) child.name = rankLabel(rank, role);
    }

    /** Stops the job this session owns, or (a job the shim started) tells its supervisor to stop. */
    private async stop(): Promise<void> {
        const job = this.job;
        if (job) await job.stop();
        else if (this.stopJobOnEnd && this.tracked?.supervisorPid) {
            try {
                process.kill(this.tracked.supervisorPid, 'SIGTERM');
            } catch {
                // gone already
            }
        }
        this.finish();
    }

    dispose(): void {
        this.events?.close();
        if (this.reportTimer) clearTimeout(this.reportTimer);
        if (this.trimTimer) clearTimeout(this.trimTimer);
        for (const link of this.linked.values()) link.destroy();
        this.disposables.forEach((d) => d.dispose());
        this.job?.kill();
        if (this.tracked) this.state.remove(this.tracked.key);
        this.emitter.dispose();
    }
}
