/**
 * The JSON lines `rankdebug launch --json` prints on stdout, read incrementally.
 * No `vscode` import.
 */
import type * as Wire from './generated/launchEvents';

export interface JobEvent {
    event: 'job';
    job: string;
    dir?: string;
    pid?: number;
    ranks?: number[] | null;
    rank_spec?: string;
}
export interface ListeningEvent {
    event: 'listening';
    rank: number;
    host: string;
    port: number;
    pid?: number;
    job?: string;
}
export interface AttachedEvent {
    event: 'attached';
    rank: number;
    pid?: number;
    job?: string;
}
/** The job ended (last, once). A rank that ends before the job shows in its registry entry. */
export interface ExitedEvent {
    event: 'exited';
    code: number;
}
export interface ErrorEvent {
    event: 'error';
    message: string;
}
/** A chosen rank stopped (breakpoint, pause, step, exception…); where, when known. */
export interface StoppedEvent {
    event: 'stopped';
    rank: number;
    reason: string;
    file: string | null;
    line: number | null;
    function: string | null;
    /** The collective (`all_reduce`) a rank shown paused waits in: its stack was read from outside. */
    waiting?: string;
    /** That collective's sequence number in its process group, from PyTorch's records (where the rank could say). */
    seq?: number;
    /** That process group's name (`0` is the default group). */
    group?: string;
    job?: string;
}
export interface ContinuedEvent {
    event: 'continued';
    rank: number;
    job?: string;
}
/** Every rank of a group step or run-to has stopped. */
export interface ArrivedEvent {
    event: 'arrived';
    command: string;
    ranks: number[];
    job?: string;
}
/** A rank of a group step or run-to has not arrived after about a second: it waits in a collective. */
export interface BlockedEvent {
    event: 'blocked';
    rank: number;
    in: string;
    /** The collective's sequence number in its process group, from PyTorch's records (where the rank could say). */
    seq?: number;
    /** That process group's name (`0` is the default group). */
    group?: string;
    job?: string;
}
/** A rank without a debugger is held alive after an uncaught exception; Attach opens it at that frame. */
export interface RaisedEvent {
    event: 'raised';
    rank: number;
    pid: number | null;
    exception: string;
    message: string;
    file: string | null;
    line: number | null;
    function: string | null;
    job?: string;
}
/** A Ray actor rank's role (`actor/rollout/ref`, `critic`), known once it runs the actor's code: its session's label. */
export interface RoleEvent {
    event: 'role';
    rank: number;
    role: string;
    job?: string;
}
export type RankEvent = StoppedEvent | ContinuedEvent | ArrivedEvent | BlockedEvent | RaisedEvent;
export type LaunchEvent = JobEvent | ListeningEvent | AttachedEvent | ExitedEvent | ErrorEvent | RoleEvent | RankEvent;

/**
 * The events read here are those `pyserver/rankdebug/protocol/launch.py` declares (its
 * generated types): no field is read that the backend does not declare, and no event. A
 * drift fails `tsc`; the Python side is checked against the same declarations by the
 * launch tests.
 */
type Within<A, B> = [Exclude<A, B>] extends [never] ? true : false;
type Holds<T extends true> = T;
export type WireAgreement = [
    Holds<Within<LaunchEvent['event'], Wire.LaunchWire['event']>>,
    Holds<Within<keyof JobEvent, keyof Wire.JobWire>>,
    Holds<Within<keyof ListeningEvent, keyof Wire.ListeningWire>>,
    Holds<Within<keyof AttachedEvent, keyof Wire.AttachedWire>>,
    Holds<Within<keyof ExitedEvent, keyof Wire.ExitedWire>>,
    Holds<Within<keyof ErrorEvent, keyof Wire.ErrorWire>>,
    Holds<Within<keyof StoppedEvent, keyof Wire.StoppedWire>>,
    Holds<Within<keyof ContinuedEvent, keyof Wire.ContinuedWire>>,
    Holds<Within<keyof ArrivedEvent, keyof Wire.ArrivedWire>>,
    Holds<Within<keyof BlockedEvent, keyof Wire.BlockedWire>>,
    Holds<Within<keyof RaisedEvent, keyof Wire.RaisedWire>>,
    Holds<Within<keyof RoleEvent, keyof Wire.RoleWire>>,
];

type Fields = Record<string, unknown>;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const job = (v: Fields): { job?: string } => (typeof v.job === 'string' ? { job: v.job } : {});
/** A collective's optional `seq` and `group`, those well-typed. */
const numbered = (v: Fields): { seq?: number; group?: string } => ({
    ...(int(v.seq) !== null ? { seq: v.seq as number } : {}),
    ...(text(v.group) !== null ? { group: v.group as string } : {}),
});

/** Each event's reader: the event when its fields are well-typed, else undefined. */
const READERS: Record<string, (v: Fields) => LaunchEvent | undefined> = {
    job: (v) => (typeof v.job === 'string' ? (v as unknown as JobEvent) : undefined),
    listening: (v) =>
        typeof v.rank === 'number' && typeof v.port === 'number' ? ({ ...v, host: typeof v.host === 'string' ? v.host : '127.0.0.1' } as ListeningEvent) : undefined,
    attached: (v) => (typeof v.rank === 'number' ? (v as unknown as AttachedEvent) : undefined),
    exited: (v) => ({ event: 'exited', code: typeof v.code === 'number' ? v.code : 1 }),
    stopped: (v) =>
        int(v.rank) === null
            ? undefined
            : {
                  event: 'stopped',
                  rank: v.rank as number,
                  reason: text(v.reason) ?? 'pause',
                  file: text(v.file),
                  line: int(v.line),
                  function: text(v.function),
                  ...(text(v.waiting) ? { waiting: v.waiting as string, ...numbered(v) } : {}),
                  ...job(v),
              },
    role: (v) => (int(v.rank) === null || !text(v.role) ? undefined : { event: 'role', rank: v.rank as number, role: (v.role as string).slice(0, 40), ...job(v) }),
    continued: (v) => (int(v.rank) === null ? undefined : { event: 'continued', rank: v.rank as number, ...job(v) }),
    arrived: (v) => {
        const ranks = Array.isArray(v.ranks) ? v.ranks.filter((r): r is number => int(r) !== null) : [];
        return { event: 'arrived', command: text(v.command) ?? '', ranks, ...job(v) };
    },
    blocked: (v) => (int(v.rank) === null ? undefined : { event: 'blocked', rank: v.rank as number, in: text(v.in) ?? '', ...numbered(v), ...job(v) }),
    raised: (v) =>
        int(v.rank) === null
            ? undefined
            : {
                  event: 'raised',
                  rank: v.rank as number,
                  pid: int(v.pid),
                  exception: text(v.exception) ?? 'Exception',
                  message: text(v.message) ?? '',
                  file: text(v.file),
                  line: int(v.line),
                  function: text(v.function),
                  ...job(v),
              },
};

/** `{"error": {...}}` (the CLI's error envelope) as an `error` event. */
function errorEvent(error: object): ErrorEvent {
    const message = (error as Fields).message;
    return { event: 'error', message: typeof message === 'string' ? message : JSON.stringify(error) };
}

/** Turns one stdout line into an event; undefined for anything else. */
export function parseEvent(line: string): LaunchEvent | undefined {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) return undefined;
    let value: unknown;
    try {
        value = JSON.parse(trimmed);
    } catch {
        return undefined;
    }
    if (typeof value !== 'object' || value === null) return undefined;
    const v = value as Fields;
    if (typeof v.error === 'object' && v.error !== null) return errorEvent(v.error);
    const read = typeof v.event === 'string' && Object.hasOwn(READERS, v.event) ? READERS[v.event] : undefined;
    return read?.(v);
}

/** Splits a byte stream into lines; `push` returns the complete lines so far. */
export class LineSplitter {
    private rest = '';

    push(chunk: string): string[] {
        const text = this.rest + chunk;
        const lines = text.split('\n');
        this.rest = lines.pop() ?? '';
        return lines.map((l) => l.replace(/\r$/, ''));
    }

    flush(): string[] {
        const rest = this.rest;
        this.rest = '';
        return rest ? [rest] : [];
    }
}

/** A rank's session label: `rank 3`, or `rank 3 · critic` for a Ray actor with a role. */
export function rankLabel(rank: number, role?: string): string {
    return role ? `rank ${rank} · ${role}` : `rank ${rank}`;
}
