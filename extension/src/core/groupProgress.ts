/**
 * How a group command went, from the supervisor's reply (the ranks it acted on) and the events
 * that follow it: for a step or run-to, which ranks stopped, which wait in a collective
 * (`blocked`), and when all have arrived. Worded for the status bar or a notification:
 * `2 of 4 stopped: ranks 0,1 stepped over; rank 2 waiting in all_reduce; rank 3 still running`.
 * A rank of the command that the supervisor could not move at all (shown paused while it waits
 * in a collective: it cannot step before that returns) is not in the reply; it is `held` and
 * said the same way. The count leads while the command is under way, and when it ended with
 * ranks held: how many of the ranks asked (those moved and those held) have stopped again.
 * No `vscode` import.
 */
import type { LaunchEvent } from './events';
import type { Localize } from './localize';
import { rangeLabel } from './rankTree';

export type GroupVerb = 'continue' | 'pause' | 'over' | 'in' | 'out' | 'run-to';

/** `rank 2`, `ranks 0-3`. */
export function who(ranks: Iterable<number>): string {
    return rangeLabel([...ranks]);
}

export class GroupProgress {
    readonly arrived = new Set<number>();
    /** Ranks waiting in a collective, and which. */
    readonly blocked = new Map<number, string>();
    done: boolean;

    constructor(
        readonly verb: GroupVerb,
        readonly ranks: readonly number[],
        /** `train.py:30` for run-to. */
        readonly target = '',
        /** Ranks of the command left out of the reply because they wait in a collective, and which. */
        readonly held: ReadonlyMap<number, string> = new Map(),
    ) {
        this.done = !this.waits || ranks.length === 0;
    }

    /** Whether the command is over only when every rank has stopped again (step, run-to). */
    get waits(): boolean {
        return this.verb !== 'continue' && this.verb !== 'pause';
    }

    /** Takes an event of the job; true when what to report changed. */
    apply(ev: LaunchEvent): boolean {
        if (this.done) return false;
        switch (ev.event) {
            case 'stopped':
                if (!this.ranks.includes(ev.rank) || this.arrived.has(ev.rank)) return false;
                this.arrived.add(ev.rank);
                this.blocked.delete(ev.rank);
                return true;
            case 'blocked':
                if (!this.ranks.includes(ev.rank) || this.arrived.has(ev.rank)) return false;
                this.blocked.set(ev.rank, ev.in);
                return true;
            case 'arrived':
                if (!ev.ranks.some((r) => this.ranks.includes(r))) return false;
                for (const r of this.ranks) this.arrived.add(r);
                this.blocked.clear();
                this.done = true;
                return true;
            default:
                return false;
        }
    }

    private verbText(ranks: Iterable<number>, l10n: Localize): string {
        const w = who(ranks);
        switch (this.verb) {
            case 'continue':
                return l10n.t('{0} continued', w);
            case 'pause':
                return l10n.t('{0} paused', w);
            case 'over':
                return l10n.t('{0} stepped over', w);
            case 'in':
                return l10n.t('{0} stepped in', w);
            case 'out':
                return l10n.t('{0} stepped out', w);
            case 'run-to':
                return l10n.t('{0} at {1}', w, this.target);
        }
    }

    /** How many ranks the command named: those it moved and those held in a collective. */
    get asked(): number {
        return this.ranks.length + [...this.held.keys()].filter((r) => !this.ranks.includes(r)).length;
    }

    /** What to say now. */
    text(l10n: Localize): string {
        if (!this.ranks.length) return l10n.t('no chosen rank to act on');
        const told = this.parts(l10n);
        // Under way, or over with ranks that could not move: how many of those asked stopped.
        if (this.waits && (!this.done || this.held.size)) return l10n.t('{0} of {1} stopped: {2}', this.arrived.size, this.asked, told);
        return told;
    }

    private parts(l10n: Localize): string {
        const parts: string[] = [];
        if (this.done) parts.push(this.verbText(this.ranks, l10n));
        else if (this.arrived.size) parts.push(this.verbText([...this.arrived].sort((a, b) => a - b), l10n));
        const waiting = this.done ? [...this.held] : [...this.blocked, ...this.held];
        const byCollective = new Map<string, number[]>();
        for (const [rank, where] of waiting.sort((a, b) => a[0] - b[0])) byCollective.set(where, [...(byCollective.get(where) ?? []), rank]);
        for (const [where, ranks] of byCollective) parts.push(l10n.t('{0} waiting in {1}', who(ranks), where || '?'));
        const pending = this.done ? [] : this.ranks.filter((r) => !this.arrived.has(r) && !this.blocked.has(r));
        if (pending.length) parts.push(l10n.t('{0} still running', who(pending)));
        return parts.join('; ');
    }
}
