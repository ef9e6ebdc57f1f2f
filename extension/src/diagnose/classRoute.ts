/**
 * The route of the sessions that stand for classes of ranks (classSessions.ts binds it to VS
 * Code): the job read again, the representatives cut to `rankdebug.maxSessions` with this
 * window's sessions on the job counted (core/classSessions.ts), each session labelled with the
 * class it stands for as it starts, then Attach to Ranks; the ranks not live and the classes
 * left past the cap are said. The VS Code calls are the host's (host.ts).
 */
import type * as vscode from 'vscode';
import { capClasses, classLabel, type ClassPick } from '../core/classSessions';
import { jobLabel, type JobInfo, type RankInfo } from '../core/jobList';
import { formatSpec } from '../core/ranks';
import type { RankdebugConfiguration } from '../debug/configuration';
import type { ClassSessionsHost } from './host';

/** What the route uses from the other parts. */
export interface ClassSessionDeps {
    jobs: { fresh(): Promise<readonly JobInfo[]> };
    attach: {
        attachRanks(job: JobInfo, ranks: RankInfo[], told?: boolean): Promise<void>;
        /** Ranks of the job this window has a session on, or is starting one for. */
        sessionsOf(job: string): ReadonlySet<number>;
    };
}

/**
 * The labels of the sessions it starts: set on each session as it starts (a session's name can
 * change while it runs), once.
 */
class SessionLabels implements vscode.Disposable {
    private readonly pending = new Map<string, string>();
    private readonly listener: vscode.Disposable;

    constructor(host: ClassSessionsHost) {
        this.listener = host.onDidStartDebugSession((s) => {
            const rank = (s.configuration as RankdebugConfiguration).__rank;
            if (!rank) return;
            // A rank's session started from the supervisor's own `listening` line may not name its job.
            const key = rank.job !== undefined ? `${rank.job}/${rank.rank}` : [...this.pending.keys()].find((k) => k.endsWith(`/${rank.rank}`));
            const label = key ? this.pending.get(key) : undefined;
            if (!key || !label) return;
            this.pending.delete(key);
            s.name = label;
        });
    }

    set(job: string, rank: number, label: string): void {
        this.pending.set(`${job}/${rank}`, label);
    }

    dispose(): void {
        this.listener.dispose();
    }
}

export class ClassRoute implements vscode.Disposable {
    private readonly labels: SessionLabels;

    constructor(
        private readonly host: ClassSessionsHost,
        private readonly deps: ClassSessionDeps,
    ) {
        this.labels = new SessionLabels(host);
    }

    /**
     * Sessions on these representatives of `jobId`'s classes (in order: the first ones open
     * when the cap leaves room for fewer). `what` names them in the log.
     */
    async open(jobId: string, reps: readonly ClassPick[], what: string): Promise<void> {
        const { host } = this;
        const job = (await this.deps.jobs.fresh()).find((j) => j.id === jobId);
        if (!job) {
            host.showInfo(host.l10n.t('Job {0} is not running any more.', jobId));
            return;
        }
        const live = reps.filter((r) => job.ranks.some((i) => i.rank === r.rank && i.pid !== null && i.state !== 'exited'));
        const missing = reps.filter((r) => !live.includes(r)).map((r) => r.rank);
        if (missing.length) host.showWarning(host.l10n.t('{0} has no live rank {1} to attach to.', jobLabel(job), formatSpec(missing)));
        const cap = host.settings().maxSessions;
        const { open, shown, left } = capClasses(live, cap, this.deps.attach.sessionsOf(job.id));
        host.log.info(
            `${what} of ${job.id}: ${reps.length} classes, open ${formatSpec(open.map((r) => r.rank)) || 'none'}` +
                `${shown.length ? `, shown already ${formatSpec(shown.map((r) => r.rank))}` : ''}${left.length ? `, ${left.length} past rankdebug.maxSessions (${cap})` : ''}`,
        );
        if (left.length) {
            const ranks = left.reduce((n, r) => n + r.others + 1, 0);
            host.showInfo(
                host.l10n.t(
                    'rankdebug.maxSessions is {0}: {1} classes left without a session ({2} ranks, represented by ranks {3}). Debug this class in Show Stacks opens one.',
                    cap,
                    left.length,
                    ranks,
                    formatSpec(left.map((r) => r.rank)),
                ),
            );
        }
        if (!open.length) {
            if (!left.length && shown.length) host.showInfo(host.l10n.t('Rank {0} of {1} is attached already: see the Call Stack.', formatSpec(shown.map((r) => r.rank)), job.id));
            return;
        }
        for (const r of open) if (r.others > 0) this.labels.set(job.id, r.rank, classLabel(r, host.l10n));
        const infos = open.map((r) => job.ranks.find((i) => i.rank === r.rank)).filter((r): r is RankInfo => r !== undefined);
        await this.deps.attach.attachRanks(job, infos, open.length === 1);
    }

    dispose(): void {
        this.labels.dispose();
    }
}
