import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { RankTrackerFactory } from '../../../../extension/src/debug/tracker';
import type { TrackedRank } from '../../../../extension/src/jobs/jobState';
import { fakeSession } from './fakes';

function setup(): { states: (TrackedRank['state'] | undefined)[]; tracker: vscode.DebugAdapterTracker; rank: vscode.DebugSession } {
    const states: (TrackedRank['state'] | undefined)[] = [];
    const rank = fakeSession({ type: 'rankdebug', request: 'attach', name: 'rank 2', __rank: { rank: 2 } });
    const factory = new RankTrackerFactory({ setRankState: (s, state) => (s === rank ? states.push(state) : undefined) });
    const tracker = factory.createDebugAdapterTracker(rank);
    assert.ok(tracker);
    return { states, tracker, rank };
}

describe('debug/tracker', () => {
    it('tracks rank sessions only', () => {
        const factory = new RankTrackerFactory({ setRankState: () => assert.fail('no state for a parent') });
        assert.equal(factory.createDebugAdapterTracker(fakeSession({ type: 'rankdebug', request: 'launch', name: 'job' })), undefined);
    });

    it("reads a rank's stopped and continued events as paused and attached", () => {
        const { states, tracker } = setup();
        tracker.onDidSendMessage?.({ type: 'event', event: 'stopped', body: { reason: 'breakpoint' } });
        tracker.onDidSendMessage?.({ type: 'event', event: 'output', body: {} });
        tracker.onDidSendMessage?.({ type: 'response', command: 'stopped' });
        tracker.onDidSendMessage?.({ type: 'event', event: 'continued', body: { allThreadsContinued: true } });
        assert.deepEqual(states, ['paused', 'attached']);
    });

    it('marks a paused rank attached as soon as the user resumes or steps it', () => {
        const { states, tracker } = setup();
        for (const command of ['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue']) {
            tracker.onWillReceiveMessage?.({ type: 'request', command });
        }
        tracker.onWillReceiveMessage?.({ type: 'request', command: 'evaluate' });
        tracker.onWillReceiveMessage?.({ type: 'request', command: 'stackTrace' });
        assert.deepEqual(states, ['attached', 'attached', 'attached', 'attached', 'attached', 'attached']);
    });

    it("clears the rank's state when its adapter exits", () => {
        const { states, tracker } = setup();
        tracker.onExit?.(0, undefined);
        assert.deepEqual(states, [undefined]);
    });
});
