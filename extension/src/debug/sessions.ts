/**
 * The session registry: each parent session's child sessions `rank N`, remembered as VS Code
 * starts and ends them, so that a parent finds the session it started for a rank
 * (`startDebugging` answers only whether it started).
 */
import type * as vscode from 'vscode';
import type { RankdebugConfiguration } from './configuration';
import type { SessionEvents } from './host';

type SessionId = Pick<vscode.DebugSession, 'id'>;

export class SessionRegistry {
    private readonly children = new Map<string, vscode.DebugSession>();

    private static key(parent: SessionId, rank: number): string {
        return `${parent.id}/${rank}`;
    }

    add(parent: SessionId, rank: number, child: vscode.DebugSession): void {
        this.children.set(SessionRegistry.key(parent, rank), child);
    }

    find(parent: SessionId, rank: number): vscode.DebugSession | undefined {
        return this.children.get(SessionRegistry.key(parent, rank));
    }

    remove(parent: SessionId, rank: number): void {
        this.children.delete(SessionRegistry.key(parent, rank));
    }

    /** A session has started: remembered when it is a rank's child (`__rank`, with a parent). */
    started(session: vscode.DebugSession): void {
        const rank = (session.configuration as RankdebugConfiguration).__rank;
        if (rank && session.parentSession) this.add(session.parentSession, rank.rank, session);
    }

    /** A session has ended: a rank's child is forgotten. */
    ended(session: vscode.DebugSession): void {
        const rank = (session.configuration as RankdebugConfiguration).__rank;
        if (rank && session.parentSession) this.remove(session.parentSession, rank.rank);
    }

    /** Follows the sessions as they start and end, until disposed. */
    track(events: SessionEvents): vscode.Disposable {
        const subscriptions = [events.onDidStartDebugSession((s) => this.started(s)), events.onDidTerminateDebugSession((s) => this.ended(s))];
        return { dispose: () => subscriptions.forEach((d) => d.dispose()) };
    }
}
