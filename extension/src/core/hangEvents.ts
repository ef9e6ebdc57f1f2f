/**
 * The hang watch's lines of `rankdebug launch --json`: `{"event": "hang", "job", "seconds",
 * "why", "culprits": [{"ranks", "why", "where": {"file", "line", "function"} | null}]}` when
 * no rank has made progress for `rankdebug.hangSeconds`, and `{"event": "hang_over", "job",
 * "seconds"}` when the job moves on. Read as core/events.ts reads the others, against the
 * backend's declarations (pyserver/rankdebug/protocol/launch.py → generated/launchEvents.ts):
 * a field read here that the backend does not declare fails `tsc`. No `vscode` import.
 */
import type { Place } from './diagnose';
import type * as Wire from './generated/launchEvents';

export interface HangCulprit {
    ranks: number[];
    why: string;
    where: Place | null;
}

export interface HangEvent {
    event: 'hang';
    job: string | null;
    seconds: number | null;
    why: string;
    culprits: HangCulprit[];
}

export interface HangOverEvent {
    event: 'hang_over';
    job: string | null;
    seconds: number | null;
}

type Within<A, B> = [Exclude<A, B>] extends [never] ? true : false;
type Holds<T extends true> = T;
export type HangWireAgreement = [Holds<Within<keyof HangEvent, keyof Wire.HangWire>>, Holds<Within<keyof HangOverEvent, keyof Wire.HangOverWire>>];

type Fields = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Fields | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : undefined);

function culprit(v: unknown): HangCulprit | undefined {
    const o = obj(v);
    if (!o) return undefined;
    const ranks = Array.isArray(o.ranks) ? [...new Set(o.ranks.filter((r): r is number => int(r) !== null && (r as number) >= 0))] : [];
    const w = obj(o.where);
    const where = w ? { file: str(w.file), line: int(w.line), function: str(w.function) } : null;
    return { ranks, why: str(o.why) ?? '', where };
}

/** A `hang` or `hang_over` line as its event; undefined for any other line. */
export function parseHangEvent(line: string): HangEvent | HangOverEvent | undefined {
    const trimmed = line.trim();
    // Cheap first: most lines are the job's own output or other events.
    if (!trimmed.startsWith('{') || !trimmed.includes('"hang')) return undefined;
    let v: Fields | undefined;
    try {
        v = obj(JSON.parse(trimmed));
    } catch {
        return undefined;
    }
    if (!v) return undefined;
    const job = str(v.job) ?? (int(v.job) !== null ? String(v.job) : null);
    if (v.event === 'hang_over') return { event: 'hang_over', job, seconds: num(v.seconds) };
    if (v.event !== 'hang') return undefined;
    const culprits = (Array.isArray(v.culprits) ? v.culprits : []).map(culprit).filter((c): c is HangCulprit => c !== undefined);
    return { event: 'hang', job, seconds: num(v.seconds), why: str(v.why) ?? '', culprits };
}
