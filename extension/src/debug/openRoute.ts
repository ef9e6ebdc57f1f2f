/**
 * What Open Session does with a rank row (openSession.ts), as a pure decision. A rank the
 * window's parent debugs (a session, or a link past `rankdebug.maxSessions`) goes through that
 * parent, which knows its endpoint: the registry lists no port for a rank whose gate has a
 * client but which never said `attached` (a chosen rank under `--attach hit`), so the row's
 * port cannot be what decides. No `vscode` import.
 */
import type { TrackedJob } from '../jobs/jobState';

export type OpenRoute = 'shown' | 'promote' | 'attach';

export function openRoute(follower: Pick<TrackedJob, 'ranks' | 'startRank'> | undefined, rank: { rank: number; port: number | null }): OpenRoute {
    const tracked = follower?.ranks.get(rank.rank);
    if (tracked?.session) return 'shown';
    if (!follower?.startRank) return 'attach';
    // Linked (tracked with no session), or listening on a port the parent can reach.
    return tracked || (rank.port !== null && rank.port > 0) ? 'promote' : 'attach';
}
