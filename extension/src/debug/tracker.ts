/**
 * The rank sessions' tracker: a child session's stopped/continued events and stepping requests
 * set its rank's state (paused / attached) for the jobs view and the status bar.
 */
import type * as vscode from 'vscode';
import type { JobState } from '../jobs/jobState';
import type { RankdebugConfiguration } from './configuration';

/** Requests that let a paused rank run again. */
const RESUMING = ['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue'];

export class RankTrackerFactory implements vscode.DebugAdapterTrackerFactory {
    constructor(private readonly state: Pick<JobState, 'setRankState'>) {}

    /** Only rank sessions (`__rank`) are tracked; a parent has no threads. */
    createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker | undefined {
        if (!(session.configuration as RankdebugConfiguration).__rank) return undefined;
        const state = this.state;
        return {
            onDidSendMessage(m: { type?: string; event?: string; body?: { allThreadsContinued?: boolean } }) {
                if (m.type !== 'event') return;
                if (m.event === 'stopped') state.setRankState(session, 'paused');
                else if (m.event === 'continued') state.setRankState(session, 'attached');
            },
            onWillReceiveMessage(m: { type?: string; command?: string }) {
                if (m.type === 'request' && RESUMING.includes(m.command ?? '')) {
                    state.setRankState(session, 'attached');
                }
            },
            onExit() {
                state.setRankState(session, undefined);
            },
        };
    }
}
