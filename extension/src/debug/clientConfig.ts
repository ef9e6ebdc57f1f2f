/**
 * The client's configuration sent with the launch (`RANKDEBUG_PRESET`, read by the
 * supervisor's gates: pyserver/rankdebug/supervise/gates/preset.py): every breakpoint with its
 * condition, hit count, log message and rank binding, the function breakpoints and the
 * exception filters. A chosen rank then starts at once instead of waiting for its session's
 * `setBreakpoints` round trips; the session's own word replaces them once it has configured.
 */
import type * as vscode from 'vscode';
import type { RankdebugConfiguration } from './configuration';
import type { SourceBreakpoints } from './rankLink';

export const PRESET_ENV = 'RANKDEBUG_PRESET';
/** Above this the configuration is not sent (an environment variable's room): ranks wait for it as before. */
const MAX_PRESET_CHARS = 64 * 1024;
/** What VS Code sends a debugpy-like adapter before anyone changes the filters. */
const DEFAULT_FILTERS = ['uncaught'];

export interface FunctionBreakpoint {
    name: string;
    condition?: string;
    hitCondition?: string;
}

/** One source's `setBreakpoints` arguments. */
export interface SourceArguments {
    source: { path: string };
    breakpoints: SourceBreakpoints['breakpoints'];
}

export interface ClientConfig {
    breakpoints: SourceArguments[];
    functionBreakpoints: FunctionBreakpoint[];
    exceptionFilters: string[];
}

/**
 * The exception filters a rank session's client last set: VS Code keeps them per debug type
 * but its API does not show them, so they are read off the sessions' own requests.
 */
export class ExceptionFilters implements vscode.DebugAdapterTrackerFactory {
    private filters = DEFAULT_FILTERS;

    get current(): string[] {
        return [...this.filters];
    }

    createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker | undefined {
        if (!(session.configuration as RankdebugConfiguration).__rank) return undefined;
        return {
            onWillReceiveMessage: (m: { type?: string; command?: string; arguments?: { filters?: unknown } }) => {
                const filters = m.arguments?.filters;
                if (m.type === 'request' && m.command === 'setExceptionBreakpoints' && Array.isArray(filters)) {
                    this.filters = filters.filter((f): f is string => typeof f === 'string');
                }
            },
        };
    }
}

/** The editor's breakpoints per source as `setBreakpoints` arguments. */
export function sourceArguments(sources: readonly SourceBreakpoints[]): SourceArguments[] {
    return sources.map(({ path, breakpoints }) => ({ source: { path }, breakpoints }));
}

/** The launch's environment addition that carries `config` (none when it is too big to carry). */
export function presetEnv(config: ClientConfig): Record<string, string> {
    const text = JSON.stringify(config);
    return text.length <= MAX_PRESET_CHARS ? { [PRESET_ENV]: text } : {};
}
