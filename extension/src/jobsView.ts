/**
 * The Training Jobs view (Run and Debug container): the jobs `rankdebug jobs --json` finds
 * (ours from the registry, and any job on the machine found by the /proc scan) → their ranks,
 * with this window's session state (jobState.ts) on top. Refreshed by a watcher on the
 * registry folder, by a timer while the view is visible (`rankdebug.jobs.refreshSeconds`),
 * and by debug session changes; one CLI run at a time. Actions: attach to any rank
 * (rankAttach.ts), Show Stacks (stacksPanel.ts), Evaluate in Rank (rankEval.ts), stop, open
 * terminal, copy command. Also the status bar item `rankdebug: 2/4 ranks paused`.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { runCli } from './cli';
import {
    canAttach,
    formatBytes,
    formatCpu,
    formatGpu,
    jobContext,
    jobLabel,
    rankContext,
    rankCount,
    readJobs,
    refreshMs,
    rowSignature,
    shownState,
    type JobInfo,
    type RankInfo,
    type SessionState,
    type ShownState,
} from './core/jobList';
import { registryRoot, statusText } from './core/jobs';
import { join } from './core/shell';
import type { JobState, TrackedJob } from './jobState';
import { log } from './log';
import { SECTION } from './settings';

export type JobNode = { kind: 'job'; job: JobInfo; tracked?: TrackedJob } | { kind: 'rank'; job: JobInfo; rank: RankInfo; tracked?: TrackedJob };

function time(seconds: number | null): string {
    if (!seconds) return '';
    return new Date(seconds * 1000).toLocaleTimeString();
}

/** A rank state in the view's words. */
export function stateWord(s: ShownState): string {
    switch (s) {
        case 'starting':
            return vscode.l10n.t('starting');
        case 'running':
            return vscode.l10n.t('running');
        case 'armed':
            return vscode.l10n.t('armed');
        case 'listening':
            return vscode.l10n.t('listening');
        case 'waiting for debugger':
            return vscode.l10n.t('waiting for debugger');
        case 'attached':
            return vscode.l10n.t('attached');
        case 'paused':
            return vscode.l10n.t('paused');
        case 'exited':
            return vscode.l10n.t('exited');
    }
}

function stateIcon(s: ShownState): vscode.ThemeIcon {
    const id = {
        starting: 'loading~spin',
        running: 'circle-outline',
        armed: 'zap',
        listening: 'debug-disconnect',
        'waiting for debugger': 'debug-disconnect',
        attached: 'debug',
        paused: 'debug-pause',
        exited: 'circle-slash',
    }[s];
    return new vscode.ThemeIcon(id);
}

function nodeId(n: JobNode): string {
    return n.kind === 'job' ? `job:${n.job.id}` : `rank:${n.job.id}:${n.rank.rank}`;
}

export class JobsView implements vscode.TreeDataProvider<JobNode>, vscode.Disposable {
    private readonly changed = new vscode.EventEmitter<JobNode | JobNode[] | undefined>();
    readonly onDidChangeTreeData = this.changed.event;
    private jobs: JobInfo[] = [];
    /** Nodes by id, kept across refreshes so that a row can be re-rendered on its own. */
    private nodes = new Map<string, { node: JobNode; signature: string }>();
    private structure = '';
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
    readonly root = registryRoot();

    constructor(
        private readonly state: JobState,
        private readonly python: () => Promise<string>,
    ) {
        this.status = vscode.window.createStatusBarItem('rankdebug.status', vscode.StatusBarAlignment.Left, 50);
        this.status.name = 'Rank Debugger';
        this.status.command = 'rankdebug.jobs.focus';
        this.view = vscode.window.createTreeView('rankdebug.jobs', { treeDataProvider: this });
        this.disposables.push(
            this.status,
            this.view,
            state.onDidChange(() => this.render()),
            this.view.onDidChangeVisibility((e) => {
                if (e.visible) void this.refresh();
                else this.disarm();
            }),
            vscode.workspace.onDidChangeConfiguration((e) => {
                if (e.affectsConfiguration(`${SECTION}.jobs.refreshSeconds`)) {
                    this.disarm();
                    this.arm();
                }
            }),
        );
        this.watch();
        if (this.view.visible) void this.refresh();
    }

    /** Jobs of the last refresh. */
    get current(): readonly JobInfo[] {
        return this.jobs;
    }

    /** Watches the registry root (created 0700 if missing, as the Python side does). */
    private watch(): void {
        try {
            fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
            this.watcher = fs.watch(this.root, { recursive: true }, () => this.schedule());
            this.watcher.on('error', (e) => log().warn(`registry watcher: ${e.message}`));
        } catch (e) {
            log().warn(`cannot watch the job registry ${this.root}: ${String(e)}`);
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
            const python = await this.python();
            const run = await runCli(python, ['jobs', '--json'], { timeoutMs: 30000 });
            const snapshot = readJobs(run.answer);
            this.stale = false;
            const before = this.jobs.map((j) => j.id).join(',');
            this.jobs = snapshot.jobs;
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
    }

    private sessionState(job: JobInfo, rank: RankInfo): { tracked?: TrackedJob; session: SessionState } {
        const tracked = this.state.byJobId(job.id);
        return { tracked, session: tracked?.ranks.get(rank.rank)?.state };
    }

    /** Rebuilds the nodes; fires a change for the whole tree only when rows came or went. */
    private render(): void {
        const nodes = new Map<string, { node: JobNode; signature: string }>();
        const changed: JobNode[] = [];
        const put = (fresh: JobNode, signature: string): void => {
            const id = nodeId(fresh);
            const old = this.nodes.get(id);
            const node = old ? Object.assign(old.node, fresh) : fresh;
            if (old && old.signature !== signature) changed.push(node);
            nodes.set(id, { node, signature });
        };
        for (const job of this.jobs) {
            const tracked = this.state.byJobId(job.id);
            put({ kind: 'job', job, tracked }, rowSignature(job, undefined, undefined, tracked?.terminal ? 'terminal' : ''));
            for (const rank of job.ranks) {
                const { session } = this.sessionState(job, rank);
                put({ kind: 'rank', job, rank, tracked }, rowSignature(job, rank, session));
            }
        }
        const structure = [...nodes.keys()].join('\n');
        const whole = structure !== this.structure;
        this.nodes = nodes;
        this.structure = structure;
        if (whole) {
            void vscode.commands.executeCommand('setContext', 'rankdebug.hasJobs', this.jobs.length > 0);
            this.changed.fire(undefined);
        } else if (changed.length) {
            this.changed.fire(changed);
        }
        this.updateStatus();
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
        return node.kind === 'job' ? this.jobItem(node) : this.rankItem(node);
    }

    private jobItem(node: Extract<JobNode, { kind: 'job' }>): vscode.TreeItem {
        const j = node.job;
        const item = new vscode.TreeItem(jobLabel(j), vscode.TreeItemCollapsibleState.Expanded);
        const source = j.source === 'registry' ? vscode.l10n.t('rankdebug') : vscode.l10n.t('found running');
        item.description = [vscode.l10n.t('{0} ranks', rankCount(j)), source, j.armed ? vscode.l10n.t('armed') : '', time(j.startTime)].filter(Boolean).join(' · ');
        const tip = new vscode.MarkdownString();
        if (j.command.length) tip.appendCodeblock(join(j.command), 'shell');
        tip.appendText(`\ncwd: ${j.cwd ?? ''}\n${vscode.l10n.t('launcher pid')}: ${j.launcherPid ?? ''}\n`);
        item.tooltip = tip;
        item.contextValue = jobContext(j, Boolean(node.tracked?.terminal));
        item.iconPath = new vscode.ThemeIcon(j.armed ? 'zap' : 'server-process');
        item.id = nodeId(node);
        return item;
    }

    private rankItem(node: Extract<JobNode, { kind: 'rank' }>): vscode.TreeItem {
        const r = node.rank;
        const { session } = this.sessionState(node.job, r);
        const st = shownState(r, node.job, session);
        const item = new vscode.TreeItem(`rank ${r.rank}`, vscode.TreeItemCollapsibleState.None);
        const where = r.port ? `${r.address ?? '127.0.0.1'}:${r.port}` : '';
        item.description = [
            r.pid !== null ? `pid ${r.pid}` : '',
            stateWord(st),
            st === 'exited' ? '' : formatCpu(r.cpu),
            st === 'exited' ? '' : formatBytes(r.rss),
            formatGpu(r.gpu),
            r.armed && st !== 'armed' ? vscode.l10n.t('armed') : '',
            where,
        ]
            .filter(Boolean)
            .join(' · ');
        item.tooltip = [
            `rank ${r.rank}${r.localRank !== null ? ` (local ${r.localRank})` : ''} · pid ${r.pid ?? '?'} · ${r.host ?? ''}`,
            `${stateWord(st)}${where ? ` · ${where}` : ''}`,
            canAttach(r, session) ? vscode.l10n.t('Attach starts a debugger in this rank; only this rank pauses.') : '',
        ]
            .filter(Boolean)
            .join('\n');
        item.contextValue = rankContext(r, node.job, session);
        item.iconPath = stateIcon(st);
        item.id = nodeId(node);
        return item;
    }

    getChildren(node?: JobNode): JobNode[] {
        if (!node) return this.jobs.map((job) => this.nodes.get(`job:${job.id}`)?.node ?? { kind: 'job', job });
        if (node.kind === 'job') return node.job.ranks.map((rank) => this.nodes.get(`rank:${node.job.id}:${rank.rank}`)?.node ?? { kind: 'rank', job: node.job, rank });
        return [];
    }

    getParent(node: JobNode): JobNode | undefined {
        return node.kind === 'rank' ? this.nodes.get(`job:${node.job.id}`)?.node : undefined;
    }

    /** Jobs now (a fresh scan when the view's list is stale or empty), for commands run from the palette. */
    async fresh(): Promise<readonly JobInfo[]> {
        if (this.stale || !this.jobs.length) await this.refresh();
        return this.jobs;
    }

    /** Asks which job, when a command comes from the palette; the only job is taken as is. */
    async pickJob(title: string, filter: (j: JobInfo) => boolean = () => true): Promise<JobInfo | undefined> {
        const jobs = (await this.fresh()).filter(filter);
        if (!jobs.length) {
            void vscode.window.showInformationMessage(vscode.l10n.t('No training job is running.'));
            return undefined;
        }
        if (jobs.length === 1) return jobs[0];
        const picked = await vscode.window.showQuickPick(
            jobs.map((j) => ({ label: jobLabel(j), description: [vscode.l10n.t('{0} ranks', rankCount(j)), j.cwd ?? ''].filter(Boolean).join(' · '), detail: join(j.command), job: j })),
            { title, matchOnDescription: true, matchOnDetail: true },
        );
        return picked?.job;
    }

    /** Stop job: ends this window's session over it, then SIGTERM to the supervisor (registry) or, once confirmed, the launcher (scan). */
    async stop(node?: JobNode): Promise<void> {
        const job = node?.job;
        if (!job) return;
        const pid = job.launcherPid;
        if (job.source === 'scan') {
            if (pid === null) {
                void vscode.window.showInformationMessage(vscode.l10n.t('Job {0} has no launcher process to stop.', job.id));
                return;
            }
            const stopIt = vscode.l10n.t('Stop Job');
            const answer = await vscode.window.showWarningMessage(
                vscode.l10n.t('Stop {0}? Rank Debugger did not start it: its launcher (pid {1}) gets SIGTERM.', jobLabel(job), pid),
                { modal: true, detail: join(job.command) },
                stopIt,
            );
            if (answer !== stopIt) return;
        }
        const tracked = this.state.byJobId(job.id);
        if (tracked?.parent) await vscode.debug.stopDebugging(tracked.parent);
        if (pid !== null) {
            try {
                process.kill(pid, 'SIGTERM');
                log().info(`stop ${job.id}: SIGTERM to ${pid}`);
            } catch (e) {
                log().info(`stop ${job.id}: ${String(e)}`);
            }
        }
        this.schedule();
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
        this.disarm();
        this.watcher?.close();
        this.disposables.forEach((d) => d.dispose());
        this.changed.dispose();
    }
}
