import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { GroupStore } from '../../../../extension/src/core/groupStore';
import type { JobInfo } from '../../../../extension/src/core/jobList';
import { GroupTargets } from '../../../../extension/src/groups/groupTargets';
import type { JobNode } from '../../../../extension/src/jobs/jobsView';
import { job, rank } from '../jobs/fakes';
import { FakeGroupsHost, FakeJobState, tracked } from './fakes';

function targets(found: JobInfo[] = []): { host: FakeGroupsHost; state: FakeJobState; t: GroupTargets; asked: string[]; selection: JobNode[] } {
    const host = new FakeGroupsHost();
    const state = new FakeJobState();
    const asked: string[] = [];
    const selection: JobNode[] = [];
    const jobs = {
        pickJob: (title: string, filter?: (j: JobInfo) => boolean) => {
            asked.push(title);
            return Promise.resolve(found.find((j) => !filter || filter(j)));
        },
        selection,
        fresh: () => Promise.resolve(found),
    };
    return { host, state, t: new GroupTargets(host, state.asState, jobs, new GroupStore()), asked, selection };
}

const J = job([rank(0), rank(1), rank(2), rank(3)]);
const rankNode = (r: number, j: JobInfo = J): JobNode => ({ kind: 'rank', job: j, rank: j.ranks[r] });
const jobNode = (j: JobInfo = J): JobNode => ({ kind: 'job', job: j });

describe('groups/groupTargets', () => {
    it("acts on a Training Jobs row's job through its folder, and says why a job found running takes no command", async () => {
        const { host, t } = targets();
        assert.deepEqual(await t.job([rankNode(1)]), { id: 'J1', dir: '/run/rankdebug/J1', title: 'torchrun · J1', tracked: undefined });
        const scanned = job([rank(0)], { id: 'P7', source: 'scan', dir: null });
        assert.equal(await t.job([jobNode(scanned)]), undefined);
        assert.deepEqual(host.warnings, ['Job P7 takes no group commands: it was not started by rankdebug launch, or its folder is not known yet.']);
    });

    it("takes the Call Stack item's session, else the focused one, else the only job this window debugs", async () => {
        const { host, state, t } = targets();
        const a = tracked('A', '/run/a');
        const b = tracked('B', '/run/b');
        state.jobs = [a, b];
        assert.equal((await t.job([{ sessionId: 'parent-B', threadId: 1 }]))?.id, 'B');
        host.active = { id: 'rank-1', parentSession: { id: 'parent-A' } } as unknown as vscode.DebugSession;
        assert.equal((await t.job([]))?.id, 'A', 'a rank session not registered yet: through its parent');
        host.active = undefined;
        state.jobs = [b, tracked('C', undefined as unknown as string)];
        assert.equal((await t.job([]))?.id, 'B', 'the only one with a control socket');
    });

    it('asks which job when this window debugs several, and among those running when it debugs none', async () => {
        const { host, state, t, asked } = targets([job([rank(0)], { id: 'R9' })]);
        state.jobs = [tracked('A', '/run/a'), tracked('B', '/run/b')];
        host.choose = (labels) => labels[1];
        assert.equal((await t.job([]))?.id, 'B');
        assert.deepEqual(host.quickPicks, [{ title: 'Which job?', labels: ['torchrun · A', 'torchrun · B'] }]);
        host.choose = () => undefined;
        assert.equal(await t.job([]), undefined, 'cancelled');
        state.jobs = [];
        assert.equal((await t.job([]))?.id, 'R9');
        assert.deepEqual(asked, ['Which job?']);
    });

    it('finds a job by id among those tracked, then those running', async () => {
        const { host, state, t } = targets([J]);
        state.jobs = [tracked('A', '/run/a')];
        assert.equal((await t.byId('A'))?.dir, '/run/a');
        assert.equal((await t.byId('J1'))?.dir, '/run/rankdebug/J1');
        assert.equal(await t.byId('gone'), undefined);
        assert.equal(host.warnings.length, 1);
    });

    it('acts on the rank rows selected, a job row meaning every chosen rank, else the active group', async () => {
        const { t } = targets();
        const cj = await t.job([jobNode()]);
        assert.ok(cj);
        const r1 = rankNode(1);
        const r3 = rankNode(3);
        assert.deepEqual(t.ranks(cj, [r3, [r1, r3]]), { ranks: [1, 3], label: 'ranks 1,3' });
        assert.deepEqual(t.ranks(cj, [r1, [r3]]), { ranks: [1], label: 'ranks 1' }, 'the clicked row when it is outside the selection');
        const jn = jobNode();
        assert.deepEqual(t.ranks(cj, [jn, [jn, r1]]), { ranks: undefined, label: 'all chosen ranks' });
        assert.deepEqual(t.ranks(cj, []), { ranks: undefined, label: 'all chosen ranks' });
        t.groups.set('J1', 'stragglers', [5, 2]);
        assert.deepEqual(t.ranks(cj, []), { ranks: [2, 5], label: 'group stragglers (ranks 2,5)' });
        assert.deepEqual(t.ranks(cj, [rankNode(0)]), { ranks: [0], label: 'ranks 0' }, 'rows win over the group');
    });

    it("reads the selected rank rows of the job from the command's rows, else from Training Jobs", async () => {
        const { t, selection } = targets();
        const cj = await t.job([jobNode()]);
        assert.ok(cj);
        const other = job([rank(0)], { id: 'J2' });
        selection.push(rankNode(2), rankNode(0), rankNode(0, other));
        assert.deepEqual(t.selected(cj), [0, 2]);
        assert.deepEqual(t.selected(cj, [rankNode(3)]), [3]);
    });
});
