/**
 * The parent session's debug adapter (DAP, in this process). It has no threads of its own: it
 * owns a job and its rank sessions. `launch` runs the job (jobProcess.ts) and follows its
 * stdout events; `attach` is a parent over ranks of a running job, following the shim's events
 * file (eventsFile.ts) when it has one. A `listening` rank gets a child session `rank N`; the
 * ranks' `stopped`/`continued`/`blocked`/`raised`/`arrived` events go to the jobs' state (live
 * states, group command reports); the `job` event names the job's folder, where its control
 * socket is; the hang watch's `hang`/`hang_over` go to the host's `hang` (the notification). The
 * job's exit (or, for a job it does not own, its last rank's end) ends the parent.
 */
import type * as vscode from 'vscode';
import { rankConfiguration } from '../core/debugPlan';
import type { StopMode } from '../core/control';
import { parseEvent, rankLabel, type JobEvent, type LaunchEvent, type ListeningEvent } from '../core/events';
import { parseHangEvent, type HangEvent, type HangOverEvent } from '../core/hangEvents';
import type { JobState, TrackedJob } from '../jobState';
import type { RankdebugConfiguration } from './configuration';
import { EventsFile } from './eventsFile';
import type { AdapterHost } from './host';
import { JobProcess } from './jobProcess';
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
}

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

    constructor(
        private readonly session: vscode.DebugSession,
        private readonly deps: JobAdapterDeps,
    ) {
        this.state = deps.state;
        this.host = deps.host;
        this.emitter = deps.host.emitter<vscode.DebugProtocolMessage>();
        this.onDidSendMessage = this.emitter.event;
        this.disposables.push(deps.host.onDidTerminateDebugSession((s) => this.onChildEnded(s)));
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
        if (rank !== undefined) this.started.delete(rank);
        const still = [...this.tracked.ranks.values()].some((r) => r.session && r.session.id !== s.id);
        this.state.setRankState(s, undefined);
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
            startRank: (ep) => this.startRank({ event: 'listening', ...ep }),
        });
        this.tracked = tracked;
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
            startRank: spec.events ? (ep) => this.startRank({ event: 'listening', ...ep }) : undefined,
        });
        for (const r of spec.ranks) void this.startRank({ event: 'listening', rank: r.rank, host: r.host, port: r.port, job: spec.job });
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
                void this.startRank(ev);
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
                if (tracked) this.state.rankEvent(tracked, ev);
                break;
        }
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
        this.sendTerminated();
    }

    /**
     * Starts the child session `rank N` that attaches to the rank's debugpy adapter; once per
     * rank (its adapter takes one client), whether the supervisor's `listening` event or an
     * Attach from Training Jobs comes first. True when the rank has a session or is getting one.
     */
    private async startRank(ev: ListeningEvent): Promise<boolean> {
        if (this.terminatedSent) return false;
        if (this.started.has(ev.rank)) return true;
        this.started.add(ev.rank);
        const base = rankConfiguration(this.config.__job?.configurations, ev.rank);
        const config: RankdebugConfiguration = {
            ...base,
            job: ev.job ?? base.job ?? null,
            connect: { host: ev.host, port: ev.port },
            justMyCode: this.config.justMyCode ?? this.host.justMyCode(),
            __rank: { rank: ev.rank, job: ev.job, parentKey: this.tracked?.key },
        };
        const t0 = Date.now();
        const ok = await this.host.startChildSession(this.session, config);
        this.host.log.info(`rank ${ev.rank}: ${ok ? 'attached' : 'attach failed'} (${ev.host}:${ev.port}, ${Date.now() - t0} ms)`);
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
                j.ranks.set(ev.rank, { rank: ev.rank, session: child, state: this.state.takeEarlyState(child) ?? 'attached' });
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
        this.disposables.forEach((d) => d.dispose());
        this.job?.kill();
        if (this.tracked) this.state.remove(this.tracked.key);
        this.emitter.dispose();
    }
}
