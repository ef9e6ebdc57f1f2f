/**
 * Named rank groups per job (`stragglers` = ranks 2,5), made from a selection in Training Jobs
 * or typed, and the group the job's group commands act on (none: every chosen rank). Kept for
 * the window's life: jobs are short-lived and their ids never come back. No `vscode` import.
 */

export interface RankGroup {
    name: string;
    ranks: number[];
}

interface JobGroups {
    groups: Map<string, number[]>;
    active?: string;
}

export class GroupStore {
    private readonly jobs = new Map<string, JobGroups>();

    private of(job: string): JobGroups {
        let g = this.jobs.get(job);
        if (!g) {
            g = { groups: new Map() };
            this.jobs.set(job, g);
        }
        return g;
    }

    /** Stores (or replaces) a group of the job; it becomes the one group commands use. */
    set(job: string, name: string, ranks: readonly number[]): RankGroup {
        const sorted = [...new Set(ranks)].sort((a, b) => a - b);
        const g = this.of(job);
        g.groups.set(name, sorted);
        g.active = name;
        return { name, ranks: sorted };
    }

    list(job: string): RankGroup[] {
        return [...(this.jobs.get(job)?.groups ?? [])].map(([name, ranks]) => ({ name, ranks }));
    }

    /** The group the job's group commands act on; undefined: every chosen rank. */
    active(job: string): RankGroup | undefined {
        const g = this.jobs.get(job);
        const ranks = g?.active !== undefined ? g.groups.get(g.active) : undefined;
        return g?.active !== undefined && ranks ? { name: g.active, ranks } : undefined;
    }

    /** Makes a stored group (or, with undefined, every chosen rank) the one group commands use. */
    use(job: string, name: string | undefined): void {
        const g = this.of(job);
        g.active = name !== undefined && g.groups.has(name) ? name : undefined;
    }

    /** Forgets a job's groups (it ended). */
    forget(job: string): void {
        this.jobs.delete(job);
    }
}
