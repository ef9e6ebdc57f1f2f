/**
 * Debug one rank per class (Show Stacks, Why Is This Job Stuck?): which representatives get a
 * session under `rankdebug.maxSessions`, and the label a session stands for its class with
 * (`rank 3 · 252 like it`). A representative with a session of this window already counts
 * toward the cap and is not opened again. No `vscode` import.
 */
import type { Localize } from './localize';

export interface ClassPick {
    rank: number;
    others: number;
}

export interface CappedClasses<T extends ClassPick> {
    /** To open now, in the order given. */
    open: T[];
    /** With a session already. */
    shown: T[];
    /** Past the cap: not opened. */
    left: T[];
}

/** The classes to open (in `reps`' order) while this window's sessions on the job (`sessions`) and the new ones fit `cap`. */
export function capClasses<T extends ClassPick>(reps: readonly T[], cap: number, sessions: ReadonlySet<number>): CappedClasses<T> {
    const shown = reps.filter((r) => sessions.has(r.rank));
    const todo = reps.filter((r) => !sessions.has(r.rank));
    const room = Math.max(0, Math.floor(cap) - sessions.size);
    return { open: todo.slice(0, room), shown, left: todo.slice(room) };
}

/** `rank 3 · 252 like it`; `rank 3` for a class of one. */
export function classLabel(rep: ClassPick, l10n: Localize): string {
    return rep.others > 0 ? l10n.t('rank {0} · {1} like it', rep.rank, rep.others) : l10n.t('rank {0}', rep.rank);
}
