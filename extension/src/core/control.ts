/**
 * The job's control channel: `rankdebug launch` listens on `DIR/ctl.sock` (DIR from its `job`
 * event, or the job's registry folder), owner only. One JSON object per line each way; every
 * command line gets exactly one reply line, `{"ok": true, "ranks": [...]}` or
 * `{"error": {"message": ...}}`. One connection per command: the supervisor holds no client state.
 * Node `net` only; no `vscode` import.
 */
import * as net from 'node:net';
import * as path from 'node:path';
import type { ContinueCtl, DoneCtl, PauseCtl, ProblemCtl, RefusedCtl, RunToCtl, StepCtl, StopModeCtl } from './generated/ctl';
import type { Localize } from './localize';
import type { Raw } from './raw';

/** Ranks a command acts on: omitted (every chosen rank), a spec in the quick-pick grammar, or rank numbers. */
export type RankArg = string | number[] | undefined;

export type StepKind = 'over' | 'in' | 'out';
export type StopMode = 'together' | 'alone';

/** A declared command (generated from protocol/ctl.py) with some fields narrowed: tsc refuses a name the declaration lacks, or a type it does not allow. */
type Narrowed<T, N extends { [K in keyof N]: K extends keyof T ? T[K] : never }> = Omit<T, keyof N> & N;

export type ControlCommand =
    | Narrowed<ContinueCtl, { ranks?: RankArg }>
    | Narrowed<PauseCtl, { ranks?: RankArg }>
    | Narrowed<StepCtl, { ranks?: RankArg; kind: StepKind }>
    | Narrowed<RunToCtl, { ranks?: RankArg }>
    | Narrowed<StopModeCtl, { mode: StopMode }>;

/** The supervisor's answer: the ranks it acted on. */
export interface ControlReply {
    ranks: number[];
}

/** Milliseconds a command waits for its reply. */
const CONTROL_TIMEOUT_MS = 5000;

const CONTROL_SOCKET = 'ctl.sock';

/** The control socket of the job whose folder is `dir`. */
export function controlSocket(dir: string): string {
    return path.join(dir, CONTROL_SOCKET);
}

/** A command could not be sent or was refused; `message` is for the user. */
export class ControlError extends Error {}

/** The command's line as the supervisor reads it (`ranks` left out when it means every chosen rank). */
export function commandLine(cmd: ControlCommand): string {
    const out: Record<string, unknown> = { ...cmd };
    if (out.ranks === undefined) delete out.ranks;
    return `${JSON.stringify(out)}\n`;
}


/** Reads one reply line; throws a ControlError for an error reply or anything unreadable. */
export function readReply(line: string, l10n: Localize): ControlReply {
    let value: unknown;
    try {
        value = JSON.parse(line);
    } catch {
        throw new ControlError(l10n.t('the job answered something unreadable: {0}', line.slice(0, 200)));
    }
    const v = (typeof value === 'object' && value !== null ? value : {}) as Raw<DoneCtl> & Raw<RefusedCtl>;
    if (typeof v.error === 'object' && v.error !== null) {
        const message = (v.error as Raw<ProblemCtl>).message;
        throw new ControlError(typeof message === 'string' ? message : JSON.stringify(v.error));
    }
    if (v.ok !== true) throw new ControlError(l10n.t('the job answered something unreadable: {0}', line.slice(0, 200)));
    const ranks = Array.isArray(v.ranks) ? v.ranks.filter((r): r is number => typeof r === 'number' && Number.isInteger(r)) : [];
    return { ranks };
}

/** The socket error as the user should read it. */
function connectError(e: NodeJS.ErrnoException, socket: string, l10n: Localize): ControlError {
    switch (e.code) {
        case 'ENOENT':
        case 'ECONNREFUSED':
            return new ControlError(l10n.t('the job takes no commands (no supervisor listens on {0}); it was not started by rankdebug launch, or has ended', socket));
        case 'EACCES':
        case 'EPERM':
            return new ControlError(l10n.t('the job\'s control socket {0} belongs to another user', socket));
        default:
            return new ControlError(l10n.t('cannot reach the job\'s control socket {0}: {1}', socket, e.message));
    }
}

/**
 * Sends one command to the supervisor listening on `socket` and returns its reply.
 * Throws a ControlError when the socket is missing, refuses, closes or stays silent for `timeoutMs`.
 */
export function sendControl(socket: string, cmd: ControlCommand, l10n: Localize, timeoutMs = CONTROL_TIMEOUT_MS): Promise<ControlReply> {
    return new Promise((resolve, reject) => {
        let buffer = '';
        let done = false;
        const conn = net.createConnection(socket);
        const finish = (error: Error | undefined, reply?: ControlReply): void => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            conn.destroy();
            if (error) reject(error);
            else resolve(reply as ControlReply);
        };
        const timer = setTimeout(() => finish(new ControlError(l10n.t('the job did not answer within {0} s', timeoutMs / 1000))), timeoutMs);
        conn.setEncoding('utf8');
        conn.on('connect', () => conn.write(commandLine(cmd)));
        conn.on('data', (chunk: string) => {
            buffer += chunk;
            const end = buffer.indexOf('\n');
            if (end < 0) return;
            try {
                finish(undefined, readReply(buffer.slice(0, end).trim(), l10n));
            } catch (e) {
                finish(e as Error);
            }
        });
        conn.on('error', (e: NodeJS.ErrnoException) => finish(connectError(e, socket, l10n)));
        conn.on('close', () => finish(new ControlError(l10n.t('the job closed its control connection without an answer'))));
    });
}
