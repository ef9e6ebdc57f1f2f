/**
 * The `rankdebug` debug type, registered with VS Code:
 * - `launch` (parent session, in-process adapter): runs `rankdebug launch --json` in a
 *   pseudoterminal the user sees and types into, reads its `listening` lines and starts one
 *   child session `rank N` per chosen rank (`parentSession`, `lifecycleManagedByParent`).
 *   Stopping the parent stops the job; the job's exit ends the parent.
 * - `attach` with `connect` (a rank): `vscode.DebugAdapterServer` on that rank's debugpy port.
 * - `attach` with `job` (+ `ranks`): a parent for ranks of a running job, as `rankdebug jobs` lists it.
 *
 * Parts: a resolver per request kind (launchResolver.ts, attachResolver.ts) behind the
 * configuration provider, the descriptor factory, the job adapter, the rank tracker, and the
 * session registry; vscodeHost.ts gives them the VS Code API. Open Session (openSession.ts)
 * promotes a rank debugged without a session past `rankdebug.maxSessions`.
 */
import * as vscode from 'vscode';
import type { JobInfo } from '../core/jobList';
import type { JobState } from '../jobs/jobState';
import type { JobNode } from '../jobs/jobsView';
import { AttachResolver } from './attachResolver';
import { TYPE, type CommandServer } from './configuration';
import { ConfigurationProvider } from './configurationProvider';
import { DescriptorFactory } from './descriptorFactory';
import { LaunchResolver } from './launchResolver';
import { LinkRegistry } from './linkSession';
import { openSession } from './openSession';
import { SessionRegistry } from './sessions';
import { RankTrackerFactory } from './tracker';
import { exceptionFilters, vscodeHost, warmLauncher } from './vscodeHost';

/** Registers the debug type; the disposables unregister it. */
export function registerDebugType(server: CommandServer, state: JobState, listJobs: () => Promise<readonly JobInfo[]>): vscode.Disposable[] {
    const host = vscodeHost(listJobs);
    const sessions = new SessionRegistry();
    const links = new LinkRegistry();
    const resolvers = { launch: new LaunchResolver(server, host), attach: new AttachResolver(server, host) };
    return [
        sessions.track(host),
        vscode.debug.registerDebugConfigurationProvider(TYPE, new ConfigurationProvider(resolvers, host)),
        vscode.debug.registerDebugAdapterDescriptorFactory(TYPE, new DescriptorFactory({ state, sessions, host, links })),
        vscode.debug.registerDebugAdapterTrackerFactory(TYPE, new RankTrackerFactory(state)),
        vscode.debug.registerDebugAdapterTrackerFactory(TYPE, exceptionFilters),
        { dispose: () => warmLauncher.discard() },
        vscode.commands.registerCommand('rankdebug.jobs.openSession', (node?: JobNode) => openSession(state, node)),
    ];
}
