/**
 * `rankdebug.maxSessions`: which chosen ranks get a VS Code session, and which session a
 * promotion ends. VS Code's Call Stack freezes with a few hundred threads (vscode#44248), so a
 * job's parent opens at most `cap` rank sessions; the other chosen ranks are debugged over a
 * link of their own (rankLink.ts). Pure logic, no `vscode` import.
 */

/** A rank session as the cap weighs it. */
export interface CapSession {
    rank: number;
    /** Stopped (at a breakpoint, paused with the group): never ended to make room. */
    stopped: boolean;
    /** The session the user looks at now. */
    focused: boolean;
    /** When it was last started, focused or stopped (ms). */
    used: number;
}

export class SessionCap {
    /** The lowest `cap` chosen ranks: theirs are the first sessions, whenever they listen. */
    private readonly reserved: Set<number>;

    constructor(
        readonly cap: number,
        chosen: readonly number[] | null | undefined,
    ) {
        this.reserved = new Set([...(chosen ?? [])].sort((a, b) => a - b).slice(0, cap));
    }

    /**
     * Whether a rank that has just come up gets a session: while there is room, kept for the
     * lowest chosen ranks that have not come up yet (`seen`: ranks with a session or a link).
     */
    wantsSession(rank: number, sessions: number, seen: ReadonlySet<number>): boolean {
        if (sessions >= this.cap) return false;
        if (this.reserved.has(rank)) return true;
        const waiting = [...this.reserved].filter((r) => !seen.has(r) && r !== rank).length;
        return sessions + waiting < this.cap;
    }

    /**
     * The sessions to end so that `sessions` (plus `adding` more) fit the cap: the least
     * recently used idle ones (running, not focused). Fewer than needed when too few are idle.
     */
    toEnd(sessions: readonly CapSession[], adding = 0): number[] {
        const over = sessions.length + adding - this.cap;
        if (over <= 0) return [];
        return sessions
            .filter((s) => !s.stopped && !s.focused)
            .sort((a, b) => a.used - b.used || b.rank - a.rank)
            .slice(0, over)
            .map((s) => s.rank);
    }
}
