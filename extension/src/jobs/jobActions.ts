/**
 * Training Jobs' actions on a job (jobsView.ts): which job a palette command acts on, and Stop
 * Job (this window's session over it ended, then SIGTERM to its supervisor, or, once the user
 * confirms, to the launcher of a job Rank Debugger did not start). The VS Code calls are the
 * host's (host.ts).
 */
import { jobLabel, rankCount, type JobInfo } from '../core/jobList';
import { join } from '../core/shell';
import type { JobActionsHost } from './host';
import type { JobState } from './jobState';

/** Asks which of `jobs` (those `filter` keeps), when a command comes from the palette; the only job is taken as is. */
export async function pickJob(host: JobActionsHost, jobs: readonly JobInfo[], title: string, filter: (j: JobInfo) => boolean = () => true): Promise<JobInfo | undefined> {
    const kept = jobs.filter(filter);
    if (!kept.length) {
        host.showInfo(host.l10n.t('No training job is running.'));
        return undefined;
    }
    if (kept.length === 1) return kept[0];
    const picked = await host.showQuickPick(
        kept.map((j) => ({ label: jobLabel(j), description: [host.l10n.t('{0} ranks', rankCount(j)), j.cwd ?? ''].filter(Boolean).join(' · '), detail: join(j.command), job: j })),
        { title, matchOnDescription: true, matchOnDetail: true },
    );
    return picked?.job;
}

/** Stop Job; true when something was stopped (the view then refreshes). */
export async function stopJob(host: JobActionsHost, state: Pick<JobState, 'byJobId'>, job: JobInfo): Promise<boolean> {
    const pid = job.launcherPid;
    if (job.source === 'scan') {
        if (pid === null) {
            host.showInfo(host.l10n.t('Job {0} has no launcher process to stop.', job.id));
            return false;
        }
        const stopIt = host.l10n.t('Stop Job');
        const answer = await host.confirm(host.l10n.t('Stop {0}? Rank Debugger did not start it: its launcher (pid {1}) gets SIGTERM.', jobLabel(job), pid), join(job.command), stopIt);
        if (answer !== stopIt) return false;
    }
    const tracked = state.byJobId(job.id);
    if (tracked?.parent) await host.stopDebugging(tracked.parent);
    if (pid !== null) {
        try {
            process.kill(pid, 'SIGTERM');
            host.log.info(`stop ${job.id}: SIGTERM to ${pid}`);
        } catch (e) {
            host.log.info(`stop ${job.id}: ${String(e)}`);
        }
    }
    return true;
}
