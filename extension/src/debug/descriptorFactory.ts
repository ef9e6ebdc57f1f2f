/**
 * The `rankdebug` adapter descriptor factory: a rank's child session (`connect`) talks to that
 * rank's debugpy adapter over its port; a parent session runs the job adapter in this process.
 */
import * as vscode from 'vscode';
import type { RankdebugConfiguration } from './configuration';
import { JobAdapter, type JobAdapterDeps } from './jobAdapter';

export class DescriptorFactory implements vscode.DebugAdapterDescriptorFactory {
    constructor(private readonly deps: JobAdapterDeps) {}

    createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
        const config = session.configuration as RankdebugConfiguration;
        if (config.connect) return new vscode.DebugAdapterServer(config.connect.port, config.connect.host ?? '127.0.0.1');
        return new vscode.DebugAdapterInlineImplementation(new JobAdapter(session, this.deps));
    }
}
