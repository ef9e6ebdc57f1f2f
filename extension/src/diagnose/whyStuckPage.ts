/**
 * Why Is This Job Stuck?'s panels (whyStuck.ts binds them to VS Code): `rankdebug diagnose JOB
 * --json` run under a progress notification (an error is a message: no panel, or the panel's
 * last view kept), one panel per job (reused), and the page's messages: `refresh`, `open` (a
 * finding's index, or a class's and a frame's), `debugCulprit`, `debugClasses` and `compare`;
 * the file, line and ranks acted on come from this side's model, never from the page. The VS
 * Code calls are the host's (host.ts).
 */
import * as fs from 'node:fs';
import type * as vscode from 'vscode';
import { isRowArg } from '../core/commandArgs';
import { compareFrame, culpritRank, readDiagnose, representatives, type DiagnoseView, type Place } from '../core/diagnose';
import { renderDiagnose, type DiagnoseState } from '../core/diagnoseHtml';
import { jobLabel, type JobInfo } from '../core/jobList';
import { formatSpec } from '../core/ranks';
import { hostFlags } from '../core/settings';
import { newNonce } from '../core/webviewHtml';
import type { JobNode } from '../jobs/jobsView';
import type { ClassRoute, ClassSessionDeps } from './classRoute';
import type { WhyStuckHost } from './host';

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

/** The class sessions' route (classRoute.ts), as the panels use it. */
export type Sessions = Pick<ClassRoute, 'open' | 'dispose'>;

/** What one panel uses from the other parts: the interpreter, Compare, the class sessions' route. */
export type PageParts = Pick<WhyStuckDeps, 'python' | 'compare'> & { sessions: Pick<Sessions, 'open'> };

/** Runs the diagnosis of a job: its model, or throws the CLI's message. */
function diagnose(host: WhyStuckHost, python: () => Promise<string>, job: JobInfo): Thenable<{ view: DiagnoseView; ms: number }> {
    return host.withProgress(host.l10n.t('Reading every rank of {0}…', jobLabel(job)), async (_p, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const run = await host.runCli(await python(), ['diagnose', job.id, '--json', ...hostFlags(host.settings())], { timeoutMs: 120000, signal: abort.signal });
        return { view: readDiagnose(run.lines), ms: run.ms };
    });
}

/** One job's panel. */
export class WhyStuckPage implements vscode.Disposable {
    readonly panel: ReturnType<WhyStuckHost['createPanel']>;
    private loading: Promise<void> | undefined;
    private readonly title: string;
    private meta = '';

    constructor(
        private readonly host: WhyStuckHost,
        private job: JobInfo,
        private view: DiagnoseView,
        private readonly parts: PageParts,
        onDispose: () => void,
    ) {
        this.title = host.l10n.t('Why is {0} stuck?', jobLabel(job));
        this.panel = host.createPanel(this.title);
        this.panel.onDidDispose(onDispose);
        this.panel.webview.onDidReceiveMessage((m: Message) => void this.onMessage(m));
    }

    show(view: DiagnoseView, ms: number): void {
        this.view = view;
        this.meta = this.host.l10n.t('read in {0} s at {1}', (ms / 1000).toFixed(2), new Date().toLocaleTimeString());
        this.render();
    }

    private render(extra: Partial<DiagnoseState> = {}): void {
        this.panel.webview.html = renderDiagnose(this.view, { title: this.title, meta: this.meta, ...extra }, this.host.l10n, newNonce());
    }

    /** Diagnoses again (one run at a time); an error is a message, the last view stays. */
    load(): Promise<void> {
        this.loading ??= this.read().finally(() => (this.loading = undefined));
        return this.loading;
    }

    private async read(): Promise<void> {
        const { host } = this;
        this.render({ busy: host.l10n.t('Reading every rank…') });
        try {
            const { view, ms } = await diagnose(host, this.parts.python, this.job);
            this.show(view, ms);
            host.log.info(`why stuck ${this.job.id}: ${view.classes.length} classes, ${view.findings.length} findings, ${ms} ms`);
        } catch (e) {
            this.render();
            const message = e instanceof Error ? e.message : String(e);
            if (message !== 'cancelled') host.showError(host.l10n.t('Cannot diagnose {0}: {1}', jobLabel(this.job), message));
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
                const title = this.host.l10n.t('Compare across the classes of {0}: ranks {1}', this.job.id, formatSpec(reps));
                return this.parts.compare.compareIn(this.job.id, reps, compareFrame(this.view), title);
            }
            default:
                return;
        }
    }

    /** Sessions on these ranks (labelled with how many ranks each stands for; up to `rankdebug.maxSessions`). */
    private async debug(reps: { rank: number; others: number }[]): Promise<void> {
        await this.parts.sessions.open(this.job.id, reps, 'why stuck: debug');
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
            this.host.showWarning(this.host.l10n.t('{0} is not on this machine.', where.file));
            return;
        }
        await this.host.showFile(where.file, Math.max(0, where.line - 1));
    }

    dispose(): void {
        this.panel.dispose();
    }
}

/** Why Is This Job Stuck? and the notification's *Debug rank N*: the panels, one per job. */
export class WhyStuckPages implements vscode.Disposable {
    private readonly panels = new Map<string, WhyStuckPage>();
    private readonly parts: PageParts;

    constructor(
        private readonly host: WhyStuckHost,
        private readonly deps: WhyStuckDeps,
        private readonly sessions: Sessions,
    ) {
        this.parts = { python: deps.python, compare: deps.compare, sessions };
    }

    /** The job of a row, of an id (the notification), or picked among the running jobs. */
    private async jobOf(arg: unknown): Promise<JobInfo | undefined> {
        if (isRowArg(arg)) return (arg as JobNode).job;
        if (typeof arg === 'string' && arg) {
            const job = (await this.deps.jobs.fresh()).find((j) => j.id === arg);
            if (!job) this.host.showInfo(this.host.l10n.t('Job {0} is not running any more.', arg));
            return job;
        }
        return this.deps.jobs.pickJob(this.host.l10n.t('Why is which job stuck?'));
    }

    /** Why Is This Job Stuck?: diagnose, then the job's panel (an error: a message, no panel). */
    async run(arg?: unknown): Promise<void> {
        const { host } = this;
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
            result = await diagnose(host, this.deps.python, job);
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            host.log.warn(`why stuck ${job.id}: ${message}`);
            if (message !== 'cancelled') host.showError(host.l10n.t('Cannot diagnose {0}: {1}', jobLabel(job), message));
            return;
        }
        const panel = new WhyStuckPage(host, job, result.view, this.parts, () => this.panels.delete(job.id));
        this.panels.set(job.id, panel);
        panel.show(result.view, result.ms);
        host.log.info(`why stuck ${job.id}: ${result.view.classes.length} classes, ${result.view.findings.length} findings, ${result.ms} ms`);
    }

    /** The notification's *Debug rank N*. */
    async debugRank(jobId: unknown, rank: unknown): Promise<void> {
        if (typeof jobId !== 'string' || typeof rank !== 'number') return;
        const job = (await this.deps.jobs.fresh()).find((j) => j.id === jobId);
        const info = job?.ranks.find((r) => r.rank === rank);
        if (!job || !info) {
            this.host.showInfo(this.host.l10n.t('Job {0} has no live rank {1} any more.', jobId, rank));
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
