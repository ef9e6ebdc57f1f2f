/**
 * Reading what `rankdebug diagnose JOB --json` prints (shared/design.md "Wave 3 contracts"):
 * `class` lines (largest first), `rank` and `collectives` lines, `culprit` lines or one
 * `healthy`, and `done` last. The model the Why Is This Job Stuck? panel shows: the classes
 * with the culprit's marked and a representative rank each, the findings, the collectives
 * table (per process group, where each class is), and the ranks read or not. Lines of other
 * events are skipped; a field of the wrong type is read as missing. No `vscode` import.
 */
import { collectiveText, compactRanks } from './stacks';

export type ClassState = 'waiting' | 'running' | 'stuck' | 'exited' | 'raised' | 'unknown';
const STATES: readonly ClassState[] = ['waiting', 'running', 'stuck', 'exited', 'raised', 'unknown'];

/** A place in code; any part may be unknown (a rank with no stack). */
export interface Place {
    file: string | null;
    line: number | null;
    function: string | null;
}

export interface Collective {
    op: string;
    seq: number | null;
    group: string;
}

export interface DiagClass {
    ranks: number[];
    state: ClassState;
    collective: Collective | null;
    where: Place | null;
    /** Innermost first. */
    frames: Place[];
    /** A culprit names one of its ranks. */
    culprit: boolean;
    /** The rank that stands for the class (a culprit rank where there is one, else its lowest); null when none is known. */
    representative: number | null;
}

export interface Finding {
    ranks: number[];
    why: string;
    where: Place | null;
}

/** One process group's row of the collectives table: where each class is in it. */
export interface GroupRow {
    group: string;
    desc: string | null;
    /** Per class (same order as `classes`): `all_reduce #6`, `#5` (the last issued), or null when unknown. */
    cells: (string | null)[];
    /** Classes stand at different places in this group. */
    differs: boolean;
}

export interface Unread {
    rank: number | null;
    reason: string;
}

export interface DiagnoseView {
    classes: DiagClass[];
    findings: Finding[];
    /** The `healthy` line's sentence (then there is no finding). */
    healthy: string | null;
    groups: GroupRow[];
    seconds: number | null;
    ranksRead: number;
    unread: Unread[];
}

/** The CLI's answer cannot make a panel: no `done` line, or an error in its lines. */
export class DiagnoseError extends Error {
    constructor(message: string) {
        super(message);
        this.name = 'DiagnoseError';
    }
}

type Fields = Record<string, unknown>;

const obj = (v: unknown): Fields | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : undefined);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The integer ranks of a list, in order, each once. */
function rankList(v: unknown): number[] {
    if (!Array.isArray(v)) return [];
    return [...new Set(v.filter((r): r is number => int(r) !== null && (r as number) >= 0))];
}

function place(v: unknown): Place | null {
    const o = obj(v);
    if (!o) return null;
    const p = { file: str(o.file), line: int(o.line), function: str(o.function) };
    return p.file === null && p.line === null && p.function === null ? null : p;
}

function collective(v: unknown): Collective | null {
    const o = obj(v);
    const op = o ? str(o.op) : null;
    if (!o || !op) return null;
    return { op, seq: int(o.seq), group: str(o.group) ?? (int(o.group) !== null ? String(o.group) : '0') };
}

export { collectiveText };

/** `train.py:46` of a place (its file's last part), '' when it has no file. */
export function shortPlace(p: Place | null): string {
    if (!p?.file) return '';
    const name = p.file.split(/[\\/]/).pop() ?? p.file;
    return p.line !== null ? `${name}:${p.line}` : name;
}

/** `rank 3` / `ranks 0-2,5`. */
export function ranksText(ranks: readonly number[]): string {
    return `${ranks.length === 1 ? 'rank' : 'ranks'} ${compactRanks(ranks)}`;
}

/** A place that can be opened in an editor: an absolute file (not `<string>`) and a line. */
export function openable(p: Place | null): p is Place & { file: string; line: number } {
    return Boolean(p?.file && p.line !== null && p.line > 0 && (p.file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p.file)));
}

interface Position {
    ranks: number[];
    op: string | null;
    seq: number | null;
}

/** Where each class stands in each group: from the `collectives` lines when there are some, else the classes' own collective. */
function groupRows(classes: DiagClass[], collectives: Fields[]): GroupRow[] {
    const rows: GroupRow[] = [];
    const cellOf = (positions: Position[], cls: DiagClass): string | null => {
        const seen = new Set<string>();
        for (const p of positions) {
            if (p.ranks.some((r) => cls.ranks.includes(r))) seen.add(collectiveText(p));
        }
        return seen.size ? [...seen].join(' / ') : null;
    };
    const add = (group: string, desc: string | null, cells: (string | null)[]): void => {
        const known = new Set(cells.filter((c): c is string => c !== null));
        rows.push({ group, desc, cells, differs: known.size > 1 });
    };
    if (collectives.length) {
        for (const c of collectives) {
            const group = str(c.group) ?? '?';
            const positions: Position[] = (Array.isArray(c.positions) ? c.positions : [])
                .map(obj)
                .filter((p): p is Fields => p !== undefined)
                .map((p) => ({ ranks: rankList(p.ranks), op: str(p.op), seq: int(p.seq) }));
            add(group, str(c.desc), classes.map((cls) => cellOf(positions, cls)));
        }
        return rows;
    }
    const groups = [...new Set(classes.flatMap((c) => (c.collective ? [c.collective.group] : [])))];
    groups.sort((a, b) => a.length - b.length || a.localeCompare(b));
    for (const g of groups) add(g, null, classes.map((c) => (c.collective?.group === g ? collectiveText(c.collective) : null)));
    return rows;
}

function readClass(line: Fields): DiagClass {
    const state = STATES.find((s) => s === line.state) ?? 'unknown';
    const frames = (Array.isArray(line.frames) ? line.frames : []).map(place).filter((p): p is Place => p !== null);
    return { ranks: rankList(line.ranks), state, collective: collective(line.collective), where: place(line.where), frames, culprit: false, representative: null };
}

function readUnread(v: unknown): Unread[] {
    return (Array.isArray(v) ? v : [])
        .map(obj)
        .filter((u): u is Fields => u !== undefined)
        .map((u) => ({ rank: int(u.rank), reason: str(u.reason) ?? '' }));
}

/** Each class a finding names a rank of is marked; its representative is that rank (else the class's lowest). */
function markCulprits(classes: DiagClass[], findings: Finding[]): void {
    const blamed = new Set(findings.flatMap((f) => f.ranks));
    for (const c of classes) {
        const mine = c.ranks.filter((r) => blamed.has(r));
        c.culprit = mine.length > 0;
        c.representative = mine[0] ?? c.ranks.reduce<number | null>((lo, r) => (lo === null || r < lo ? r : lo), null);
    }
}

/**
 * The panel's model from the CLI's JSON lines.
 * Steps: an `error` object anywhere → DiagnoseError with its message; `class`, `culprit`,
 * `healthy`, `collectives` and `done` lines read (the rest skipped); no `done` line →
 * DiagnoseError (the run was cut short); the culprit's classes marked, a representative per class.
 */
export function readDiagnose(lines: readonly Record<string, unknown>[]): DiagnoseView {
    const classes: DiagClass[] = [];
    const findings: Finding[] = [];
    const collectives: Fields[] = [];
    let healthy: string | null = null;
    let done: Fields | undefined;
    for (const line of lines) {
        const error = obj(line.error);
        if (error) throw new DiagnoseError(str(error.message) ?? JSON.stringify(error));
        switch (line.event) {
            case 'class':
                classes.push(readClass(line));
                break;
            case 'culprit':
                findings.push({ ranks: rankList(line.ranks), why: str(line.why) ?? '', where: place(line.where) });
                break;
            case 'healthy':
                healthy = str(line.why) ?? '';
                break;
            case 'collectives':
                collectives.push(line);
                break;
            case 'done':
                done = line;
                break;
            default:
                break;
        }
    }
    if (!done) throw new DiagnoseError('rankdebug diagnose ended without its last line (done)');
    markCulprits(classes, findings);
    return { classes, findings, healthy, groups: groupRows(classes, collectives), seconds: num(done.seconds), ranksRead: int(done.ranks_read) ?? 0, unread: readUnread(done.ranks_unread) };
}

/** The rank *Debug culprit* opens: the first finding's first rank; null when there is none. */
export function culpritRank(view: DiagnoseView): number | null {
    return view.findings.find((f) => f.ranks.length)?.ranks[0] ?? null;
}

/** One rank per class (its representative), largest class first, with how many others it stands for. */
export function representatives(view: DiagnoseView): { rank: number; others: number; cls: number }[] {
    const out: { rank: number; others: number; cls: number }[] = [];
    view.classes.forEach((c, i) => {
        if (c.representative !== null && !out.some((o) => o.rank === c.representative)) out.push({ rank: c.representative, others: c.ranks.length - 1, cls: i });
    });
    return out;
}

/**
 * The frame the value of *Compare across classes* is read in: the culprit's function when it
 * has a plain name (not `<module>`), else none (each rank's own innermost user frame).
 */
export function compareFrame(view: DiagnoseView): string | undefined {
    const fn = view.findings.find((f) => f.where?.function)?.where?.function;
    return fn && /^[A-Za-z_][\w.]*$/.test(fn) ? fn : undefined;
}
