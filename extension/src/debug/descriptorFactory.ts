/**
 * The `rankdebug` adapter descriptor factory: a rank's child session (`connect`) talks to that
 * rank's debugpy adapter over its port (a rank promoted past `rankdebug.maxSessions`: over the
 * connection its parent holds to it, linkSession.ts); a parent session runs the job adapter in this process.
 */
import * as vscode from 'vscode';
import type { RankdebugConfiguration } from './configuration';
import { JobAdapter, type JobAdapterDeps } from './jobAdapter';
import { LinkSession } from './linkSession';

export class DescriptorFactory implements vscode.DebugAdapterDescriptorFactory {
    constructor(private readonly deps: JobAdapterDeps) {}

    createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
        const config = session.configuration as RankdebugConfiguration;
        // A rank promoted past the cap: shown over the connection its parent holds (linkSession.ts).
        const link = config.__rank?.linked && session.parentSession ? this.deps.links?.get(session.parentSession, config.__rank.rank) : undefined;
        if (link && !link.closed && !link.shown) return new vscode.DebugAdapterInlineImplementation(new LinkSession(link, new vscode.EventEmitter<vscode.DebugProtocolMessage>()));
        if (config.connect) return new vscode.DebugAdapterServer(config.connect.port, config.connect.host ?? '127.0.0.1');
        return new vscode.DebugAdapterInlineImplementation(new JobAdapter(session, this.deps));
    }
}
