/**
 * The `rankdebug.debugPlan` reply as the extension reads it, and the small conversions
 * around it: where a launch configuration's command is, the per-rank child attach
 * configurations (the server's, `rankdebug.debugplan.configs.attach_configurations`), and the
 * ranks of a running job an attach configuration names. No `vscode` import: unit-tested as is.
 */
import type { JobInfo } from './jobList';
import type { LaunchPlan, PlanRank } from './ranks';

/** One `rankdebug` attach configuration for a rank, as the server writes it. */
export interface AttachConfiguration {
    type: string;
    request: string;
    name: string;
    ranks?: number[];
    job?: string | null;
    connect?: { host?: string; port: number };
    [key: string]: unknown;
}

/** The `rankdebug.debugPlan` reply (`DebugPlan.to_json()` on the Python side). */
export interface DebugPlanReply {
    plan: LaunchPlan;
    argv: string[];
    env: Record<string, string>;
    cwd: string;
    rankSpec: string;
    ranks: number[] | null;
    armed?: boolean;
    warnings: string[];
    /** Older servers send none of these three. */
    title?: string;
    configurations?: AttachConfiguration[];
    compound?: { name: string; configurations: string[] };
}

/** Where a launch configuration's command is, as `rankdebug.plan`/`debugPlan` take it. */
export type Where = { uri: string; line: number } | { argv: string[] } | { text: string; language: 'shellscript' };

/** The fields of a launch configuration that say where the command is. */
export interface CommandFields {
    command?: string | string[];
    source?: { uri?: string; line?: number; text?: string; argv?: string[] };
}

/**
 * Where the command is: the editor's source first (document line, argv or terminal text),
 * else `command` (an argv array or a command line); undefined when there is none.
 */
export function whereOf(config: CommandFields): Where | undefined {
    const src = config.source;
    if (src?.uri !== undefined) return { uri: src.uri, line: src.line ?? 0 };
    if (src?.argv) return { argv: src.argv };
    if (src?.text !== undefined) return { text: src.text, language: 'shellscript' };
    if (Array.isArray(config.command)) return { argv: config.command };
    if (typeof config.command === 'string' && config.command.trim()) return { text: config.command, language: 'shellscript' };
    return undefined;
}

/**
 * The child configuration of `rank`: the server's (`configurations`, named `rank N`). Built
 * here only where the server has none: an older server, or a rank the plan did not resolve
 * (armed ranks attached later, `localN` decided by each rank, a job attached from the registry).
 */
export function rankConfiguration(configs: readonly AttachConfiguration[] | undefined, rank: number): AttachConfiguration {
    const found = configs?.find((c) => Array.isArray(c.ranks) && c.ranks.length === 1 && c.ranks[0] === rank);
    return found ? { ...found } : { type: 'rankdebug', request: 'attach', name: `rank ${rank}`, job: null, ranks: [rank] };
}

/** An attach configuration's `ranks` (a number, a list or a spec) as the spec text the server reads. */
export function specText(value: string | number | number[] | undefined | null): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value.join(',');
    return String(value);
}

/**
 * A running job's ranks as a plan's rank list, when the registry knows them all (one entry
 * per rank 0..world_size-1); else empty, and the server checks against the world size alone.
 */
export function registryRanks(job: Pick<JobInfo, 'worldSize' | 'ranks'>): PlanRank[] {
    const entries = [...job.ranks].sort((a, b) => a.rank - b.rank);
    const complete = typeof job.worldSize === 'number' && entries.length === job.worldSize && entries.every((r, i) => r.rank === i);
    return complete ? entries.map((r) => ({ rank: r.rank, local_rank: r.localRank })) : [];
}
