/**
 * The Training Jobs view (Run and Debug container): jobs from the registry and those this
 * window debugs → their ranks. Refreshed by a file watcher on the registry folder (no timer
 * loop) and by debug session changes. Also the status bar item `rankdebug: 2/4 ranks paused`.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { listJobs, rankState, registryRoot, statusText, type JobEntry, type RankEntry } from './core/jobs';
import { formatSpec } from './core/ranks';
import { join } from './core/shell';
import { TYPE, type RankdebugConfiguration } from './debugAdapter';
import type { JobState, TrackedJob } from './jobState';
import { log } from './log';

export type JobNode = { kind: 'job'; job: JobEntry; tracked?: TrackedJob } | { kind: 'rank'; job: JobEntry; rank: RankEntry; tracked?: TrackedJob };

function time(seconds: number | undefined): string {
    if (!seconds) return '';
    return new Date(seconds * 1000).toLocaleTimeString();
}

export class JobsView implements vscode.TreeDataProvider<JobNode>, vscode.Disposable {
    private readonly changed = new vscode.EventEmitter<JobNode | undefined>();
    readonly onDidChangeTreeData = this.changed.event;
    private jobs: JobEntry[] = [];
    private signature = '';
    private watcher: fs.FSWatcher | undefined;
    private timer: NodeJS.Timeout | undefined;
    private readonly status: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];
    readonly root = registryRoot();

    constructor(private readonly state: JobState) {
        this.status = vscode.window.createStatusBarItem('rankdebug.status', vscode.StatusBarAlignment.Left, 50);
        this.status.name = 'Rank Debugger';
        this.status.command = 'rankdebug.jobs.focus';
        this.disposables.push(this.status, state.onDidChange(() => this.schedule()));
        this.watch();
        this.refresh();
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

    private schedule(): void {
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => this.refresh(), 150);
    }

    /** Re-reads the registry; the tree re-renders only when what it shows changed (an open context menu survives). */
    refresh(): void {
        const before = this.jobs.map((j) => j.job).join(',');
        this.jobs = listJobs(this.root);
        const after = this.jobs.map((j) => j.job).join(',');
        if (after !== before) log().info(`jobs in ${this.root}: ${after || 'none'}`);
        const signature = JSON.stringify([
            this.jobs.map((j) => [j.job, j.state, j.rankEntries.map((r) => [r.rank, r.pid, r.port, r.state])]),
            this.state.all().map((t) => [t.key, t.job, t.terminal ? 1 : 0, [...t.ranks.values()].map((r) => [r.rank, r.state])]),
        ]);
        if (signature !== this.signature) {
            this.signature = signature;
            void vscode.commands.executeCommand('setContext', 'rankdebug.hasJobs', this.jobs.length > 0);
            this.changed.fire(undefined);
        }
        this.updateStatus();
    }

    private tracked(job: JobEntry): TrackedJob | undefined {
        return this.state.byJobId(job.job);
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
        if (node.kind === 'job') {
            const j = node.job;
            const cmd = j.command?.length ? join(j.command) : j.job;
            const item = new vscode.TreeItem(j.launcher ? `${j.launcher} · ${j.job}` : j.job, vscode.TreeItemCollapsibleState.Expanded);
            const world = j.world_size ? vscode.l10n.t('{0} ranks', j.world_size) : '';
            item.description = [world, time(j.start_time), j.state ?? ''].filter(Boolean).join(' · ');
            item.tooltip = new vscode.MarkdownString().appendCodeblock(cmd, 'shell').appendText(`\ncwd: ${j.cwd ?? ''}\npid: ${j.pid ?? ''}`);
            item.contextValue = node.tracked?.terminal ? 'rankdebug.job.terminal' : 'rankdebug.job';
            item.iconPath = new vscode.ThemeIcon('server-process');
            item.id = `job:${j.job}`;
            return item;
        }
        const r = node.rank;
        const tr = node.tracked?.ranks.get(r.rank);
        const st = rankState(r, tr?.state);
        const item = new vscode.TreeItem(`rank ${r.rank}`, vscode.TreeItemCollapsibleState.None);
        const where = r.port ? `${r.host ?? '127.0.0.1'}:${r.port}` : '';
        item.description = [r.pid ? `pid ${r.pid}` : '', where, vscode.l10n.t(st)].filter(Boolean).join(' · ');
        item.contextValue = r.port && st !== 'exited' ? 'rankdebug.rank' : 'rankdebug.rankNoPort';
        item.iconPath = new vscode.ThemeIcon(st === 'paused' ? 'debug-pause' : st === 'waiting for debugger' ? 'debug-disconnect' : st === 'attached' ? 'debug' : 'circle-outline');
        item.id = `rank:${node.job.job}:${r.rank}`;
        return item;
    }

    getChildren(node?: JobNode): JobNode[] {
        if (!node) return this.jobs.map((job) => ({ kind: 'job', job, tracked: this.tracked(job) }));
        if (node.kind === 'job') return node.job.rankEntries.map((rank) => ({ kind: 'rank', job: node.job, rank, tracked: node.tracked }));
        return [];
    }

    /** Attach: a rank → its own session; a job → pick among its listening ranks. */
    async attach(node?: JobNode): Promise<void> {
        const job = node?.job ?? this.jobs[this.jobs.length - 1];
        if (!job) {
            void vscode.window.showInformationMessage(vscode.l10n.t('No training job is running.'));
            return;
        }
        const folder = vscode.workspace.workspaceFolders?.[0];
        if (node?.kind === 'rank') {
            const config: RankdebugConfiguration = { type: TYPE, request: 'attach', name: `rank ${node.rank.rank}`, job: job.job, ranks: [node.rank.rank] };
            await vscode.debug.startDebugging(folder, config);
            return;
        }
        const listening = job.rankEntries.filter((r) => r.port && r.state !== 'exited');
        if (!listening.length) {
            void vscode.window.showInformationMessage(vscode.l10n.t('No rank of this job listens for a debugger.'));
            return;
        }
        let ranks = listening.map((r) => r.rank);
        if (listening.length > 1) {
            const picked = await vscode.window.showQuickPick(
                listening.map((r) => ({ label: `rank ${r.rank}`, description: `${r.host ?? ''}:${r.port} · ${rankState(r)}`, picked: true, rank: r.rank })),
                { canPickMany: true, title: vscode.l10n.t('Attach to which ranks?') },
            );
            if (!picked?.length) return;
            ranks = picked.map((p) => p.rank);
        }
        const spec = formatSpec(ranks);
        const config: RankdebugConfiguration = { type: TYPE, request: 'attach', name: `${job.launcher ?? 'job'} ${job.job} · ranks ${spec}`, job: job.job, ranks: spec };
        await vscode.debug.startDebugging(folder, config);
    }

    /** Stop job: ends the parent session when this window debugs it, and signals the supervisor. */
    async stop(node?: JobNode): Promise<void> {
        const job = node?.job;
        if (!job) return;
        const tracked = this.tracked(job);
        if (tracked?.parent) await vscode.debug.stopDebugging(tracked.parent);
        if (job.pid) {
            try {
                process.kill(job.pid, 'SIGTERM');
            } catch {
                // already gone
            }
        }
        this.schedule();
    }

    openTerminal(node?: JobNode): void {
        const tracked = node ? this.tracked(node.job) : undefined;
        tracked?.terminal?.show();
    }

    async copyCommand(node?: JobNode): Promise<void> {
        const cmd = node?.job.command;
        if (cmd?.length) await vscode.env.clipboard.writeText(join(cmd));
    }

    dispose(): void {
        if (this.timer) clearTimeout(this.timer);
        this.watcher?.close();
        this.disposables.forEach((d) => d.dispose());
        this.changed.dispose();
    }
}
