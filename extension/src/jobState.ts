/**
 * What the extension knows about the jobs it debugs: per job, the parent session, its
 * pseudoterminal, and each rank's child session and state (attached / paused). The jobs view
 * and the status bar item read it; the debug adapter and the tracker write it.
 */
import * as vscode from 'vscode';

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
}

export class JobState implements vscode.Disposable {
    private readonly jobs = new Map<string, TrackedJob>();
    private readonly changed = new vscode.EventEmitter<void>();
    readonly onDidChange = this.changed.event;

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
                if (state === undefined) {
                    job.ranks.delete(r.rank);
                    // Sessions the jobs view started on ranks of a job it does not own: gone with the last one.
                    if (!job.parent && !job.terminal && !job.ranks.size) this.jobs.delete(job.key);
                } else {
                    r.state = state;
                }
                this.changed.fire();
                return;
            }
        }
    }

    dispose(): void {
        this.changed.dispose();
    }
}
