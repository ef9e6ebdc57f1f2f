/**
 * The `rankdebug` configuration provider: F5 without a launch.json debugs the command under the
 * cursor; every other configuration goes to the resolver of its request kind (launchResolver.ts,
 * attachResolver.ts), whose error is shown and stops the session.
 */
import type * as vscode from 'vscode';
import type { ConfigurationResolver, RankdebugConfiguration } from './configuration';
import type { ResolverHost } from './host';

export type Resolvers = Readonly<Record<'launch' | 'attach', ConfigurationResolver>>;

export class ConfigurationProvider implements vscode.DebugConfigurationProvider {
    constructor(
        private readonly resolvers: Resolvers,
        private readonly host: ResolverHost,
    ) {}

    /** F5 with no launch.json (an empty configuration): debug the command under the cursor. */
    async resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
        if (!config.type && !config.request && !config.name) {
            await this.host.executeCommand('rankdebug.debugCommand');
            return undefined;
        }
        return config;
    }

    async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<vscode.DebugConfiguration | undefined | null> {
        const { l10n } = this.host;
        try {
            // The extension's own configurations (a job's parent, a rank's child) are resolved already.
            if (config.__rank || config.__job || config.__attach) return config;
            const resolver = config.request === 'launch' || config.request === 'attach' ? this.resolvers[config.request] : undefined;
            if (!resolver) throw new Error(l10n.t('"request" must be "launch" or "attach"'));
            return await resolver.resolve(folder, config);
        } catch (e) {
            this.host.showError(l10n.t('Rank Debugger: {0}', e instanceof Error ? e.message : String(e)));
            return undefined;
        }
    }
}
