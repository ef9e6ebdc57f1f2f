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
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { runCli } from '../common/cli';
import { jobLabel, type JobInfo } from '../core/jobList';
import { hostFlags } from '../core/settings';
import { classRep, compactRanks, stackClasses, toStacksView, type FrameView, type StacksView } from '../core/stacks';
import { ClassSessions, type ClassSessionDeps } from '../diagnose/classSessions';
import { renderMessage, renderStacks, type StacksLabels } from '../core/stacksHtml';
import { newNonce } from '../core/webviewHtml';
import type { JobNode } from '../jobs/jobsView';
import { log } from '../common/log';
import type { RankGroups } from '../groups/rankGroups';
import { getSettings } from '../common/settings';

const VIEW_TYPE = 'rankdebug.stacks';

interface Message {
    type?: unknown;
    column?: unknown;
    frame?: unknown;
    node?: unknown;
}

class StacksPanel implements vscode.Disposable {
    readonly panel: vscode.WebviewPanel;
    private view: StacksView | undefined;
    private loading: Promise<void> | undefined;
    private readonly title: string;

    constructor(
        private readonly job: JobInfo,
        private readonly python: () => Promise<string>,
        private readonly groups: Pick<RankGroups, 'makeGroupOf'>,
        private readonly sessions: ClassSessions,
        onDispose: () => void,
    ) {
        this.title = vscode.l10n.t('Stacks: {0}', jobLabel(job));
        this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, this.title, vscode.ViewColumn.Active, {
            enableScripts: true,
            localResourceRoots: [],
            enableFindWidget: true,
        });
        this.panel.onDidDispose(onDispose);
        this.panel.webview.onDidReceiveMessage((m: Message) => void this.onMessage(m));
    }

    /** Reads the stacks again (one read at a time) and renders them. */
    load(): Promise<void> {
        this.loading ??= this.read().finally(() => (this.loading = undefined));
        return this.loading;
    }

    private async read(): Promise<void> {
        const refresh = vscode.l10n.t('Refresh');
        if (!this.view) this.panel.webview.html = renderMessage(this.title, refresh, vscode.l10n.t('Reading the stack of every rank…'), newNonce());
        const t0 = Date.now();
        try {
            const run = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Reading stacks') }, async () =>
                runCli(await this.python(), ['stacks', this.job.id, '--json', ...hostFlags(getSettings())], { timeoutMs: 60000 }),
            );
            const view = toStacksView(run.answer);
            this.view = view;
            this.panel.webview.html = renderStacks(view, this.labels(view), newNonce());
            log().info(`stacks of ${this.job.id}: ${view.columns.length} groups, ${view.read}/${view.total} ranks read, ${Date.now() - t0} ms`);
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            log().warn(`stacks of ${this.job.id}: ${message}`);
            this.view = undefined;
            this.panel.webview.html = renderMessage(this.title, refresh, vscode.l10n.t('Cannot read the stacks: {0}', message), newNonce());
        }
    }

    private labels(view: StacksView): StacksLabels {
        const when = view.time ? new Date(view.time * 1000).toLocaleTimeString() : '';
        return {
            title: this.title,
            meta: vscode.l10n.t('{0} of {1} ranks read in {2} s at {3}', view.read, view.total, (view.seconds ?? 0).toFixed(2), when),
            refresh: vscode.l10n.t('Refresh'),
            errors: vscode.l10n.t('Ranks that could not be read'),
            noStacks: vscode.l10n.t('No stack could be read.'),
            oddOneOut: vscode.l10n.t('odd one out'),
            idle: vscode.l10n.t('idle'),
            waitingIn: (c) => vscode.l10n.t('waiting in {0}', c),
            thread: (t) => vscode.l10n.t('thread {0}', t),
            debugClasses: vscode.l10n.t('Debug one rank per class'),
            debugAction: vscode.l10n.t('debug'),
            debugNode: (rank, ranks) => vscode.l10n.t('Debug this class: rank {0}, standing for ranks {1}', rank, ranks),
            // The Tree view's words (Tree, Columns, group, …) are core/stacksHtml.ts's defaults
            // until l10n/bundle.l10n.zh-cn.json has them.
        };
    }

    private async onMessage(m: Message): Promise<void> {
        if (m.type === 'refresh') return this.load();
        if (m.type === 'debugClasses') return this.debugClasses();
        if (m.type === 'open') return this.openFrame(m);
        if (typeof m.node !== 'number') return;
        if (m.type === 'debugNode') return this.debugNode(m.node);
        if (m.type === 'group') return this.makeGroup(m.node);
        if (m.type === 'openNode') return this.open(this.view?.nodes[m.node]?.frame);
    }

    private openFrame(m: Message): Promise<void> | undefined {
        if (typeof m.column !== 'number' || typeof m.frame !== 'number') return undefined;
        return this.open(this.view?.columns[m.column]?.frames[m.frame]);
    }

    /** A session on a representative of each class of ranks with the same stack. */
    private async debugClasses(): Promise<void> {
        const reps = this.view ? stackClasses(this.view) : [];
        if (reps.length) await this.sessions.open(this.job.id, reps, 'stacks: debug one rank per class');
    }

    /** A session on a representative of a tree node's ranks. */
    private async debugNode(index: number): Promise<void> {
        const node = this.view?.nodes[index];
        const rep = node ? classRep(node.ranks, this.view?.odd ?? []) : null;
        if (rep) await this.sessions.open(this.job.id, [rep], `stacks: debug the class of ranks ${compactRanks(node?.ranks ?? [])}`);
    }

    /** Make Group… with a tree node's ranks (distinct, in order, as of rank rows selected in Training Jobs). */
    private async makeGroup(index: number): Promise<void> {
        const node = this.view?.nodes[index];
        const ranks = node?.ranks.filter((r) => r >= 0) ?? [];
        if (!ranks.length) return;
        log().info(`stacks of ${this.job.id}: make a group of ranks ${compactRanks(ranks)}`);
        await this.groups.makeGroupOf(this.job.id, [...new Set(ranks)].sort((a, b) => a - b));
    }

    private async open(frame: FrameView | undefined): Promise<void> {
        if (!frame?.openable) return;
        if (!fs.existsSync(frame.file)) {
            void vscode.window.showWarningMessage(vscode.l10n.t('{0} is not on this machine.', frame.file));
            return;
        }
        const line = Math.max(0, frame.line - 1);
        await vscode.window.showTextDocument(vscode.Uri.file(frame.file), {
            selection: new vscode.Range(line, 0, line, 0),
            viewColumn: vscode.ViewColumn.Beside,
            preview: true,
        });
    }

    dispose(): void {
        this.panel.dispose();
    }
}

export class StacksPanels implements vscode.Disposable {
    private readonly panels = new Map<string, StacksPanel>();
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
            panel = new StacksPanel(job, this.python, this.groups, this.sessions, () => this.panels.delete(job.id));
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
