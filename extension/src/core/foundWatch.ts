/**
 * Training Jobs watches the jobs it found running (not started by `rankdebug launch`, whose
 * supervisor watches its own) for hangs: one `rankdebug watch JOB --hang-seconds S --json`
 * per such job while the view is visible, or always, as `rankdebug.jobs.watchFound` says;
 * none when `rankdebug.hangSeconds` is 0. This module decides which watchers run; the
 * watcher process itself is foundWatch.ts. No `vscode` import.
 */
import type { JobInfo } from './jobList';

export type WatchFoundMode = 'whileVisible' | 'always' | 'off';

/** The setting's value; anything else is the default. */
export function watchFoundMode(v: unknown): WatchFoundMode {
    return v === 'always' || v === 'off' ? v : 'whileVisible';
}

/** Whether found jobs are watched now. */
export function watching(mode: WatchFoundMode, visible: boolean, hangSeconds: number): boolean {
    return hangSeconds > 0 && (mode === 'always' || (mode === 'whileVisible' && visible));
}

/** A job the view found running, with a live rank: one to watch. */
export function watchable(job: Pick<JobInfo, 'source' | 'dir' | 'ranks'>): boolean {
    return job.source === 'scan' && !job.dir && job.ranks.some((r) => r.pid !== null && r.state !== 'exited');
}

export interface WatchPlan {
    start: string[];
    stop: string[];
}

/**
 * The watchers to start and to stop: one per watchable job listed (`running`: those that
 * run; `done`: jobs whose watcher ended, as their job did or refused it, never started
 * again), none when not `on`.
 */
export function watchPlan(jobs: readonly JobInfo[], running: ReadonlySet<string>, done: ReadonlySet<string>, on: boolean): WatchPlan {
    const wanted = new Set(on ? jobs.filter(watchable).map((j) => j.id) : []);
    return {
        start: [...wanted].filter((id) => !running.has(id) && !done.has(id)),
        stop: [...running].filter((id) => !wanted.has(id)),
    };
}

/** The watcher's command line after the interpreter and the CLI's entry. */
export function watchArgs(job: string, hangSeconds: number): string[] {
    return ['watch', job, '--hang-seconds', String(hangSeconds), '--json'];
}
