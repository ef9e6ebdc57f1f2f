/**
 * Which job and which ranks a group command acts on.
 * The job: the Training Jobs row it was run on, the Call Stack session it was run on (the job's
 * own session or a rank's), the focused debug session, the only job this window debugs, else a
 * pick. The ranks: the rows selected in Training Jobs (rank rows and range rows; a job row means
 * every chosen rank); else the job's group (groupStore.ts, set by Make Group / Choose Ranks);
 * else every chosen rank (the supervisor decides which those are). The VS Code calls are the
 * host's (host.ts); rankTargets.ts gives it the real ones.
 */
import { isRowArg, rowsOf, sessionIdOf } from '../core/commandArgs';
import { controlSocket } from '../core/control';
import type { GroupStore } from '../core/groupStore';
import { controlDir, jobLabel, takesCommands, type JobInfo } from '../core/jobList';
import { formatSpec } from '../core/ranks';
import { ranksOf } from '../core/rankTree';
import type { JobState, TrackedJob } from '../jobs/jobState';
import type { JobNode, JobsView } from '../jobs/jobsView';
import type { GroupsHost } from './host';

/** A job whose supervisor takes commands. */
export interface ControlJob {
    /** The registry id (or, before the `job` event, the session's key). */
    id: string;
    /** The job's folder; its control socket is `ctl.sock` in it. */
    dir: string;
    title: string;
    tracked?: TrackedJob;
}

/** Ranks for a command: undefined means every chosen rank. */
export interface RankPick {
    ranks: number[] | undefined;
    /** `all chosen ranks`, `ranks 1,3`, `group stragglers (ranks 2,5)`. */
    label: string;
}

export function socketOf(job: ControlJob): string {
    return controlSocket(job.dir);
}

export class GroupTargets {
    constructor(
        private readonly host: GroupsHost,
        private readonly state: JobState,
        private readonly jobs: Pick<JobsView, 'pickJob' | 'selection' | 'fresh'>,
        readonly groups: GroupStore,
    ) {}

    private fromTracked(t: TrackedJob): ControlJob | undefined {
        return t.dir ? { id: t.job ?? t.key, dir: t.dir, title: t.title, tracked: t } : undefined;
    }

    private fromInfo(job: JobInfo): ControlJob | undefined {
        const tracked = this.state.byJobId(job.id);
        const dir = tracked?.dir ?? controlDir(job);
        return dir ? { id: job.id, dir, title: jobLabel(job), tracked } : undefined;
    }

    /** Tracked jobs with a control socket. */
    controlled(): TrackedJob[] {
        return this.state.all().filter((t) => t.dir !== undefined);
    }

    /** The tracked job of the focused debug session (a rank's session not registered yet: through its parent), if any. */
    focused(): TrackedJob | undefined {
        const active = this.host.activeSession();
        return active ? this.state.ofSession(active) : undefined;
    }

    /** The job a command was run on (see the module's comment); undefined after telling the user why. */
    async job(args: readonly unknown[]): Promise<ControlJob | undefined> {
        const [first] = args;
        if (isRowArg(first)) return this.orSay(this.fromInfo((first as JobNode).job), (first as JobNode).job.id);
        const sessionId = sessionIdOf(args, (id) => this.state.bySession(id) !== undefined);
        const tracked = (sessionId ? this.state.bySession(sessionId) : undefined) ?? this.focused();
        if (tracked) return this.orSay(this.fromTracked(tracked), tracked.job ?? tracked.title);
        const mine = this.controlled();
        if (mine.length === 1) return this.fromTracked(mine[0]);
        if (mine.length > 1) {
            const picked = await this.host.showQuickPick(
                mine.map((t) => ({ label: t.title, description: t.job ?? '', tracked: t })),
                { title: this.host.l10n.t('Which job?') },
            );
            return picked ? this.fromTracked(picked.tracked) : undefined;
        }
        const info = await this.jobs.pickJob(this.host.l10n.t('Which job?'), takesCommands);
        return info ? this.fromInfo(info) : undefined;
    }

    /** The job with this registry id (tracked by this window, or found running); undefined after telling the user why. */
    async byId(id: string): Promise<ControlJob | undefined> {
        const tracked = this.state.byJobId(id);
        if (tracked) return this.orSay(this.fromTracked(tracked), id);
        const info = (await this.jobs.fresh()).find((j) => j.id === id);
        return this.orSay(info ? this.fromInfo(info) : undefined, id);
    }

    private orSay(job: ControlJob | undefined, name: string): ControlJob | undefined {
        if (!job) this.host.showWarning(this.host.l10n.t('Job {0} takes no group commands: it was not started by rankdebug launch, or its folder is not known yet.', name));
        return job;
    }

    /** The ranks a command acts on in `job` (see the module's comment). */
    ranks(job: ControlJob, args: readonly unknown[]): RankPick {
        const rows = rowsOf<JobNode>(args).filter((n) => n.job.id === job.id);
        if (rows.length && !rows.some((n) => n.kind === 'job')) {
            const ranks = rankRows(rows);
            return { ranks, label: this.host.l10n.t('ranks {0}', formatSpec(ranks)) };
        }
        if (rows.length) return { ranks: undefined, label: this.host.l10n.t('all chosen ranks') };
        const group = this.groups.active(job.id);
        if (group) return { ranks: group.ranks, label: this.host.l10n.t('group {0} (ranks {1})', group.name, formatSpec(group.ranks)) };
        return { ranks: undefined, label: this.host.l10n.t('all chosen ranks') };
    }

    /** The rank rows a view command was run on (its multi-selection), else those selected in Training Jobs, of `job`. */
    selected(job: ControlJob, args: readonly unknown[] = []): number[] {
        const fromArgs = rowsOf<JobNode>(args);
        const rows = (fromArgs.length ? fromArgs : this.jobs.selection).filter((n) => n.job.id === job.id);
        return rankRows(rows);
    }
}

/** The ranks of rank rows and range rows (job rows stand for no rank in particular). */
function rankRows(rows: readonly JobNode[]): number[] {
    const ranks = rows.flatMap((n) => (n.kind === 'rank' ? [n.rank.rank] : n.kind === 'group' ? ranksOf(n.group) : []));
    return [...new Set(ranks)].sort((a, b) => a - b);
}
