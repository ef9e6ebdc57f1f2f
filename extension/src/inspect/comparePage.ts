/**
 * One Compare Across Ranks panel (comparePanel.ts keeps one per job and expression): `rankdebug
 * eval JOB all EXPR --json` run (the newest request wins: an older run under way is cancelled),
 * read (core/compare.ts) and rendered (core/compareHtml.ts), and the page's messages: `refresh`,
 * `tolerance` (checked here), `per` (one of the job's dimensions, or none) and `makeGroup` (a
 * group's index: its ranks from this side's model). The VS Code calls are the host's (host.ts).
 */
import type * as vscode from 'vscode';
import { parseTolerance, readCompare, type CompareView } from '../core/compare';
import { renderCompare, type CompareState } from '../core/compareHtml';
import { newNonce } from '../core/webviewHtml';
import type { RankGroups } from '../groups/rankGroups';
import type { CompareHost } from './host';

/** What a panel uses besides VS Code: the interpreter, Make Group, and the job's parallel dimensions. */
export interface CompareDeps extends Pick<RankGroups, 'makeGroupOf'> {
    python: () => Promise<string>;
    /** The job's parallel dimensions, from its ranks' coordinates ([] when none). */
    dimsOf(job: string): Promise<string[]>;
}

/** What the command runs: an expression in a job, from a rank, in a function's frame. */
export interface Request {
    job: string;
    expr: string;
    /** The rank whose session it came from. */
    from?: number;
    /** The function of the frame selected in the Call Stack (`--function`). */
    fn?: string;
    /** When the user asked (ms since the epoch): the log and the e2e suite time the panel from it. */
    t0: number;
    /** Which ranks (a rank list; default all), read where they are now (`--now`, a job that hangs reaches no step): Why Is This Job Stuck?'s one rank per class. */
    ranks?: string;
    now?: boolean;
    /** Compare within each value of this parallel dimension (`--per`); none: all together. */
    per?: string;
}

interface Message {
    type?: unknown;
    value?: unknown;
    group?: unknown;
}

/** `rankdebug eval` for a request: every rank named, where it is asked, as one compare or one per set. */
function evalArgs(request: Request, tolerance: number | null): string[] {
    const args = ['eval', request.job, request.ranks ?? 'all', request.expr, '--json', '--timeout', '10'];
    if (request.fn) args.push('--function', request.fn);
    if (request.now) args.push('--now');
    if (tolerance !== null) args.push('--tolerance', String(tolerance));
    if (request.per) args.push('--per', request.per);
    return args;
}

export class ComparePage implements vscode.Disposable {
    readonly panel: ReturnType<CompareHost['createComparePanel']>;
    private view: CompareView | undefined;
    private tolerance: number | null = null;
    private abort: AbortController | undefined;
    private seq = 0;
    private readonly title: string;

    constructor(
        private readonly host: CompareHost,
        private request: Request,
        private readonly deps: CompareDeps,
        column: vscode.ViewColumn,
        onDispose: () => void,
    ) {
        this.title = host.l10n.t('Compare: {0}', request.expr.length > 60 ? `${request.expr.slice(0, 59)}…` : request.expr);
        this.panel = host.createComparePanel(this.title, column);
        this.panel.onDidDispose(() => {
            this.abort?.abort();
            onDispose();
        });
        this.panel.webview.onDidReceiveMessage((m: Message) => void this.onMessage(m));
    }

    private dims: string[] = [];

    private state(extra: Partial<CompareState> = {}): CompareState {
        return { title: this.title, tolerance: this.tolerance, from: this.request.from, frame: this.request.fn, dims: this.dims, per: this.request.per, ...extra };
    }

    private render(extra: Partial<CompareState> = {}): void {
        this.panel.webview.html = renderCompare(this.view, this.state(extra), this.host.l10n, newNonce());
    }

    /** Runs the comparison again (the newest request wins: an older run under way is cancelled). */
    async run(request: Request = this.request): Promise<void> {
        this.request = request;
        this.abort?.abort();
        const abort = new AbortController();
        this.abort = abort;
        const seq = ++this.seq;
        this.render({ busy: this.host.l10n.t('Evaluating {0} in every rank…', request.expr) });
        const shownMs = Date.now() - request.t0;
        const args = evalArgs(request, this.tolerance);
        try {
            if (!this.dims.length) this.dims = await this.deps.dimsOf(request.job).catch(() => []);
            const run = await this.host.runCli(await this.deps.python(), args, { timeoutMs: 60000, signal: abort.signal });
            if (seq !== this.seq) return;
            const view = readCompare(run.lines, request.expr);
            this.view = view;
            this.render({ meta: this.host.l10n.t('{0} s at {1}', (run.ms / 1000).toFixed(2), new Date().toLocaleTimeString()) });
            this.host.log.info(
                `compare ${JSON.stringify(request.expr)} in ${request.job}${request.fn ? ` (function ${request.fn})` : ''}${this.tolerance !== null ? ` within ${this.tolerance}` : ''}: ` +
                    `${view.ranks.length} ranks, ${view.groups.length} groups${view.odd.length ? `, odd ${view.odd.join(',')}` : ''}; ` +
                    `panel shown ${shownMs} ms, values shown ${Date.now() - request.t0} ms after the request (eval ${run.ms} ms)`,
            );
        } catch (e) {
            if (seq !== this.seq) return;
            const message = e instanceof Error ? e.message : String(e);
            if (message === 'cancelled') return;
            this.host.log.warn(`compare ${JSON.stringify(request.expr)} in ${request.job}: ${message}`);
            this.view = undefined;
            this.render({ error: this.host.l10n.t('Cannot compare {0}: {1}', request.expr, message) });
        }
    }

    private async onMessage(m: Message): Promise<void> {
        if (m.type === 'refresh') {
            await this.run({ ...this.request, t0: Date.now() });
        } else if (m.type === 'tolerance' && typeof m.value === 'string') {
            const parsed = parseTolerance(m.value);
            if (!parsed) {
                this.host.showWarning(this.host.l10n.t('A tolerance is a number of 0 or more, such as 1e-3; "{0}" is not.', m.value));
                return;
            }
            this.tolerance = parsed.tolerance;
            await this.run({ ...this.request, t0: Date.now() });
        } else if (m.type === 'per' && typeof m.value === 'string' && (m.value === '' || this.dims.includes(m.value))) {
            await this.run({ ...this.request, per: m.value || undefined, t0: Date.now() });
        } else if (m.type === 'makeGroup' && typeof m.group === 'number') {
            const group = this.view?.groups[m.group];
            if (group) await this.deps.makeGroupOf(this.request.job, group.ranks);
        }
    }

    dispose(): void {
        this.panel.dispose();
    }
}
