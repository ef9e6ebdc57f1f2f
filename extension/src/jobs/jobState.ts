/**
 * What the extension knows about the jobs it debugs: per job, the parent session, its
 * pseudoterminal, its folder (the control socket's), each rank's child session and state
 * (attached / paused), and the ranks' live states from the supervisor's events. The jobs view,
 * the status bar item and the group commands read it; the debug adapter and the tracker write it.
 */
import * as vscode from 'vscode';
import type { StopMode } from '../core/control';
import type { LaunchEvent } from '../core/events';
import { LiveRanks } from '../core/liveRanks';

export interface TrackedRank {
    rank: number;
    session?: vscode.DebugSession;
    state: 'attached' | 'paused';
}

export interface TrackedJob {
    key: string;
    job?: string;
    title: string;
    worldSize?: number | null;
    command?: string[];
    parent?: vscode.DebugSession;
    terminal?: vscode.Terminal;
    supervisorPid?: number;
    ranks: Map<number, TrackedRank>;
    /** Ranks the parent session has started (or is starting) a child session for. */
    claimed?: ReadonlySet<number>;
    /** Whether every rank is armed (`rankdebug launch --arm`). */
    armed?: boolean;
    /** The job's folder (its `job` event, or the registry's): the supervisor listens on DIR/ctl.sock. */
    dir?: string;
    /** The ranks' live states, from the supervisor's events (jobs whose events this window follows). */
    live?: LiveRanks;
    /** Whether one chosen rank's stop pauses the other chosen ranks (`rankdebug launch --stop`). */
    stopMode?: StopMode;
    /**
     * Set when the parent follows the supervisor's events (a job this window launched, in its
     * terminal or through the shim): it starts the child `rank N` for a listening rank, once.
     */
    startRank?: (ep: { rank: number; host: string; port: number; job?: string }) => Promise<boolean>;
}

export class JobState implements vscode.Disposable {
    private readonly jobs = new Map<string, TrackedJob>();
    /** States sessions reported before their rank was registered (a breakpoint hit at once). */
    private readonly early = new Map<string, TrackedRank['state']>();
    private readonly changed = new vscode.EventEmitter<void>();
    readonly onDidChange = this.changed.event;
    private readonly rankEvents = new vscode.EventEmitter<{ job: TrackedJob; event: LaunchEvent }>();
    /** The supervisor's rank events (stopped, blocked, arrived…), after the live states took them. */
    readonly onDidRankEvent = this.rankEvents.event;

    add(job: TrackedJob): TrackedJob {
        this.jobs.set(job.key, job);
        this.changed.fire();
        return job;
    }

    get(key: string): TrackedJob | undefined {
        return this.jobs.get(key);
    }

    /** The tracked job with this registry id. */
    byJobId(id: string): TrackedJob | undefined {
        return [...this.jobs.values()].find((j) => j.job === id);
    }

    /** Ranks of the job that a session of this window has or is starting. */
    claimed(id: string): Set<number> {
        const out = new Set<number>();
        for (const j of this.jobs.values()) {
            if (j.job !== id) continue;
            for (const r of j.ranks.keys()) out.add(r);
            for (const r of j.claimed ?? []) out.add(r);
        }
        return out;
    }

    /** The tracked job whose parent session follows the supervisor's events, if any. */
    follower(id: string): TrackedJob | undefined {
        return [...this.jobs.values()].find((j) => j.job === id && j.startRank !== undefined);
    }

    /** The tracked job a debug session belongs to: as its parent, or as one of its ranks. */
    bySession(id: string): TrackedJob | undefined {
        for (const j of this.jobs.values()) {
            if (j.parent?.id === id) return j;
            for (const r of j.ranks.values()) if (r.session?.id === id) return j;
        }
        return undefined;
    }

    /** The tracked job of a debug session (a rank's session not registered yet: through its parent). */
    ofSession(session: vscode.DebugSession): TrackedJob | undefined {
        return this.bySession(session.id) ?? (session.parentSession ? this.bySession(session.parentSession.id) : undefined);
    }

    /** A rank event of a job: its live states first, then the listeners. */
    rankEvent(job: TrackedJob, event: LaunchEvent): void {
        job.live ??= new LiveRanks();
        if (job.live.apply(event)) this.changed.fire();
        this.rankEvents.fire({ job, event });
    }

    all(): TrackedJob[] {
        return [...this.jobs.values()];
    }

    update(job: TrackedJob, fn: (j: TrackedJob) => void): void {
        fn(job);
        this.changed.fire();
    }

    remove(key: string): void {
        if (this.jobs.delete(key)) this.changed.fire();
    }

    /** Sets the state of the rank whose child session this is. */
    setRankState(session: vscode.DebugSession, state: TrackedRank['state'] | undefined): void {
        for (const job of this.jobs.values()) {
            for (const r of job.ranks.values()) {
                if (r.session?.id !== session.id) continue;
                if (state === undefined) job.ranks.delete(r.rank);
                else r.state = state;
                this.changed.fire();
                return;
            }
        }
        if (state) this.early.set(session.id, state);
        else this.early.delete(session.id);
    }

    /** The state a session reported before its rank was registered, if any (taken once). */
    takeEarlyState(session: vscode.DebugSession | undefined): TrackedRank['state'] | undefined {
        if (!session) return undefined;
        const state = this.early.get(session.id);
        this.early.delete(session.id);
        return state;
    }

    dispose(): void {
        this.changed.dispose();
        this.rankEvents.dispose();
    }
}
