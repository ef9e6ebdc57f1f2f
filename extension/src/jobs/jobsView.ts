/**
 * The Training Jobs view (Run and Debug container): the jobs `rankdebug jobs --json` finds
 * (ours from the registry, and any job on the machine found by the /proc scan) → their ranks,
 * with this window's session state and the supervisor's live states (jobState.ts) on top:
 * running, paused at `file:line` in `function`, waiting in a collective, raised, exited. Many
 * ranks collapse into ranges by node and state (core/rankTree.ts); a filter (rank spec or text)
 * narrows the rows; rows can be multi-selected for the group commands (rankGroups.ts).
 * Refreshed by a watcher on the registry folder, by a timer while the view is visible
 * (`rankdebug.jobs.refreshSeconds`), and by debug session changes; one CLI run at a time.
 * Actions: attach to any rank (rankAttach.ts), Show Stacks (stacksPanel.ts), Evaluate in Rank
 * (rankEval.ts), stop, open terminal, copy command. Also the status bar item
 * `rankdebug: 2/4 ranks paused`. The jobs it found running (not started by `rankdebug
 * launch`) are watched for hangs while it is visible (`rankdebug.jobs.watchFound`:
 * foundWatch.ts), with the notification of a launched job's own watch.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { runCli } from '../common/cli';
import { readJobs, refreshMs, type JobInfo, type RankInfo, type SessionState } from '../core/jobList';
import { reportedDims } from '../core/coords';
import { statusText } from '../core/jobs';
import { jobTreeRows } from '../core/jobTree';
import { rankRow, type RankRow } from '../core/rankRow';
import { matchesFilter, type RankFilter } from '../core/rankFilter';
import { join } from '../core/shell';
import { HangNotices } from '../diagnose/hangNotices';
import { noticeHost } from '../diagnose/whyStuck';
import { FoundJobWatch } from './foundWatch';
import { pickJob, stopJob } from './jobActions';
import { groupItem, jobItem, newestFirst, nodeId, rankItem, type JobItem, type JobNode } from './jobItems';
import type { JobState, TrackedJob } from './jobState';
import { jobActionsHost } from './vscodeHost';
import { log } from '../common/log';
import { getSettings, SECTION } from '../common/settings';
import { hostFlags } from '../core/settings';
import { mark } from '../debug/traceMarks';

export type { JobNode } from './jobItems';

/** A row's state as VS Code takes it. */
const COLLAPSE: Record<JobItem['state'], vscode.TreeItemCollapsibleState> = {
    none: vscode.TreeItemCollapsibleState.None,
    collapsed: vscode.TreeItemCollapsibleState.Collapsed,
    expanded: vscode.TreeItemCollapsibleState.Expanded,
};

/** A row as VS Code shows it. */
function treeItem(row: JobItem): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, COLLAPSE[row.state]);
    item.description = row.description;
    if (typeof row.tooltip === 'string') {
        item.tooltip = row.tooltip;
    } else {
        const tip = new vscode.MarkdownString();
        if (row.tooltip.command) tip.appendCodeblock(row.tooltip.command, 'shell');
        tip.appendText(row.tooltip.text);
        item.tooltip = tip;
    }
    item.contextValue = row.contextValue;
    item.iconPath = new vscode.ThemeIcon(row.icon);
    item.id = row.id;
    return item;
}

export class JobsView implements vscode.TreeDataProvider<JobNode>, vscode.Disposable {
    private readonly changed = new vscode.EventEmitter<JobNode | JobNode[] | undefined>();
    readonly onDidChangeTreeData = this.changed.event;
    private jobs: JobInfo[] = [];
    /** Nodes by id, kept across refreshes so that a row can be re-rendered on its own. */
    private nodes = new Map<string, { node: JobNode; signature: string }>();
    /** Each node's children and parent, by id, as the last render grouped them. */
    private children = new Map<string, string[]>();
    private parents = new Map<string, string>();
    private structure = '';
    private filter: RankFilter | undefined;
    /** The parallel dimension ranks are grouped by (Group Ranks by…); undefined: by node and state. */
    private grouping: string | undefined;
    private renderTimer: NodeJS.Timeout | undefined;
    private watcher: fs.FSWatcher | undefined;
    private debounce: NodeJS.Timeout | undefined;
    private timer: NodeJS.Timeout | undefined;
    private inFlight: Promise<void> | undefined;
    private again = false;
    private stale = true;
    private lastError = '';
    private readonly status: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];
    readonly view: vscode.TreeView<JobNode>;
    /** The registry folder watched, as the last `rankdebug jobs --json` named it. */
    private watched: string | undefined;
    /** The hang watch of the jobs found running. */
    readonly found: FoundJobWatch;

    constructor(
        private readonly state: JobState,
        private readonly python: () => Promise<string>,
    ) {
        this.status = vscode.window.createStatusBarItem('rankdebug.status', vscode.StatusBarAlignment.Left, 50);
        this.status.name = 'Rank Debugger';
        this.status.command = 'rankdebug.jobs.focus';
        this.view = vscode.window.createTreeView('rankdebug.jobs', { treeDataProvider: this, canSelectMany: true });
        this.found = new FoundJobWatch(python, state, new HangNotices(noticeHost()), () => this.refresh().then(() => this.jobs));
        this.disposables.push(
            this.found,
            this.status,
            this.view,
            // Events come in bursts (every rank stops at once): one render for a burst.
            state.onDidChange(() => this.scheduleRender()),
            this.view.onDidChangeVisibility((e) => {
                if (e.visible) void this.refresh();
                else this.disarm();
                this.found.update(this.jobs, e.visible);
            }),
            vscode.workspace.onDidChangeConfiguration((e) => {
                if (e.affectsConfiguration(`${SECTION}.jobs.refreshSeconds`)) {
                    this.disarm();
                    this.arm();
                }
                if (e.affectsConfiguration(`${SECTION}.jobs.watchFound`) || e.affectsConfiguration(`${SECTION}.hangSeconds`)) this.found.restart();
            }),
        );
        this.disposables.push(vscode.commands.registerCommand('rankdebug.jobs.groupBy', () => this.askGrouping()));
        // The registry folder is watched once an answer names it (until then the view is
        // stale, and is refreshed when shown or asked).
        if (this.view.visible) void this.refresh();
    }

    /** Jobs of the last refresh. */
    get current(): readonly JobInfo[] {
        return this.jobs;
    }

    /** The rows selected in the view. */
    get selection(): readonly JobNode[] {
        return this.view.selection;
    }

    /** Shows only the rank rows the filter lets through (undefined: all); its text goes in the view's description. */
    setFilter(filter: RankFilter | undefined): void {
        this.filter = filter;
        this.describe();
        void vscode.commands.executeCommand('setContext', 'rankdebug.jobsFiltered', filter !== undefined);
        this.render();
    }

    /** Groups every job's ranks by the parallel dimension `dim` (where its ranks report it), or as usual (undefined). */
    setGrouping(dim: string | undefined): void {
        this.grouping = dim;
        this.describe();
        void vscode.commands.executeCommand('setContext', 'rankdebug.jobsGrouped', dim !== undefined);
        this.render();
    }

    /** Group Ranks by…: the dimensions the jobs' ranks report, or no grouping. */
    async askGrouping(): Promise<void> {
        const dims = reportedDims((await this.fresh()).flatMap((j) => j.ranks));
        if (!dims.length && !this.grouping) {
            void vscode.window.showInformationMessage(vscode.l10n.t('No rank reports parallel coordinates yet: they come from the job\'s device mesh or Megatron\'s parallel_state once it has set them up.'));
            return;
        }
        const none = { label: vscode.l10n.t('No grouping'), description: vscode.l10n.t('by node and state'), dim: undefined as string | undefined };
        const items = [...dims.map((d) => ({ label: d, description: d === this.grouping ? vscode.l10n.t('current') : '', dim: d as string | undefined })), none];
        const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Group Ranks by…') });
        if (picked) this.setGrouping(picked.dim);
    }

    /** The view's description: the filter and the grouping. */
    private describe(): void {
        const parts = [this.filter ? vscode.l10n.t('filter: {0}', this.filter.label) : '', this.grouping ? vscode.l10n.t('by {0}', this.grouping) : ''].filter(Boolean);
        this.view.description = parts.length ? parts.join(' · ') : undefined;
    }

    private scheduleRender(): void {
        if (this.renderTimer) return;
        this.renderTimer = setTimeout(() => {
            this.renderTimer = undefined;
            this.render();
        }, 50);
    }

    /**
     * Watches the registry folder `rankdebug jobs --json` named (the Python side made it and
     * checked it is the user's own), for jobs coming and going; a new name moves the watch.
     */
    private watch(folder: string | null): void {
        if (!folder || folder === this.watched) return;
        this.watcher?.close();
        this.watcher = undefined;
        this.watched = folder;
        try {
            this.watcher = fs.watch(folder, { recursive: true }, () => this.schedule());
            this.watcher.on('error', (e) => log().warn(`registry watcher: ${e.message}`));
        } catch (e) {
            log().warn(`cannot watch the job registry ${folder}: ${String(e)}`);
        }
    }

    /** A refresh soon (registry changes come in bursts); only while the view is visible. */
    schedule(): void {
        if (!this.view.visible) {
            this.stale = true;
            return;
        }
        if (this.debounce) clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.refresh(), 150);
    }

    private arm(): void {
        const ms = refreshMs(vscode.workspace.getConfiguration(SECTION).get('jobs.refreshSeconds', 5));
        if (!ms || !this.view.visible || this.timer || this.inFlight) return;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.refresh();
        }, ms);
    }

    private disarm(): void {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
    }

    /**
     * Runs `rankdebug jobs --json` and re-renders what changed.
     * Never two runs at once: a call during a run asks for one more run after it.
     */
    refresh(): Promise<void> {
        if (this.inFlight) {
            this.again = true;
            return this.inFlight;
        }
        this.disarm();
        this.inFlight = this.scan().finally(() => {
            this.inFlight = undefined;
            if (this.again) {
                this.again = false;
                void this.refresh();
            } else {
                this.arm();
            }
        });
        return this.inFlight;
    }

    private async scan(): Promise<void> {
        try {
            mark('jobs refresh');
            const python = await this.python();
            const run = await runCli(python, ['jobs', '--json', ...hostFlags(getSettings())], { timeoutMs: 30000 });
            const snapshot = readJobs(run.answer);
            mark(`jobs answered (${run.ms} ms, ${snapshot.jobs.length} jobs)`);
            this.watch(snapshot.registry);
            this.stale = false;
            const before = this.jobs.map((j) => j.id).join(',');
            this.jobs = snapshot.jobs;
            this.found.update(this.jobs, this.view.visible);
            const after = this.jobs.map((j) => j.id).join(',');
            if (after !== before) log().info(`jobs (${run.ms} ms, scan ${snapshot.scanMs ?? '?'} ms): ${after || 'none'}`);
            for (const w of snapshot.warnings) log().debug(`jobs: ${w}`);
            if (this.lastError) {
                this.lastError = '';
                this.view.message = undefined;
            }
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            if (message !== this.lastError) log().warn(`rankdebug jobs: ${message}`);
            this.lastError = message;
            this.view.message = vscode.l10n.t('Cannot list training jobs: {0}', message);
        }
        this.render();
        mark('jobs rendered');
    }

    private sessionState(job: JobInfo, rank: RankInfo): { tracked?: TrackedJob; session: SessionState } {
        const tracked = this.state.byJobId(job.id);
        return { tracked, session: tracked?.ranks.get(rank.rank)?.state };
    }

    /** Rebuilds the nodes; fires a change for the whole tree only when rows came or went. */
    private render(): void {
        const nodes = new Map<string, { node: JobNode; signature: string }>();
        const children = new Map<string, string[]>();
        const parents = new Map<string, string>();
        const changed: JobNode[] = [];
        const tracked = new Map(this.jobs.map((job) => [job.id, this.state.byJobId(job.id)]));
        const rows = jobTreeRows(this.jobs, {
            rows: (job) => this.rows(job, tracked.get(job.id)),
            session: (job, rank) => this.sessionState(job, rank).session,
            jobExtra: (job) => (tracked.get(job.id)?.terminal ? 'terminal' : ''),
            groupBy: () => this.grouping,
        });
        for (const r of rows) {
            const t = tracked.get(r.job.id);
            const fresh: JobNode =
                r.kind === 'job'
                    ? { kind: 'job', job: r.job, tracked: t }
                    : r.kind === 'group'
                      ? { kind: 'group', job: r.job, group: r.group, tracked: t }
                      : { kind: 'rank', job: r.job, rank: r.rank, row: r.row, tracked: t };
            const old = this.nodes.get(r.id);
            const node = old ? Object.assign(old.node, fresh) : fresh;
            if (old && old.signature !== r.signature) changed.push(node);
            nodes.set(r.id, { node, signature: r.signature });
            if (r.parent) {
                parents.set(r.id, r.parent);
                const siblings = children.get(r.parent);
                if (siblings) siblings.push(r.id);
                else children.set(r.parent, [r.id]);
            }
        }
        const structure = [...nodes.keys()].join('\n');
        const whole = structure !== this.structure;
        this.nodes = nodes;
        this.children = children;
        this.parents = parents;
        this.structure = structure;
        if (whole) {
            void vscode.commands.executeCommand('setContext', 'rankdebug.hasJobs', this.jobs.length > 0);
            this.changed.fire(undefined);
        } else if (changed.length) {
            this.changed.fire(changed);
        }
        this.updateStatus();
    }

    /** The job's rank rows the filter lets through. */
    private rows(job: JobInfo, tracked: TrackedJob | undefined): RankRow[] {
        const out: RankRow[] = [];
        for (const rank of job.ranks) {
            const row = rankRow(rank, job, tracked?.ranks.get(rank.rank)?.state, tracked?.live?.get(rank.rank), vscode.l10n);
            if (matchesFilter(row, this.filter)) out.push(row);
        }
        return out;
    }

    private updateStatus(): void {
        const tracked = this.state.all();
        if (!tracked.length) {
            this.status.hide();
            return;
        }
        let paused = 0;
        let total = 0;
        for (const t of tracked) {
            paused += [...t.ranks.values()].filter((r) => r.state === 'paused').length;
            total += t.worldSize ?? t.ranks.size;
        }
        this.status.text = `$(debug-alt) ${statusText(paused, total)}`;
        this.status.tooltip = tracked.map((t) => t.title).join('\n');
        this.status.show();
    }

    getTreeItem(node: JobNode): vscode.TreeItem {
        if (node.kind === 'job') mark('jobs view item');
        switch (node.kind) {
            case 'job':
                return this.jobItem(node);
            case 'group':
                return this.groupItem(node);
            case 'rank':
                return this.rankItem(node);
        }
    }

    /** A range of ranks (`ranks 0-127 · running`), collapsed. */
    private groupItem(node: Extract<JobNode, { kind: 'group' }>): vscode.TreeItem {
        mark('jobs view item group');
        return treeItem(groupItem(node));
    }

    private jobItem(node: Extract<JobNode, { kind: 'job' }>): vscode.TreeItem {
        return treeItem(jobItem(node, this.filter ? this.countShown(nodeId(node)) : undefined, vscode.l10n));
    }

    /** Rank rows under a job or group row. */
    private countShown(id: string): number {
        let n = 0;
        for (const child of this.children.get(id) ?? []) n += child.startsWith('rank:') ? 1 : this.countShown(child);
        return n;
    }

    private rankItem(node: Extract<JobNode, { kind: 'rank' }>): vscode.TreeItem {
        return treeItem(rankItem(node, this.sessionState(node.job, node.rank).session, vscode.l10n));
    }

    getChildren(node?: JobNode): JobNode[] {
        // The newest job first: the one just started is the one looked for, whatever else runs.
        if (!node) mark(`jobs view asked (${this.jobs.length} jobs)`);
        if (!node) return newestFirst(this.jobs).map((job) => this.nodes.get(`job:${job.id}`)?.node ?? { kind: 'job', job });
        const ids = this.children.get(nodeId(node)) ?? [];
        if (node.kind === 'job') mark(`jobs view asked for the job's ${ids.length} rows`);
        return ids.map((id) => this.nodes.get(id)?.node).filter((n): n is JobNode => n !== undefined);
    }

    getParent(node: JobNode): JobNode | undefined {
        const parent = this.parents.get(nodeId(node));
        return parent ? this.nodes.get(parent)?.node : undefined;
    }

    /** Jobs now (a fresh scan when the view's list is stale or empty), for commands run from the palette. */
    /** The jobs as a run started after this call lists them (an attach configuration's `job`: one started a moment ago counts). */
    async latest(): Promise<readonly JobInfo[]> {
        if (this.inFlight) await this.inFlight;
        await this.refresh();
        return this.jobs;
    }

    async fresh(): Promise<readonly JobInfo[]> {
        if (this.stale || !this.jobs.length) await this.refresh();
        return this.jobs;
    }

    /** Asks which job, when a command comes from the palette; the only job is taken as is (jobActions.ts). */
    async pickJob(title: string, filter: (j: JobInfo) => boolean = () => true): Promise<JobInfo | undefined> {
        return pickJob(jobActionsHost, await this.fresh(), title, filter);
    }

    /** Stop job: ends this window's session over it, then SIGTERM to the supervisor (registry) or, once confirmed, the launcher (scan). */
    async stop(node?: JobNode): Promise<void> {
        if (node && (await stopJob(jobActionsHost, this.state, node.job))) this.schedule();
    }

    openTerminal(node?: JobNode): void {
        const tracked = node ? this.state.byJobId(node.job.id) : undefined;
        tracked?.terminal?.show();
    }

    async copyCommand(node?: JobNode): Promise<void> {
        const cmd = node?.job.command;
        if (cmd?.length) await vscode.env.clipboard.writeText(join(cmd));
    }

    dispose(): void {
        if (this.debounce) clearTimeout(this.debounce);
        if (this.renderTimer) clearTimeout(this.renderTimer);
        this.disarm();
        this.watcher?.close();
        this.disposables.forEach((d) => d.dispose());
        this.changed.dispose();
    }
}
