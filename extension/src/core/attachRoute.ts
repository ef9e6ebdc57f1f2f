/**
 * Attach from Training Jobs without ever attaching a rank twice: debugpy's adapter takes one
 * client, so a rank that has (or is getting) a session in this window, or whose attach is
 * under way from an earlier click, is left alone. No `vscode` import: unit-tested as is.
 */
import { listensNow, type RankInfo } from './jobList';

/**
 * What to do for one rank:
 * - `attached`: a session of this window has it or is starting it; nothing to do;
 * - `pending`: an earlier Attach on it is still under way; nothing to do;
 * - `connect`: it listens already; a client connects to its port;
 * - `ask`: `rankdebug attach JOB RANK --json` makes it listen first.
 */
export type AttachAction = 'attached' | 'pending' | 'connect' | 'ask';

export interface AttachStep {
    rank: RankInfo;
    action: AttachAction;
}

export interface AttachFacts {
    /** Ranks a debug session of this window has or is starting (the parents' claims). */
    claimed: ReadonlySet<number>;
    /** Ranks whose attach from an earlier click is still under way. */
    pending: ReadonlySet<number>;
}

/** One step per rank, in rank order. */
export function attachSteps(ranks: readonly RankInfo[], facts: AttachFacts): AttachStep[] {
    return [...ranks]
        .sort((a, b) => a.rank - b.rank)
        .map((rank) => {
            let action: AttachAction;
            if (facts.claimed.has(rank.rank)) action = 'attached';
            else if (facts.pending.has(rank.rank)) action = 'pending';
            else if (listensNow(rank)) action = 'connect';
            else action = 'ask';
            return { rank, action };
        });
}

/** Ranks a job-row Attach offers: live ranks with no session of this window and no attach under way. */
export function offerable(ranks: readonly RankInfo[], facts: AttachFacts, live: (r: RankInfo) => boolean): RankInfo[] {
    return ranks.filter((r) => live(r) && !facts.claimed.has(r.rank) && !facts.pending.has(r.rank));
}

/** Keys (`JOB/RANK`) of attaches under way: a second click on the same rank finds it taken. */
export class InFlight {
    private readonly keys = new Set<string>();

    static key(job: string, rank: number): string {
        return `${job}/${rank}`;
    }

    /** Takes the key; false when it is taken already. */
    take(job: string, rank: number): boolean {
        const key = InFlight.key(job, rank);
        if (this.keys.has(key)) return false;
        this.keys.add(key);
        return true;
    }

    release(job: string, rank: number): void {
        this.keys.delete(InFlight.key(job, rank));
    }

    /** Ranks of `job` under way. */
    ranks(job: string): Set<number> {
        const out = new Set<number>();
        const prefix = `${job}/`;
        for (const k of this.keys) if (k.startsWith(prefix)) out.add(Number(k.slice(prefix.length)));
        return out;
    }
}
