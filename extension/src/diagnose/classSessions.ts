/**
 * Sessions that stand for classes of ranks: *Debug one rank per class* and *Debug this class*
 * (Show Stacks), *Debug culprit* and *Debug one per class* (Why Is This Job Stuck?). One route
 * for all: the job read again (its ranks now), the representatives cut to
 * `rankdebug.maxSessions` with this window's sessions on the job counted (core/classSessions.ts),
 * each session labelled with the class it stands for (`rank 3 · 252 like it`), then Attach to
 * Ranks (rankAttach.ts `attachRanks`: through the job's own parent when this window follows it,
 * else `rankdebug attach` for an armed or found rank). The classes left past the cap are said.
 * The route: classRoute.ts, with the VS Code host (vscodeHost.ts).
 */
import { ClassRoute, type ClassSessionDeps } from './classRoute';
import { classSessionsHost } from './vscodeHost';

export type { ClassSessionDeps } from './classRoute';

export class ClassSessions extends ClassRoute {
    constructor(deps: ClassSessionDeps) {
        super(classSessionsHost, deps);
    }
}
