/**
 * Rank Debugger: Why Is This Job Stuck? — on a job row of Training Jobs, in the palette (which
 * running job?) and from the hang notification (hangNotices.ts). Runs `rankdebug diagnose JOB
 * --json` (a progress notification; an error envelope is an error message and no panel) and
 * shows one webview panel per job (reused): the findings, the class tree, the collectives
 * table, the ranks read. The model is core/diagnose.ts, the HTML core/diagnoseHtml.ts. The
 * page's buttons: *Debug culprit* (rankAttach.ts on that rank), *Debug one per class* (one
 * rank per class, its session labelled `rank 3 · 252 like it`, up to `rankdebug.maxSessions`:
 * classSessions.ts, shared with Show Stacks), *Compare across classes*
 * (an expression evaluated now in each class's rank, comparePanel.ts).
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { runCli } from '../common/cli';
import { isRowArg } from '../core/commandArgs';
import { compareFrame, culpritRank, readDiagnose, representatives, type DiagnoseView, type Place } from '../core/diagnose';
import { renderDiagnose, type DiagnoseState } from '../core/diagnoseHtml';
import { jobLabel, type JobInfo } from '../core/jobList';
import { formatSpec } from '../core/ranks';
import { hostFlags } from '../core/settings';
import { newNonce } from '../core/webviewHtml';
import type { JobNode } from '../jobs/jobsView';
import { log } from '../common/log';
import { getSettings } from '../common/settings';
import { ClassSessions, type ClassSessionDeps } from './classSessions';
import type { NoticeHost } from './hangNotices';

const VIEW_TYPE = 'rankdebug.whyStuck';
/** The notification's *Debug rank N* (not in the palette). */
export const DEBUG_RANK_COMMAND = 'rankdebug.whyStuck.debugRank';

interface Message {
    type?: unknown;
    finding?: unknown;
    cls?: unknown;
    frame?: unknown;
}

/** What the panel uses from the other parts. */
export interface WhyStuckDeps {
    python: () => Promise<string>;
    jobs: { pickJob(title: string): Promise<JobInfo | undefined>; fresh(): Promise<readonly JobInfo[]> };
    attach: ClassSessionDeps['attach'];
    compare: { compareIn(job: string, ranks: readonly number[], fn: string | undefined, title: string): Promise<void> };
}

/** Runs the diagnosis of a job: its model, or throws the CLI's message. */
async function diagnose(python: () => Promise<string>, job: JobInfo): Promise<{ view: DiagnoseView; ms: number }> {
    return vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Reading every rank of {0}…', jobLabel(job)), cancellable: true },
        async (_p, token) => {
            const abort = new AbortController();
            token.onCancellationRequested(() => abort.abort());
            const run = await runCli(await python(), ['diagnose', job.id, '--json', ...hostFlags(getSettings())], { timeoutMs: 120000, signal: abort.signal });
            return { view: readDiagnose(run.lines), ms: run.ms };
        },
    );
}

class WhyStuckPanel implements vscode.Disposable {
    readonly panel: vscode.WebviewPanel;
    private loading: Promise<void> | undefined;
    private readonly title: string;
    private meta = '';

    constructor(
        private job: JobInfo,
        private view: DiagnoseView,
        private readonly deps: WhyStuckDeps,
        private readonly sessions: ClassSessions,
        onDispose: () => void,
    ) {
        this.title = vscode.l10n.t('Why is {0} stuck?', jobLabel(job));
        this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, this.title, vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [], enableFindWidget: true });
        this.panel.onDidDispose(onDispose);
        this.panel.webview.onDidReceiveMessage((m: Message) => void this.onMessage(m));
    }

    show(view: DiagnoseView, ms: number): void {
        this.view = view;
        this.meta = vscode.l10n.t('read in {0} s at {1}', (ms / 1000).toFixed(2), new Date().toLocaleTimeString());
        this.render();
    }

    private render(extra: Partial<DiagnoseState> = {}): void {
        this.panel.webview.html = renderDiagnose(this.view, { title: this.title, meta: this.meta, ...extra }, vscode.l10n, newNonce());
    }

    /** Diagnoses again (one run at a time); an error is a message, the last view stays. */
    load(): Promise<void> {
        this.loading ??= this.read().finally(() => (this.loading = undefined));
        return this.loading;
    }

    private async read(): Promise<void> {
        this.render({ busy: vscode.l10n.t('Reading every rank…') });
        try {
            const { view, ms } = await diagnose(this.deps.python, this.job);
            this.show(view, ms);
            log().info(`why stuck ${this.job.id}: ${view.classes.length} classes, ${view.findings.length} findings, ${ms} ms`);
        } catch (e) {
            this.render();
            const message = e instanceof Error ? e.message : String(e);
            if (message !== 'cancelled') void vscode.window.showErrorMessage(vscode.l10n.t('Cannot diagnose {0}: {1}', jobLabel(this.job), message));
        }
    }

    private async onMessage(m: Message): Promise<void> {
        switch (m.type) {
            case 'refresh':
                return this.load();
            case 'open':
                return this.open(m);
            case 'debugCulprit': {
                const rank = culpritRank(this.view);
                if (rank !== null) await this.debug([{ rank, others: 0 }]);
                return;
            }
            case 'debugClasses':
                return this.debug(representatives(this.view));
            case 'compare': {
                const reps = representatives(this.view).map((r) => r.rank);
                const title = vscode.l10n.t('Compare across the classes of {0}: ranks {1}', this.job.id, formatSpec(reps));
                return this.deps.compare.compareIn(this.job.id, reps, compareFrame(this.view), title);
            }
            default:
                return;
        }
    }

    /** Sessions on these ranks (labelled with how many ranks each stands for; up to `rankdebug.maxSessions`). */
    private async debug(reps: { rank: number; others: number }[]): Promise<void> {
        await this.sessions.open(this.job.id, reps, 'why stuck: debug');
    }

    private async open(m: Message): Promise<void> {
        let where: Place | null | undefined;
        if (typeof m.finding === 'number') where = this.view.findings[m.finding]?.where;
        else if (typeof m.cls === 'number' && typeof m.frame === 'number') {
            const cls = this.view.classes[m.cls];
            where = m.frame < 0 ? cls?.where : cls?.frames[m.frame];
        }
        if (!where?.file || where.line === null) return;
        if (!fs.existsSync(where.file)) {
            void vscode.window.showWarningMessage(vscode.l10n.t('{0} is not on this machine.', where.file));
            return;
        }
        const line = Math.max(0, where.line - 1);
        await vscode.window.showTextDocument(vscode.Uri.file(where.file), { selection: new vscode.Range(line, 0, line, 0), viewColumn: vscode.ViewColumn.Beside, preview: true });
    }

    dispose(): void {
        this.panel.dispose();
    }
}

export class WhyStuck implements vscode.Disposable {
    private readonly panels = new Map<string, WhyStuckPanel>();
    private readonly sessions: ClassSessions;

    constructor(private readonly deps: WhyStuckDeps) {
        this.sessions = new ClassSessions(deps);
    }

    /** The job of a row, of an id (the notification), or picked among the running jobs. */
    private async jobOf(arg: unknown): Promise<JobInfo | undefined> {
        if (isRowArg(arg)) return (arg as JobNode).job;
        if (typeof arg === 'string' && arg) {
            const job = (await this.deps.jobs.fresh()).find((j) => j.id === arg);
            if (!job) void vscode.window.showInformationMessage(vscode.l10n.t('Job {0} is not running any more.', arg));
            return job;
        }
        return this.deps.jobs.pickJob(vscode.l10n.t('Why is which job stuck?'));
    }

    /** Why Is This Job Stuck?: diagnose, then the job's panel (an error: a message, no panel). */
    async run(arg?: unknown): Promise<void> {
        const job = await this.jobOf(arg);
        if (!job) return;
        const open = this.panels.get(job.id);
        if (open) {
            open.panel.reveal();
            await open.load();
            return;
        }
        let result: { view: DiagnoseView; ms: number };
        try {
            result = await diagnose(this.deps.python, job);
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            log().warn(`why stuck ${job.id}: ${message}`);
            if (message !== 'cancelled') void vscode.window.showErrorMessage(vscode.l10n.t('Cannot diagnose {0}: {1}', jobLabel(job), message));
            return;
        }
        const panel = new WhyStuckPanel(job, result.view, this.deps, this.sessions, () => this.panels.delete(job.id));
        this.panels.set(job.id, panel);
        panel.show(result.view, result.ms);
        log().info(`why stuck ${job.id}: ${result.view.classes.length} classes, ${result.view.findings.length} findings, ${result.ms} ms`);
    }

    /** The notification's *Debug rank N*. */
    async debugRank(jobId: unknown, rank: unknown): Promise<void> {
        if (typeof jobId !== 'string' || typeof rank !== 'number') return;
        const job = (await this.deps.jobs.fresh()).find((j) => j.id === jobId);
        const info = job?.ranks.find((r) => r.rank === rank);
        if (!job || !info) {
            void vscode.window.showInformationMessage(vscode.l10n.t('Job {0} has no live rank {1} any more.', jobId, rank));
            return;
        }
        await this.deps.attach.attachRanks(job, [info]);
    }

    dispose(): void {
        [...this.panels.values()].forEach((p) => p.dispose());
        this.panels.clear();
        this.sessions.dispose();
    }
}

/** The hang notification's VS Code side: warnings, and the two commands its buttons run. */
export function noticeHost(): NoticeHost {
    return {
        l10n: vscode.l10n,
        showWarning: (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
        showInfo: (message) => void vscode.window.showInformationMessage(message),
        whyStuck: (job) => void vscode.commands.executeCommand('rankdebug.whyStuck', job ?? undefined),
        debugRank: (job, rank) => void vscode.commands.executeCommand(DEBUG_RANK_COMMAND, job, rank),
        log: (message) => log().info(message),
    };
}
