/** Which job and which ranks a group command acts on (groupTargets.ts), with the VS Code host (vscodeHost.ts). */
import type { GroupStore } from '../core/groupStore';
import type { JobState } from '../jobs/jobState';
import type { JobsView } from '../jobs/jobsView';
import { GroupTargets } from './groupTargets';
import { groupsHost } from './vscodeHost';

export { socketOf, type ControlJob, type RankPick } from './groupTargets';

export class RankTargets extends GroupTargets {
    constructor(state: JobState, jobs: Pick<JobsView, 'pickJob' | 'selection' | 'fresh'>, groups: GroupStore) {
        super(groupsHost, state, jobs, groups);
    }
}
