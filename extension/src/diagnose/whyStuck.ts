/**
 * Rank Debugger: Why Is This Job Stuck? — on a job row of Training Jobs, in the palette (which
 * running job?) and from the hang notification (hangNotices.ts). Runs `rankdebug diagnose JOB
 * --json` (a progress notification; an error envelope is an error message and no panel) and
 * shows one webview panel per job (reused): the findings, the class tree, the collectives
 * table, the ranks read. The model is core/diagnose.ts, the HTML core/diagnoseHtml.ts. The
 * page's buttons: *Debug culprit* (rankAttach.ts on that rank), *Debug one per class* (one
 * rank per class, its session labelled `rank 3 · 252 like it`, up to `rankdebug.maxSessions`:
 * classSessions.ts, shared with Show Stacks), *Compare across classes*
 * (an expression evaluated now in each class's rank, comparePanel.ts).
 * The panels: whyStuckPage.ts, with the VS Code host (vscodeHost.ts).
 */
import { ClassSessions } from './classSessions';
import { WhyStuckPages, type WhyStuckDeps } from './whyStuckPage';
import { whyStuckHost } from './vscodeHost';

export { DEBUG_RANK_COMMAND, type WhyStuckDeps } from './whyStuckPage';
export { noticeHost } from './vscodeHost';

export class WhyStuck extends WhyStuckPages {
    constructor(deps: WhyStuckDeps) {
        super(whyStuckHost, deps, new ClassSessions(deps));
    }
}
