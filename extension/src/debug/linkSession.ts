/**
 * A rank's VS Code session over the connection the extension already holds to it (rankLink.ts):
 * the debug adapter, in this process, of a rank promoted past `rankdebug.maxSessions`. What
 * VS Code says to start a session (initialize, attach, configurationDone) is answered here, as
 * the link did it already; everything else goes to the rank and back. A rank that is stopped
 * is shown stopped where it is, so a click on a rank paused at a breakpoint lands there. Ending
 * the session only lets the rank go back to its link: the gate sees no disconnect, so the rank
 * neither runs on from its stop nor leaves stop together.
 */
import type * as vscode from 'vscode';
import type { RankdebugConfiguration } from './configuration';
import type { DapMessage, LinkView, RankLink } from './rankLink';

/** The request that ends a linked session from the extension (a rank's own adapter refuses it). */
export const LINK_END = 'rankdebugEndSession';

/**
 * Ends a rank's session and nothing else: `vscode.debug.stopDebugging` on a child whose
 * lifecycle its parent manages ends the parent (VS Code's DebugSession.terminate), and so the
 * whole job. A linked session (LinkSession) ends on LINK_END; a session on the rank's gate is
 * told `disconnect` (the rank runs on), and the gate closes its connection, which ends it.
 */
export async function endRankSession(session: Pick<vscode.DebugSession, 'customRequest' | 'configuration'>): Promise<void> {
    const linked = (session.configuration as RankdebugConfiguration).__rank?.linked === true;
    // A linked configuration whose link had gone by then got the gate (descriptorFactory.ts), which does not know the request: disconnect then.
    const ended = linked && (await Promise.resolve(session.customRequest(LINK_END)).then(() => true, () => false));
    if (!ended) await Promise.resolve(session.customRequest('disconnect', { restart: false, terminateDebuggee: false })).catch(() => undefined);
}

export class LinkSession implements vscode.DebugAdapter, LinkView {
    readonly onDidSendMessage: vscode.Event<vscode.DebugProtocolMessage>;
    private seq = 1;
    private ended = false;
    /** VS Code's seq of each reverse request passed on → the adapter's. */
    private readonly reverse = new Map<number, number>();

    constructor(
        private readonly link: RankLink,
        private readonly emitter: vscode.EventEmitter<vscode.DebugProtocolMessage>,
    ) {
        this.onDidSendMessage = emitter.event;
        link.show(this);
    }

    handleMessage(message: vscode.DebugProtocolMessage): void {
        const m = message as DapMessage;
        if (m.type === 'response') this.answered(m);
        else if (m.type === 'request') this.requested(m);
    }

    /** VS Code's answer to a reverse request of the adapter. */
    private answered(m: DapMessage): void {
        const seq = this.reverse.get(m.request_seq ?? -1);
        this.reverse.delete(m.request_seq ?? -1);
        if (seq !== undefined) this.link.respond({ ...m, request_seq: seq });
    }

    private requested(m: DapMessage): void {
        switch (m.command) {
            case 'initialize':
                this.respond(m, true, this.link.capabilities);
                return;
            case 'attach':
            case 'launch':
                this.respond(m, true);
                this.send({ type: 'event', event: 'initialized' });
                return;
            case 'configurationDone':
                this.respond(m, true);
                if (this.link.stopped) this.send({ type: 'event', event: 'stopped', body: { reason: this.link.stopped.reason, threadId: this.link.stopped.threadId, allThreadsStopped: true } });
                return;
            case LINK_END:
                // The cap ends this session (endRankSession): VS Code disconnects on `terminated`.
                this.respond(m, true);
                this.leave();
                this.send({ type: 'event', event: 'terminated' });
                return;
            case 'disconnect':
            case 'terminate':
                // Only the session ends: the rank stays with its link (never stopped, never let run).
                this.respond(m, true);
                this.leave();
                if (m.command === 'terminate') this.send({ type: 'event', event: 'terminated' });
                return;
            default:
                void this.link.request(m.command ?? '', m.arguments ?? {}).then((r) => this.respond(m, r.success === true, r.body ?? {}, r.message));
        }
    }

    /** An event or reverse request of the rank's adapter. */
    onMessage(m: DapMessage): void {
        if (this.ended) return;
        if (m.type === 'request') {
            const seq = this.send({ type: 'request', command: m.command, arguments: m.arguments });
            this.reverse.set(seq, m.seq);
            return;
        }
        this.send({ type: 'event', event: m.event, body: m.body });
    }

    /** The rank's connection closed (the rank or the job ended): so does the session. */
    onClose(): void {
        if (this.ended) return;
        this.send({ type: 'event', event: 'terminated' });
        this.leave();
    }

    private leave(): void {
        if (this.ended) return;
        this.ended = true;
        this.link.show(undefined);
    }

    private respond(req: DapMessage, success: boolean, body: Record<string, unknown> = {}, message?: string): void {
        this.send({ type: 'response', request_seq: req.seq, command: req.command, success, body, ...(message ? { message } : {}) });
    }

    private send(m: Omit<DapMessage, 'seq'>): number {
        const seq = this.seq++;
        this.emitter.fire({ ...m, seq } as vscode.DebugProtocolMessage);
        return seq;
    }

    dispose(): void {
        this.leave();
    }
}

/** The links parents hold to their ranks, for the descriptor factory to find a linked session's (`__rank.linked`). */
export class LinkRegistry {
    private readonly links = new Map<string, RankLink>();

    private static key(parent: Pick<vscode.DebugSession, 'id'>, rank: number): string {
        return `${parent.id}/${rank}`;
    }

    set(parent: Pick<vscode.DebugSession, 'id'>, rank: number, link: RankLink | undefined): void {
        if (link) this.links.set(LinkRegistry.key(parent, rank), link);
        else this.links.delete(LinkRegistry.key(parent, rank));
    }

    get(parent: Pick<vscode.DebugSession, 'id'>, rank: number): RankLink | undefined {
        return this.links.get(LinkRegistry.key(parent, rank));
    }
}
