/**
 * Attach to any rank from the Training Jobs view.
 * Steps: which ranks (a rank row: that one; a job row: its ranks waiting for a debugger, else
 * a pick among its live ranks, with their coordinates and typed selectors: attachPick.ts), leaving out ranks a session of this window has or is starting
 * and ranks an earlier click is attaching (debugpy's adapter takes one client) → an endpoint
 * per rank (a rank that listens is used as is; others through `rankdebug attach JOB RANK
 * --json`, which tells an armed rank through its handler or injects debugpy with gdb, under a
 * cancellable progress notification) → the sessions:
 * - a job this window launched (its parent session follows the supervisor's events): that
 *   parent starts the child `rank N`, once, from the supervisor's `listening` event or from
 *   the endpoint, whichever comes first (jobState.ts `startRank`);
 * - any other job: a parent session over the job with one child session `rank N` per rank,
 *   straight to its debugpy (debug/configuration.ts `__attach`).
 * Errors (ptrace refused, with the fix) are shown as the CLI words them. The VS Code calls
 * are the host's (host.ts); rankAttach.ts gives it the real ones.
 */
import type * as vscode from 'vscode';
import { pickAttachRanks } from './attachPick';
import { attachSteps, InFlight, offerable, type AttachFacts } from '../core/attachRoute';
import { CliError } from '../core/cliOutput';
import { readAttachLines } from '../core/attachLines';
import { canAttach, controlDir, jobLabel, listensNow, type JobInfo, type RankInfo } from '../core/jobList';
import type { Execute } from '../core/rankCheck';
import { formatSpec } from '../core/ranks';
import { TYPE, type RankdebugConfiguration } from '../debug/configuration';
import type { AttachHost } from './host';
import type { JobState, TrackedJob } from './jobState';
import type { JobNode } from './jobsView';
import { hostFlags } from '../core/settings';

interface Endpoint {
    rank: number;
    host: string;
    port: number;
}

export class RankAttacher implements vscode.Disposable {
    /** Ranks being attached (`JOB/RANK`): a second click on the same rank does nothing. */
    private readonly inFlight = new InFlight();

    constructor(
        private readonly host: AttachHost,
        private readonly python: () => Promise<string>,
        private readonly jobs: { pickJob(title: string): Promise<JobInfo | undefined>; refresh(): Promise<void> },
        private readonly state: JobState,
        /** The language server's commands: a typed rank spec or selector in the pick. */
        private readonly execute?: Execute,
    ) {}

    private facts(job: JobInfo): AttachFacts {
        return { claimed: this.state.claimed(job.id), pending: this.inFlight.ranks(job.id) };
    }

    /** Ranks of the job this window has a session on or is attaching (the session cap counts them). */
    sessionsOf(job: string): ReadonlySet<number> {
        return new Set([...this.state.claimed(job), ...this.inFlight.ranks(job)]);
    }

    /** Attach from a row (or the palette: pick a job first). */
    async attach(node?: JobNode): Promise<void> {
        const job = node?.job ?? (await this.jobs.pickJob(this.host.l10n.t('Attach to which job?')));
        if (!job) return;
        const row = node?.kind === 'rank' ? node.rank : undefined;
        this.host.log.info(`attach: ${node?.kind ?? 'palette'} ${job.id}${row ? ` rank ${row.rank}` : ''}`);
        const ranks = row ? [row] : await this.pickRanks(job);
        if (!ranks?.length) return;
        await this.attachRanks(job, ranks, row !== undefined);
    }

    /** Attach to these ranks of the job (Why Is This Job Stuck?: the culprit, one rank per class); `told`: say when one has a session already. */
    async attachRanks(job: JobInfo, ranks: RankInfo[], told = true): Promise<void> {
        const todo = this.claim(job, ranks, told);
        if (!todo.length) return;
        try {
            await this.connect(job, todo);
        } finally {
            for (const r of todo) this.inFlight.release(job.id, r.rank);
        }
        void this.jobs.refresh();
    }

    /** Sessions for the ranks: through the job's own parent session when this window follows it, else a new parent. */
    private async connect(job: JobInfo, todo: RankInfo[]): Promise<void> {
        const follower = this.state.follower(job.id);
        if (follower?.startRank) {
            await this.viaParent(job, todo, follower);
            return;
        }
        const endpoints = await this.endpoints(job, todo);
        if (endpoints.length) await this.start(job, endpoints);
    }

    /** A job row: its ranks waiting for a debugger, else a pick among its live ranks; undefined when none or cancelled. */
    private async pickRanks(job: JobInfo): Promise<RankInfo[] | undefined> {
        const live = offerable(job.ranks, this.facts(job), (r) => canAttach(r, undefined));
        if (!live.length) {
            this.host.showInfo(this.host.l10n.t('Every rank of {0} has a debugger already, or none runs.', jobLabel(job)));
            return undefined;
        }
        const waiting = live.filter(listensNow);
        const choices = waiting.length ? waiting : live;
        if (choices.length === 1) return choices;
        return pickAttachRanks(this.host, job, choices, waiting.length > 0, this.execute);
    }

    /**
     * The ranks still to attach, each taken in `inFlight`: checked again after the pick, as a
     * session or an earlier click may have taken a rank meanwhile. `fromRow`: a rank row was clicked.
     */
    private claim(job: JobInfo, ranks: RankInfo[], fromRow: boolean): RankInfo[] {
        const steps = attachSteps(ranks, this.facts(job));
        for (const s of steps) {
            if (s.action === 'attached') {
                this.host.log.info(`attach: rank ${s.rank.rank} of ${job.id} has a session already`);
                if (fromRow) this.host.showInfo(this.host.l10n.t('Rank {0} of {1} is attached already: see the Call Stack.', s.rank.rank, job.id));
            } else if (s.action === 'pending') {
                this.host.log.info(`attach: rank ${s.rank.rank} of ${job.id} is being attached already`);
            }
        }
        return steps.filter((s) => (s.action === 'connect' || s.action === 'ask') && this.inFlight.take(job.id, s.rank.rank)).map((s) => s.rank);
    }

    /**
     * A job this window launched: its parent session starts the child `rank N` (from the
     * supervisor's `listening` event, or from the endpoint here if that comes first; once).
     */
    private async viaParent(job: JobInfo, ranks: RankInfo[], follower: TrackedJob): Promise<void> {
        this.host.log.info(`attach ${job.id} ranks ${formatSpec(ranks.map((r) => r.rank))}: through the job's own session`);
        await this.endpoints(job, ranks, async (ep) => {
            const t0 = Date.now();
            const ok = (await follower.startRank?.({ ...ep, job: job.id })) ?? false;
            this.host.log.info(`rank ${ep.rank} of ${job.id}: ${ok ? 'session started' : 'no session'} (${Date.now() - t0} ms)`);
        });
    }

    /**
     * Endpoints of the ranks: as they listen, or after `rankdebug attach` made them listen.
     * `onReady` (when given) is called for each as soon as it is known.
     */
    private async endpoints(job: JobInfo, ranks: RankInfo[], onReady?: (ep: Endpoint) => Promise<void>): Promise<Endpoint[]> {
        const ready: Endpoint[] = [];
        const todo: RankInfo[] = [];
        const got = async (ep: Endpoint): Promise<void> => {
            ready.push(ep);
            if (onReady) await onReady(ep);
        };
        for (const r of ranks) {
            if (listensNow(r) && r.port !== null) await got({ rank: r.rank, host: r.address ?? '127.0.0.1', port: r.port });
            else todo.push(r);
        }
        if (!todo.length) return ready;
        const python = await this.python();
        await this.host.withProgress(
            this.host.l10n.t('Rank Debugger'),
            async (progress, token) => {
                const abort = new AbortController();
                token.onCancellationRequested(() => abort.abort());
                if (todo.length > 1) {
                    progress.report({ message: this.host.l10n.t('Starting a debugger in ranks {0} of {1}…', formatSpec(todo.map((r) => r.rank)), job.id) });
                    await this.attachTogether(python, job, todo, got, abort.signal);
                    return;
                }
                for (const [i, r] of todo.entries()) {
                    if (token.isCancellationRequested) break;
                    const note = todo.length > 1 ? ` (${i + 1}/${todo.length})` : '';
                    progress.report({ message: this.host.l10n.t('Starting a debugger in rank {0} of {1}…', r.rank, job.id) + note });
                    const t0 = Date.now();
                    try {
                        const run = await this.host.runCli(python, ['attach', job.id, String(r.rank), '--json', ...hostFlags(this.host.settings())], { timeoutMs: 90000, signal: abort.signal });
                        const ep = readAttachLines([run.answer]).listening[0];
                        if (!ep) throw new CliError(this.host.l10n.t('rankdebug attach gave no port'));
                        this.host.log.info(`rank ${r.rank} of ${job.id} listens on ${ep.host}:${ep.port} (${Date.now() - t0} ms)`);
                        await got({ rank: r.rank, host: ep.host, port: ep.port });
                    } catch (e) {
                        if (token.isCancellationRequested) break;
                        const message = e instanceof Error ? e.message : String(e);
                        this.host.log.warn(`attach rank ${r.rank} of ${job.id}: ${message}`);
                        this.host.showError(this.host.l10n.t('Cannot attach to rank {0} of {1}: {2}', r.rank, job.id, message));
                    }
                }
            },
        );
        return ready.sort((a, b) => a.rank - b.rank);
    }

    /**
     * One `rankdebug attach JOB SPEC`: it attaches the ranks side by side (jobs/attach_many.py),
     * a `listening` or `failed` line each; a rank that failed is said, the others go on.
     */
    private async attachTogether(python: string, job: JobInfo, todo: RankInfo[], got: (ep: Endpoint) => Promise<void>, signal: AbortSignal): Promise<void> {
        const spec = formatSpec(todo.map((r) => r.rank));
        const t0 = Date.now();
        try {
            const run = await this.host.runCli(python, ['attach', job.id, spec, '--json', ...hostFlags(this.host.settings())], { timeoutMs: 90000 + 10000 * todo.length, signal });
            const answer = readAttachLines(run.lines);
            const ranks: number[] = [];
            for (const ep of answer.listening) {
                ranks.push(ep.rank);
                await got(ep);
            }
            for (const f of answer.failed) {
                const which = f.rank === null ? spec : String(f.rank);
                this.host.log.warn(`attach rank ${which} of ${job.id}: ${f.message}`);
                this.host.showError(this.host.l10n.t('Cannot attach to rank {0} of {1}: {2}', which, job.id, f.message));
            }
            this.host.log.info(`ranks ${formatSpec(ranks)} of ${job.id} listen (${Date.now() - t0} ms, side by side)`);
        } catch (e) {
            if (signal.aborted) return;
            const message = e instanceof Error ? e.message : String(e);
            this.host.log.warn(`attach ranks ${spec} of ${job.id}: ${message}`);
            this.host.showError(this.host.l10n.t('Cannot attach to rank {0} of {1}: {2}', spec, job.id, message));
        }
    }

    /**
     * A parent session over the ranks (debug/configuration.ts `__attach`) with one child session
     * `rank N` per rank straight to its debugpy: the Call Stack groups them under the job,
     * and this window's state (paused/attached) follows them. Ending it detaches; the job runs on.
     */
    private async start(job: JobInfo, endpoints: Endpoint[]): Promise<void> {
        const folder = this.host.folder();
        const spec = formatSpec(endpoints.map((e) => e.rank));
        const config: RankdebugConfiguration = {
            type: TYPE,
            request: 'attach',
            name: `${jobLabel(job)} · ${endpoints.length === 1 ? 'rank' : 'ranks'} ${spec}`,
            justMyCode: this.host.settings(folder?.uri).justMyCode,
            __attach: { job: job.id, dir: controlDir(job) ?? undefined, ranks: endpoints, worldSize: job.worldSize, title: jobLabel(job) },
        };
        const t0 = Date.now();
        const ok = await this.host.startDebugging(folder, config);
        this.host.log.info(`attach ${job.id} ranks ${spec}: ${ok ? 'started' : 'failed'} (${Date.now() - t0} ms)`);
    }

    dispose(): void {
        // nothing held
    }
}
