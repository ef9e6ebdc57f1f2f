/**
 * Attach to any rank from the Training Jobs view.
 * Steps: which ranks (a rank row: that one; a job row: its ranks waiting for a debugger, else
 * a pick among its live ranks) → an endpoint per rank (a rank that listens is used as is;
 * others through `rankdebug attach JOB RANK --json`, which tells an armed rank through its
 * handler or injects debugpy with gdb, under a cancellable progress notification) → a parent
 * session over the job with one child session `rank N` per rank, straight to its debugpy
 * (debugAdapter.ts `__attach`). Errors (ptrace refused, with the fix) are shown as the CLI
 * words them.
 */
import * as vscode from 'vscode';
import { runCli } from './cli';
import { CliError } from './core/cliOutput';
import { parseEvent } from './core/events';
import { canAttach, jobLabel, listensNow, type JobInfo, type RankInfo } from './core/jobList';
import { formatSpec } from './core/ranks';
import { TYPE, type RankdebugConfiguration } from './debugAdapter';
import type { JobState } from './jobState';
import type { JobNode } from './jobsView';
import { log } from './log';
import { getSettings } from './settings';

interface Endpoint {
    rank: number;
    host: string;
    port: number;
}

export class RankAttach implements vscode.Disposable {
    constructor(
        private readonly python: () => Promise<string>,
        private readonly jobs: { pickJob(title: string): Promise<JobInfo | undefined>; refresh(): Promise<void> },
        private readonly state: JobState,
    ) {}

    /** Attach from a row (or the palette: pick a job first). */
    async attach(node?: JobNode): Promise<void> {
        const job = node?.job ?? (await this.jobs.pickJob(vscode.l10n.t('Attach to which job?')));
        if (!job) return;
        log().info(`attach: ${node?.kind ?? 'palette'} ${job.id}${node?.kind === 'rank' ? ` rank ${node.rank.rank}` : ''}`);
        const tracked = this.state.byJobId(job.id);
        const live = job.ranks.filter((r) => canAttach(r, tracked?.ranks.get(r.rank)?.state));
        let ranks: RankInfo[];
        if (node?.kind === 'rank') {
            ranks = [node.rank];
        } else {
            if (!live.length) {
                void vscode.window.showInformationMessage(vscode.l10n.t('Every rank of {0} has a debugger already, or none runs.', jobLabel(job)));
                return;
            }
            const waiting = live.filter(listensNow);
            const choices = waiting.length ? waiting : live;
            ranks = choices;
            if (choices.length > 1) {
                const picked = await vscode.window.showQuickPick(
                    choices.map((r) => ({
                        label: `rank ${r.rank}`,
                        description: [r.pid !== null ? `pid ${r.pid}` : '', r.port ? `${r.address ?? '127.0.0.1'}:${r.port}` : ''].filter(Boolean).join(' · '),
                        picked: waiting.length > 0,
                        rank: r,
                    })),
                    { canPickMany: true, title: vscode.l10n.t('Attach to which ranks?') },
                );
                if (!picked?.length) return;
                ranks = picked.map((p) => p.rank);
            }
        }
        const endpoints = await this.endpoints(job, ranks);
        if (!endpoints.length) return;
        await this.start(job, endpoints);
        void this.jobs.refresh();
    }

    /** Endpoints of the ranks: as they listen, or after `rankdebug attach` made them listen. */
    private async endpoints(job: JobInfo, ranks: RankInfo[]): Promise<Endpoint[]> {
        const ready: Endpoint[] = [];
        const todo: RankInfo[] = [];
        for (const r of ranks) {
            if (listensNow(r) && r.port !== null) ready.push({ rank: r.rank, host: r.address ?? '127.0.0.1', port: r.port });
            else todo.push(r);
        }
        if (!todo.length) return ready;
        const python = await this.python();
        await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Rank Debugger'), cancellable: true },
            async (progress, token) => {
                const abort = new AbortController();
                token.onCancellationRequested(() => abort.abort());
                for (const [i, r] of todo.entries()) {
                    if (token.isCancellationRequested) break;
                    const note = todo.length > 1 ? ` (${i + 1}/${todo.length})` : '';
                    progress.report({ message: vscode.l10n.t('Starting a debugger in rank {0} of {1}…', r.rank, job.id) + note });
                    const t0 = Date.now();
                    try {
                        const run = await runCli(python, ['attach', job.id, String(r.rank), '--json'], { timeoutMs: 90000, signal: abort.signal });
                        const ev = parseEvent(JSON.stringify(run.answer));
                        if (ev?.event !== 'listening') throw new CliError(vscode.l10n.t('rankdebug attach gave no port'));
                        log().info(`rank ${r.rank} of ${job.id} listens on ${ev.host}:${ev.port} (${Date.now() - t0} ms)`);
                        ready.push({ rank: r.rank, host: ev.host, port: ev.port });
                    } catch (e) {
                        if (token.isCancellationRequested) break;
                        const message = e instanceof Error ? e.message : String(e);
                        log().warn(`attach rank ${r.rank} of ${job.id}: ${message}`);
                        void vscode.window.showErrorMessage(vscode.l10n.t('Cannot attach to rank {0} of {1}: {2}', r.rank, job.id, message), { modal: false });
                    }
                }
            },
        );
        return ready.sort((a, b) => a.rank - b.rank);
    }

    /**
     * A parent session over the ranks (debugAdapter.ts `__attach`) with one child session
     * `rank N` per rank straight to its debugpy: the Call Stack groups them under the job,
     * and this window's state (paused/attached) follows them. Ending it detaches; the job runs on.
     */
    private async start(job: JobInfo, endpoints: Endpoint[]): Promise<void> {
        const folder = vscode.workspace.workspaceFolders?.[0];
        const spec = formatSpec(endpoints.map((e) => e.rank));
        const config: RankdebugConfiguration = {
            type: TYPE,
            request: 'attach',
            name: `${jobLabel(job)} · ${endpoints.length === 1 ? 'rank' : 'ranks'} ${spec}`,
            justMyCode: getSettings(folder?.uri).justMyCode,
            __attach: { job: job.id, ranks: endpoints, worldSize: job.worldSize, title: jobLabel(job) },
        };
        const t0 = Date.now();
        const ok = await vscode.debug.startDebugging(folder, config);
        log().info(`attach ${job.id} ranks ${spec}: ${ok ? 'started' : 'failed'} (${Date.now() - t0} ms)`);
    }

    dispose(): void {
        // nothing held
    }
}
