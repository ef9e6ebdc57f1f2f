import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { GroupStore } from '../../../../extension/src/core/groupStore';
import type { LaunchEvent } from '../../../../extension/src/core/events';
import { LiveRanks } from '../../../../extension/src/core/liveRanks';
import { GroupCommands } from '../../../../extension/src/groups/groupCommands';
import { GroupTargets } from '../../../../extension/src/groups/groupTargets';
import type { JobNode } from '../../../../extension/src/jobs/jobsView';
import type { TrackedJob } from '../../../../extension/src/jobs/jobState';
import { job, rank } from '../jobs/fakes';
import { fakeChecks, ranksReply, tick } from '../launch/fakes';
import { FakeGroupsHost, FakeJobState, FakeSupervisor, fileUri, tracked } from './fakes';

interface World {
    host: FakeGroupsHost;
    state: FakeJobState;
    groups: GroupCommands;
    sup: FakeSupervisor;
    t: TrackedJob;
    selection: JobNode[];
}

let open: World | undefined;

/** A job this window debugs (J1, ranks 0-3), its supervisor answering with the ranks asked (else 0-3). */
async function world(answer?: (cmd: Record<string, unknown>) => { ranks: number[] } | { error: string }): Promise<World> {
    const sup = await new FakeSupervisor(answer ?? ((cmd) => ({ ranks: Array.isArray(cmd.ranks) ? (cmd.ranks as number[]) : [0, 1, 2, 3] }))).listen();
    const host = new FakeGroupsHost();
    const state = new FakeJobState();
    const t = tracked('J1', sup.dir, { ranks: new Map([0, 1, 2, 3].map((r) => [r, { rank: r }])) } as Partial<TrackedJob>);
    state.jobs = [t];
    const selection: JobNode[] = [];
    const jobs = { pickJob: () => Promise.resolve(undefined), selection, fresh: () => Promise.resolve([]) };
    const targets = new GroupTargets(host, state.asState, jobs, new GroupStore());
    const { execute } = fakeChecks({ '0-1': ranksReply([0, 1]), 'local0': { rankSpec: 'local0', ranks: null, arm: false }, '9': { error: { message: '--ranks: rank 9 is outside the job' } } });
    open = { host, state, groups: new GroupCommands(host, state.asState, targets, execute), sup, t, selection };
    return open;
}

const event = (e: Record<string, unknown>): LaunchEvent => e as unknown as LaunchEvent;
const rankRow = (r: number): JobNode => ({ kind: 'rank', job: job([rank(0), rank(1), rank(2), rank(3)]), rank: rank(r) });

describe('groups/groupCommands', () => {
    afterEach(async () => {
        open?.groups.dispose();
        await open?.sup.close();
        open = undefined;
    });

    it("sets the menus' context keys from the jobs this window debugs and the focused session", async () => {
        const { host, state, t } = await world();
        assert.equal(host.contexts.get('rankdebug.jobRunning'), true);
        assert.equal(host.contexts.get('rankdebug.parentFocused'), false);
        assert.equal(host.contexts.get('rankdebug.stopMode'), 'together', 'the setting, with no job focused');
        host.active = t.parent;
        t.stopMode = 'alone';
        host.activeChanged.fire(t.parent);
        assert.equal(host.contexts.get('rankdebug.parentFocused'), true);
        assert.equal(host.contexts.get('rankdebug.stopMode'), 'alone');
        const calls = host.contextCalls.length;
        state.changed.fire();
        assert.equal(host.contextCalls.length, calls, 'a key is set again only when it changes');
    });

    it('sends Continue for the rows it was run on and says it in the status bar', async () => {
        const { host, sup } = await world();
        await open?.groups.run('continue', [rankRow(1), [rankRow(1)]]);
        assert.deepEqual(sup.received, [{ command: 'continue', ranks: [1] }]);
        assert.deepEqual(host.status, ['$(debug-alt) rank 1 continued']);
    });

    it('follows a step as the ranks stop, and notifies when a rank waits in a collective', async () => {
        const { host, state, sup, t, groups } = await world();
        await groups.run('over', []);
        assert.deepEqual(sup.received, [{ command: 'step', kind: 'over' }]);
        assert.equal(host.status.at(-1), '$(debug-alt) 0 of 4 stopped: ranks 0-3 still running');
        state.rankEvents.fire({ job: t, event: event({ event: 'stopped', rank: 0, reason: 'step', file: '/w/t.py', line: 3, function: 'f' }) });
        state.rankEvents.fire({ job: t, event: event({ event: 'blocked', rank: 2, in: 'all_reduce' }) });
        assert.equal(host.status.at(-1), '$(debug-alt) 1 of 4 stopped: rank 0 stepped over; rank 2 waiting in all_reduce; ranks 1,3 still running');
        assert.deepEqual(host.warnings, []);
        await tick(450);
        assert.deepEqual(host.warnings, ['1 of 4 stopped: rank 0 stepped over; rank 2 waiting in all_reduce; ranks 1,3 still running']);
        state.rankEvents.fire({ job: t, event: event({ event: 'arrived', command: 'step', ranks: [0, 1, 2, 3] }) });
        assert.deepEqual(host.infos, ['ranks 0-3 stepped over'], 'once a notification said a rank waits, the arrival is one too');
    });

    it('counts the events that come before the reply: a one-line step can arrive first', async () => {
        // Events and replies come on different channels: here the supervisor's events for the
        // step (rank 0 stopped, the group arrived) reach the window before its reply does.
        const box: { w?: World } = {};
        const w = await world(() => {
            const fire = (e: Record<string, unknown>) => box.w?.state.rankEvents.fire({ job: box.w.t, event: event(e) });
            fire({ event: 'blocked', rank: 1, in: 'all_reduce' });
            fire({ event: 'stopped', rank: 0, reason: 'step', file: '/w/t.py', line: 25, function: 'f' });
            fire({ event: 'arrived', command: 'step', ranks: [0] });
            return { ranks: [0] };
        });
        box.w = w;
        w.t.live = new LiveRanks();
        w.t.live.apply(event({ event: 'stopped', rank: 1, reason: 'pause', file: null, line: null, function: null, waiting: 'all_reduce' }));
        await w.groups.run('over', []);
        assert.equal(w.host.status.at(-1), '$(debug-alt) 1 of 2 stopped: rank 0 stepped over; rank 1 waiting in all_reduce');
        assert.deepEqual(w.host.warnings, [], 'the step is over: nothing left to wait for');
    });

    it('says which ranks of a step could not move: they wait in a collective', async () => {
        const { host, t, groups } = await world(() => ({ ranks: [0, 1] }));
        t.live = new LiveRanks();
        t.live.apply(event({ event: 'stopped', rank: 3, reason: 'pause', file: null, line: null, function: null, waiting: 'barrier' }));
        await groups.run('in', []);
        assert.equal(host.status.at(-1), '$(debug-alt) 0 of 3 stopped: rank 3 waiting in barrier; ranks 0,1 still running');
    });

    it("shows the supervisor's refusal, and says only `sent` for a job whose events this window does not follow", async () => {
        const { host, groups } = await world(() => ({ error: 'no chosen rank is paused' }));
        await groups.run('over', []);
        assert.deepEqual(host.errors, ['Rank Debugger: no chosen rank is paused']);
        assert.deepEqual(host.status, []);
        await open?.sup.close();
        const sup = await new FakeSupervisor(() => ({ ranks: [1] })).listen();
        open = { ...(open as World), sup };
        const row = rankRow(1);
        row.job.dir = sup.dir;
        row.job.id = 'other';
        await groups.run('over', [row]);
        assert.equal(host.status.at(-1), '$(debug-alt) rank 1: sent');
    });

    it("runs the chosen ranks to the cursor's line, and asks for a cursor first", async () => {
        const { host, sup, groups } = await world();
        await groups.runToCursor([]);
        assert.deepEqual(host.infos, ['Put the cursor on a line of a Python file first.']);
        host.cursorAt = { uri: fileUri('/w/train.py'), line: 29 };
        await groups.runToCursor([]);
        assert.deepEqual(sup.received, [{ command: 'run-to', file: '/w/train.py', line: 30 }]);
        assert.equal(host.status.at(-1), '$(debug-alt) 0 of 4 stopped: ranks 0-3 still running');
    });

    it('sets the stop mode, on the job and in the context key', async () => {
        const { host, sup, t, groups } = await world();
        await groups.setStopMode('alone', []);
        assert.deepEqual(sup.received, [{ command: 'stop-mode', mode: 'alone' }]);
        assert.equal(t.stopMode, 'alone');
        assert.equal(host.status.at(-1), '$(debug-alt) Ranks stop alone: when one chosen rank stops, the others run on.');
    });

    it('makes a named group of the ranks selected in Training Jobs', async () => {
        const { host, selection, groups, state } = await world();
        await groups.makeGroup([]);
        assert.deepEqual(host.infos, ['Select ranks in Training Jobs first (Ctrl or Shift + click), then Make Group.']);
        selection.push(rankRow(3), rankRow(1));
        host.inputs = ['stragglers'];
        await groups.makeGroup([]);
        assert.equal(host.inputBoxes[0].value, '1,3');
        assert.equal(host.status.at(-1), '$(debug-alt) Group commands act on group stragglers (ranks 1,3)');
        await groups.run('pause', []);
        assert.deepEqual(open?.sup.received.at(-1), { command: 'pause', ranks: [1, 3] });
        assert.equal(state.jobs.length, 1);
    });

    it('chooses the ranks for group commands: every chosen rank, a group, or ranks typed and read by the server', async () => {
        const { host, groups } = await world();
        host.choose = () => 'Type ranks…';
        host.inputs = ['0-1'];
        await groups.chooseGroup([]);
        assert.deepEqual(host.quickPicks[0], { title: 'Group commands of torchrun · J1 act on…', labels: ['All chosen ranks', 'Type ranks…'] });
        assert.equal(host.status.at(-1), '$(debug-alt) Group commands act on group 0,1 (ranks 0,1)');
        host.inputs = ['9'];
        await groups.chooseGroup([]);
        assert.deepEqual(host.errors, ['Rank Debugger: --ranks: rank 9 is outside the job']);
        host.inputs = ['local0'];
        await groups.chooseGroup([]);
        assert.match(host.errors[1], /which ranks "local0" names in job J1 is not known here/);
        host.choose = () => 'All chosen ranks';
        await groups.chooseGroup([]);
        assert.deepEqual(host.quickPicks.at(-1)?.labels, ['All chosen ranks', '0,1', 'Type ranks…']);
        assert.equal(host.status.at(-1), '$(debug-alt) Group commands act on all chosen ranks');
    });

    it('offers the rank of the Call Stack item it was run on', async () => {
        const { host, t, groups } = await world();
        t.ranks.set(2, { rank: 2, session: { id: 'rank-2' } as vscode.DebugSession } as never);
        host.choose = (labels) => labels.find((l) => l.startsWith('Rank of'));
        await groups.chooseGroup([{ sessionId: 'rank-2' }]);
        assert.deepEqual(host.quickPicks[0].labels, ['All chosen ranks', 'Rank of the Call Stack selection', 'Type ranks…']);
        assert.equal(host.status.at(-1), '$(debug-alt) Group commands act on group 2 (ranks 2)');
    });
});
