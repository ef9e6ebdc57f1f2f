/**
 * Reading rank choices through the language server: `rankdebug.checkRanks`
 * (`rankdebug.lsp.commands.check_ranks` over `rankdebug.ranks`) checks a typed or remembered
 * choice (`1,3`, `0-3`, `all`, `local0`, `arm`, `1,3+arm`) against the plan's ranks. The
 * extension has no rank-spec parser of its own. No `vscode` import: unit-tested as is.
 */
import type { PlanCoords } from './coords';
import type { RankChoice } from './rankChoice';
import { isPlanError, specForSelection, type PlanError, type PlanRank, type Preset } from './ranks';

export const CHECK_RANKS = 'rankdebug.checkRanks';

/** Milliseconds typing pauses before the server checks the input. */
export const CHECK_DELAY_MS = 250;

/** The command's argument (camelCase, as the server reads it). */
export interface CheckRanksArgs {
    spec: string;
    allowArm?: boolean;
    /** The plan's ranks (`{rank, node_rank, local_rank}`); empty when not known. */
    ranks?: PlanRank[];
    worldSize?: number | null;
    /** The plan's coordinates, through which the server resolves a selector (`tp=0`). */
    coords?: { dims: PlanCoords['dims']; ranks: PlanCoords['ranks'] } | null;
}

/** The server's answer: the canonical spec, its ranks (null: each rank decides), and the arming. */
export interface CheckedRanks {
    rankSpec: string;
    ranks: number[] | null;
    arm: boolean;
}

export type CheckRanksReply = CheckedRanks | PlanError;

/** A choice as the server read it, with the ranks it names (null: each rank decides). */
export interface CheckedChoice extends RankChoice {
    ranks: number[] | null;
}

/** `workspace/executeCommand` on the language server (server.ts `Server.execute`). */
export type Execute = <T>(command: string, arg: unknown) => Promise<T>;

/** The job choices are checked against (from its launch plan). */
export interface RankJob {
    ranks: readonly PlanRank[];
    worldSize: number | null;
    /** The plan's parallel coordinates; absent or null when the command says none. */
    coords?: PlanCoords | null;
}

/**
 * The spec a checked choice is shown and sent as: the compact form of its ranks (`0-3,8`, or a
 * preset's own spec such as `all`), else the server's canonical spec.
 */
export function choiceSpec(reply: CheckedRanks, choices: readonly Preset[] = []): string {
    if (reply.ranks === null || !reply.rankSpec) return reply.rankSpec;
    return specForSelection(reply.ranks, choices);
}

/** Checks the choices typed or remembered for one job; one request per distinct text. */
export class RankChecker {
    private readonly cache = new Map<string, Promise<CheckRanksReply>>();

    constructor(
        private readonly execute: Execute,
        readonly job: RankJob,
        /** Whether `arm` may be typed (launch.json generation does not arm). */
        readonly allowArm: boolean,
    ) {}

    /** The server's answer for `text`; `allowArm` overrides the checker's (reading old memories). */
    check(text: string, allowArm: boolean = this.allowArm): Promise<CheckRanksReply> {
        const key = `${allowArm ? 'arm' : 'no-arm'}:${text.trim()}`;
        let reply = this.cache.get(key);
        if (!reply) {
            const arg: CheckRanksArgs = {
                spec: text.trim(),
                allowArm,
                ranks: this.job.ranks.map((r) => ({ rank: r.rank, node_rank: r.node_rank ?? null, local_rank: r.local_rank ?? null })),
                worldSize: this.job.worldSize,
            };
            if (this.job.coords) arg.coords = { dims: this.job.coords.dims, ranks: this.job.coords.ranks };
            reply = this.execute<CheckRanksReply>(CHECK_RANKS, arg);
            // A failed request (server restarting) is asked again next time.
            reply.catch(() => this.cache.delete(key));
            this.cache.set(key, reply);
        }
        return reply;
    }

    /** The choice `text` names, with its spec as shown (`choiceSpec`), or the server's error. */
    async choice(text: string, choices: readonly Preset[] = [], allowArm: boolean = this.allowArm): Promise<CheckedChoice | PlanError> {
        const reply = await this.check(text, allowArm);
        if (isPlanError(reply)) return reply;
        return { spec: choiceSpec(reply, choices), arm: reply.arm, ranks: reply.ranks };
    }

    /** The server's message when `text` is not a choice for this job, else undefined. */
    async problem(text: string): Promise<string | undefined> {
        try {
            const reply = await this.check(text);
            return isPlanError(reply) ? reply.error.message : undefined;
        } catch {
            return undefined;
        }
    }
}
