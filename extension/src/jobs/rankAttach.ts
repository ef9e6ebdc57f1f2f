/** Attach to any rank from the Training Jobs view (attachRanks.ts), with the VS Code host (vscodeHost.ts). */
import type { JobInfo } from '../core/jobList';
import type { Execute } from '../core/rankCheck';
import { RankAttacher } from './attachRanks';
import type { JobState } from './jobState';
import { attachHost } from './vscodeHost';

export class RankAttach extends RankAttacher {
    constructor(python: () => Promise<string>, jobs: { pickJob(title: string): Promise<JobInfo | undefined>; refresh(): Promise<void> }, state: JobState, execute?: Execute) {
        super(attachHost, python, jobs, state, execute);
    }
}
