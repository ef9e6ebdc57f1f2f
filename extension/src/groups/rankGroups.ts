/** The group commands (groupCommands.ts), with the VS Code host (vscodeHost.ts). */
import type { Execute } from '../core/rankCheck';
import type { JobState } from '../jobs/jobState';
import { GroupCommands } from './groupCommands';
import type { RankTargets } from './rankTargets';
import { groupsHost } from './vscodeHost';

export class RankGroups extends GroupCommands {
    constructor(state: JobState, targets: RankTargets, execute: Execute) {
        super(groupsHost, state, targets, execute);
    }
}
