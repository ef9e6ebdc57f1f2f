/**
 * Open Session (a rank row of Training Jobs): the rank's full session. A rank that a parent of
 * this window debugs without a session (past `rankdebug.maxSessions`) gets one through that
 * parent (jobAdapter.ts `promote`: the least recently used running session makes room); any
 * other rank is attached as Attach to Ranks does.
 */
import * as vscode from 'vscode';
import type { JobState } from '../jobs/jobState';
import type { JobNode } from '../jobs/jobsView';
import { log } from '../common/log';
import { openRoute } from './openRoute';

export async function openSession(state: JobState, node: JobNode | undefined): Promise<void> {
    if (node?.kind !== 'rank') {
        void vscode.window.showInformationMessage(vscode.l10n.t('Open Session works on a rank row of Training Jobs.'));
        return;
    }
    const { job, rank } = node;
    const follower = state.follower(job.id);
    const route = openRoute(follower, rank);
    if (route === 'shown') {
        void vscode.window.showInformationMessage(vscode.l10n.t('Rank {0} of {1} is attached already: see the Call Stack.', rank.rank, job.id));
        return;
    }
    if (route === 'attach' || !follower?.startRank) {
        await vscode.commands.executeCommand('rankdebug.jobs.attach', node);
        return;
    }
    const t0 = Date.now();
    // A linked rank's endpoint is its parent's to know (the port here may be unknown: 0).
    const ok = await follower.startRank({ rank: rank.rank, host: rank.address ?? '127.0.0.1', port: rank.port ?? 0, job: job.id });
    log().info(`open session: rank ${rank.rank} of ${job.id}: ${ok ? 'started' : 'failed'} (${Date.now() - t0} ms)`);
    if (!ok) void vscode.window.showErrorMessage(vscode.l10n.t('Could not open a session on rank {0} of {1}: see the Rank Debugger log.', rank.rank, job.id));
}
