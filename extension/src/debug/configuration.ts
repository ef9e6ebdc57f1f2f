/**
 * The `rankdebug` debug type's configurations: the fields users write in launch.json and the
 * ones the resolvers add before a session starts (`__job`, `__attach`, `__rank`), and the
 * resolver each request kind has. Types and the type name only; no `vscode` value import.
 */
import type * as vscode from 'vscode';
import type { AttachConfiguration } from '../core/debugPlan';

export const TYPE = 'rankdebug';

/** What the launch resolver computes: the process to run. */
export interface JobSpec {
    argv: string[];
    env: Record<string, string>;
    cwd: string;
    ranks: number[] | null;
    rankSpec: string;
    worldSize: number | null;
    /** The server's title of the job (`rankdebug.debugPlan` → `title`). */
    title: string;
    /** Every rank serves a control socket (`--arm`): attach, evaluate or read stacks later. */
    armed: boolean;
    /** The server's child attach configuration per chosen rank (`configurations`). */
    configurations?: AttachConfiguration[];
}

/** Where a parent session for a running job finds its ranks. */
export interface AttachSpec {
    job: string;
    supervisorPid?: number;
    /** The job's registry folder: its supervisor's control socket is DIR/ctl.sock. */
    dir?: string;
    ranks: { rank: number; host: string; port: number }[];
    /** A JSON-lines file of `rankdebug launch --json` events to follow (the terminal shim). */
    events?: string;
    /** Stop the job when the parent session stops (jobs the shim started). */
    stopJobOnEnd?: boolean;
    worldSize?: number | null;
    title?: string;
}

/** Fields the extension adds to configurations; user configurations never carry them. */
export interface RankdebugConfiguration extends vscode.DebugConfiguration {
    command?: string | string[];
    cwd?: string;
    env?: Record<string, string>;
    ranks?: string | number | number[];
    /** launch: arm every rank (`rankdebug launch --arm`); with no `ranks`, none is debugged from the start. */
    arm?: boolean;
    connect?: { host?: string; port: number };
    job?: string | null;
    justMyCode?: boolean;
    python?: string;
    /** Where the command is, when it came from an editor: `{uri, line}` (0-based) or `{text, cwd}`. */
    source?: { uri?: string; line?: number; text?: string; cwd?: string; argv?: string[] };
    __job?: JobSpec;
    __attach?: AttachSpec;
    /** A rank's session; `linked`: shown over the connection the parent holds to it (linkSession.ts). */
    __rank?: { rank: number; job?: string; parentKey?: string; linked?: boolean };
}

/** Turns a user's configuration of one request kind into what its session runs; throws what is wrong with it. */
export interface ConfigurationResolver {
    resolve(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<RankdebugConfiguration>;
}

/** The language server's `workspace/executeCommand` (server.ts `Server.execute`). */
export interface CommandServer {
    execute<T>(command: string, arg: unknown): Promise<T>;
}
