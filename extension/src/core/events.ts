/**
 * The JSON lines `rankdebug launch --json` prints on stdout, read incrementally.
 * No `vscode` import.
 */

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
export interface ExitedEvent {
    event: 'exited';
    code: number;
}
export interface ErrorEvent {
    event: 'error';
    message: string;
}
export type LaunchEvent = JobEvent | ListeningEvent | AttachedEvent | ExitedEvent | ErrorEvent;

type Fields = Record<string, unknown>;

/** Each event's reader: the event when its fields are well-typed, else undefined. */
const READERS: Record<string, (v: Fields) => LaunchEvent | undefined> = {
    job: (v) => (typeof v.job === 'string' ? (v as unknown as JobEvent) : undefined),
    listening: (v) =>
        typeof v.rank === 'number' && typeof v.port === 'number' ? ({ ...v, host: typeof v.host === 'string' ? v.host : '127.0.0.1' } as ListeningEvent) : undefined,
    attached: (v) => (typeof v.rank === 'number' ? (v as unknown as AttachedEvent) : undefined),
    exited: (v) => ({ event: 'exited', code: typeof v.code === 'number' ? v.code : 1 }),
};

/** `{"error": {...}}` (the CLI's error envelope) as an `error` event. */
function errorEvent(error: object): ErrorEvent {
    const message = (error as Fields).message;
    return { event: 'error', message: typeof message === 'string' ? message : JSON.stringify(error) };
}

/** Turns one stdout line into an event; undefined for anything else. */
export function parseEvent(line: string): LaunchEvent | undefined {
    const text = line.trim();
    if (!text.startsWith('{')) return undefined;
    let value: unknown;
    try {
        value = JSON.parse(text);
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
