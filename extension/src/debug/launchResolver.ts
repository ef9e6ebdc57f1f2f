/**
 * The `launch` request's resolver: asks the language server what to run for the
 * configuration's command and ranks (`rankdebug.debugPlan`) and puts the job's process on the
 * configuration (`__job`) for the job adapter to start.
 */
import type * as vscode from 'vscode';
import { whereOf, type DebugPlanReply } from '../core/debugPlan';
import { isPlanError, titleOf, type PlanError } from '../core/ranks';
import type { CommandServer, ConfigurationResolver, JobSpec, RankdebugConfiguration } from './configuration';
import { presetEnv } from './clientConfig';
import type { Localize, ResolverHost } from './host';
import { mark } from './traceMarks';

/** The server's error as shown to the user, with its line (1-based) when it has one. */
export function planErrorText(result: PlanError, l10n: Localize): string {
    return result.error.line ? `${result.error.message} (${l10n.t('line {0}', result.error.line)})` : result.error.message;
}

/** The job's process from the server's debug plan. */
function jobSpecOf(result: DebugPlanReply): JobSpec {
    return {
        argv: result.argv,
        env: { ...(result.env ?? {}) },
        cwd: result.cwd,
        ranks: result.ranks,
        rankSpec: result.rankSpec,
        worldSize: result.plan.world_size ?? null,
        title: result.title ?? titleOf(result.plan),
        armed: result.armed === true,
        configurations: result.configurations,
    };
}

export class LaunchResolver implements ConfigurationResolver {
    constructor(
        private readonly server: CommandServer,
        private readonly host: ResolverHost,
    ) {}

    /** The server reads `ranks` (default rank 0, none when only armed) and names the job. */
    async resolve(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<RankdebugConfiguration> {
        mark('resolve');
        const where = whereOf(config);
        if (!where) throw new Error(this.host.l10n.t('a launch configuration needs "command": the training command to run'));
        const result = await this.server.execute<DebugPlanReply | PlanError>('rankdebug.debugPlan', {
            ...where,
            ...(config.ranks !== undefined && config.ranks !== null ? { ranks: config.ranks } : {}),
            ...(config.arm === true ? { arm: true } : {}),
            breakpoints: this.host.pythonBreakpoints(),
            settings: this.overridesOf(config),
        });
        if (isPlanError(result)) throw new Error(planErrorText(result, this.host.l10n));
        for (const w of result.warnings ?? []) this.host.log.warn(w);
        config.__job = jobSpecOf(result);
        // The breakpoints travel with the launch: chosen ranks start without waiting for them.
        const client = this.host.clientConfig?.();
        if (client) Object.assign(config.__job.env, presetEnv(client));
        config.justMyCode ??= this.host.justMyCode(folder?.uri);
        mark('resolved');
        return config;
    }

    /** A launch configuration's overrides of the server's settings for this request. */
    private overridesOf(config: RankdebugConfiguration): Record<string, unknown> {
        const overrides: Record<string, unknown> = {};
        const cwd = config.cwd ?? config.source?.cwd;
        if (cwd) overrides.cwd = cwd;
        if (config.env && Object.keys(config.env).length) overrides.env = config.env;
        if (config.python) overrides.interpreter = this.host.cliPrefix(config.python);
        return overrides;
    }
}
