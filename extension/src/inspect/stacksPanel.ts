/**
 * Rank Debugger: Show Stacks — one webview panel per job (reused), every group of ranks with
 * the same stack as a column side by side. Runs `rankdebug stacks JOB --json`; the model is
 * core/stacks.ts, the HTML core/stacksHtml.ts (escaped text, strict CSP, no remote content).
 * The page shows the main threads merged as a tree (the default for more than one rank) or
 * the columns. It posts `refresh`, `open` (column and frame indexes), `openNode` and `group`
 * (a tree node's index); the file, line and ranks acted on come from this side's model,
 * never from the page. A node's group action makes a group of its ranks (rankGroups.ts `makeGroupOf`).
 * *Debug one rank per class* (`debugClasses`) opens a session on a representative of each
 * class of ranks with the same stack (the odd one, else the lowest rank), a node's *Debug this
 * class* (`debugNode`) one on a representative of its ranks, each labelled `rank 3 · 252 like
 * it`, up to `rankdebug.maxSessions` (diagnose/classSessions.ts: Why Is This Job Stuck?'s route).
 * Each panel: stacksPage.ts, with the VS Code host (vscodeHost.ts).
 */
import * as vscode from 'vscode';
import type { JobInfo } from '../core/jobList';
import { ClassSessions, type ClassSessionDeps } from '../diagnose/classSessions';
import type { RankGroups } from '../groups/rankGroups';
import type { JobNode } from '../jobs/jobsView';
import { StacksPage } from './stacksPage';
import { stacksHost } from './vscodeHost';

export class StacksPanels implements vscode.Disposable {
    private readonly panels = new Map<string, StacksPage>();
    private readonly sessions: ClassSessions;

    constructor(
        private readonly python: () => Promise<string>,
        private readonly jobs: { pickJob(title: string): Promise<JobInfo | undefined>; fresh(): Promise<readonly JobInfo[]> },
        private readonly groups: Pick<RankGroups, 'makeGroupOf'>,
        attach: ClassSessionDeps['attach'],
    ) {
        this.sessions = new ClassSessions({ jobs, attach });
    }

    /** Shows the job's panel (a job row, or a job picked in the palette) and reads the stacks. */
    async show(node?: JobNode): Promise<void> {
        const job = node?.job ?? (await this.jobs.pickJob(vscode.l10n.t('Show the stacks of which job?')));
        if (!job) return;
        let panel = this.panels.get(job.id);
        if (panel) {
            panel.panel.reveal();
        } else {
            panel = new StacksPage(stacksHost, job, { python: this.python, groups: this.groups, sessions: this.sessions }, () => this.panels.delete(job.id));
            this.panels.set(job.id, panel);
        }
        await panel.load();
    }

    dispose(): void {
        [...this.panels.values()].forEach((p) => p.dispose());
        this.panels.clear();
        this.sessions.dispose();
    }
}
