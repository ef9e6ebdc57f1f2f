/**
 * One job's Show Stacks panel (stacksPanel.ts keeps one per job): `rankdebug stacks JOB --json`
 * read (one read at a time) and rendered (core/stacksHtml.ts), and the page's messages:
 * `refresh`, `open` (column and frame indexes), `openNode`, `group` and `debugNode` (a tree
 * node's index), `debugClasses`; the file, line and ranks acted on come from this side's model,
 * never from the page. The VS Code calls are the host's (host.ts).
 */
import * as fs from 'node:fs';
import type * as vscode from 'vscode';
import { jobLabel, type JobInfo } from '../core/jobList';
import { hostFlags } from '../core/settings';
import { classRep, compactRanks, stackClasses, toStacksView, type FrameView, type StacksView } from '../core/stacks';
import { renderMessage, renderStacks, type StacksLabels } from '../core/stacksHtml';
import { newNonce } from '../core/webviewHtml';
import type { ClassSessions } from '../diagnose/classSessions';
import type { RankGroups } from '../groups/rankGroups';
import type { StacksHost } from './host';

interface Message {
    type?: unknown;
    column?: unknown;
    frame?: unknown;
    node?: unknown;
}

/** What a panel uses besides VS Code: the interpreter, Make Group, and the class sessions' route. */
export interface StacksDeps {
    python: () => Promise<string>;
    groups: Pick<RankGroups, 'makeGroupOf'>;
    sessions: Pick<ClassSessions, 'open'>;
}

export class StacksPage implements vscode.Disposable {
    readonly panel: ReturnType<StacksHost['createPanel']>;
    private view: StacksView | undefined;
    private loading: Promise<void> | undefined;
    private readonly title: string;

    constructor(
        private readonly host: StacksHost,
        private readonly job: JobInfo,
        private readonly deps: StacksDeps,
        onDispose: () => void,
    ) {
        this.title = host.l10n.t('Stacks: {0}', jobLabel(job));
        this.panel = host.createPanel(this.title);
        this.panel.onDidDispose(onDispose);
        this.panel.webview.onDidReceiveMessage((m: Message) => void this.onMessage(m));
    }

    /** Reads the stacks again (one read at a time) and renders them. */
    load(): Promise<void> {
        this.loading ??= this.read().finally(() => (this.loading = undefined));
        return this.loading;
    }

    private async read(): Promise<void> {
        const refresh = this.host.l10n.t('Refresh');
        if (!this.view) this.panel.webview.html = renderMessage(this.title, refresh, this.host.l10n.t('Reading the stack of every rank…'), newNonce());
        const t0 = Date.now();
        try {
            const run = await this.host.withWindowProgress(this.host.l10n.t('Reading stacks'), async () =>
                this.host.runCli(await this.deps.python(), ['stacks', this.job.id, '--json', ...hostFlags(this.host.settings())], { timeoutMs: 60000 }),
            );
            const view = toStacksView(run.answer);
            this.view = view;
            this.panel.webview.html = renderStacks(view, this.labels(view), newNonce());
            this.host.log.info(`stacks of ${this.job.id}: ${view.columns.length} groups, ${view.read}/${view.total} ranks read, ${Date.now() - t0} ms`);
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            this.host.log.warn(`stacks of ${this.job.id}: ${message}`);
            this.view = undefined;
            this.panel.webview.html = renderMessage(this.title, refresh, this.host.l10n.t('Cannot read the stacks: {0}', message), newNonce());
        }
    }

    private labels(view: StacksView): StacksLabels {
        const when = view.time ? new Date(view.time * 1000).toLocaleTimeString() : '';
        return {
            title: this.title,
            meta: this.host.l10n.t('{0} of {1} ranks read in {2} s at {3}', view.read, view.total, (view.seconds ?? 0).toFixed(2), when),
            refresh: this.host.l10n.t('Refresh'),
            errors: this.host.l10n.t('Ranks that could not be read'),
            noStacks: this.host.l10n.t('No stack could be read.'),
            oddOneOut: this.host.l10n.t('odd one out'),
            idle: this.host.l10n.t('idle'),
            waitingIn: (c) => this.host.l10n.t('waiting in {0}', c),
            thread: (t) => this.host.l10n.t('thread {0}', t),
            debugClasses: this.host.l10n.t('Debug one rank per class'),
            debugAction: this.host.l10n.t('debug'),
            debugNode: (rank, ranks) => this.host.l10n.t('Debug this class: rank {0}, standing for ranks {1}', rank, ranks),
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
        if (reps.length) await this.deps.sessions.open(this.job.id, reps, 'stacks: debug one rank per class');
    }

    /** A session on a representative of a tree node's ranks. */
    private async debugNode(index: number): Promise<void> {
        const node = this.view?.nodes[index];
        const rep = node ? classRep(node.ranks, this.view?.odd ?? []) : null;
        if (rep) await this.deps.sessions.open(this.job.id, [rep], `stacks: debug the class of ranks ${compactRanks(node?.ranks ?? [])}`);
    }

    /** Make Group… with a tree node's ranks (distinct, in order, as of rank rows selected in Training Jobs). */
    private async makeGroup(index: number): Promise<void> {
        const node = this.view?.nodes[index];
        const ranks = node?.ranks.filter((r) => r >= 0) ?? [];
        if (!ranks.length) return;
        this.host.log.info(`stacks of ${this.job.id}: make a group of ranks ${compactRanks(ranks)}`);
        await this.deps.groups.makeGroupOf(this.job.id, [...new Set(ranks)].sort((a, b) => a - b));
    }

    private async open(frame: FrameView | undefined): Promise<void> {
        if (!frame?.openable) return;
        if (!fs.existsSync(frame.file)) {
            this.host.showWarning(this.host.l10n.t('{0} is not on this machine.', frame.file));
            return;
        }
        await this.host.showFile(frame.file, Math.max(0, frame.line - 1));
    }

    dispose(): void {
        this.panel.dispose();
    }
}
