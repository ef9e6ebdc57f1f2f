/**
 * Compare Across Ranks: what `rankdebug eval JOB RANKS CODE --json` prints, as the panel's
 * model. One line per rank (`result` with `text`, `type`, `summary` for tensors and arrays,
 * `number` for scalars, `output`; or `error` with `message`), then one `compare` line with
 * the groups of ranks holding equal values, the largest first; a tensor group that differs
 * from the largest says where (`differs`). Also the panel's words for a value, a group and a
 * difference, and the series of the sparklines (a scalar against rank: the number itself, or a
 * tensor's mean and norm; NaN and Inf marked). The lines are read through the names declared
 * in pyserver/rankdebug/protocol/eval.py (generated types). No `vscode` import.
 */
import type { CompareEval, ErrorEval, GroupEval, ResultEval } from './generated/evalLines';
import type { Localize } from './localize';
import { formatSpec } from './ranks';
import type { Raw } from './raw';

export interface TensorSummary {
    shape: number[];
    dtype: string;
    device: string | null;
    numel: number | null;
    /** Over the finite elements; null when there is none. */
    min: number | null;
    max: number | null;
    mean: number | null;
    norm: number | null;
    nan: number;
    inf: number;
    checksum: string | null;
}

/** A rank's answer: its value, or why it has none. */
export type RankAnswer =
    | { rank: number; ok: true; pid: number | null; text: string; type: string | null; summary: TensorSummary | null; output: string; number: number | null }
    | { rank: number; ok: false; message: string; line: number | null };

/** Where a tensor group differs from the largest group's (flat indices; `at` the first, per dimension). */
export interface Differs {
    from: number;
    first: number | null;
    last: number | null;
    at: number[] | null;
    /** False when the search stopped before single elements (first/last are then bounds). */
    exact: boolean;
}

export interface ValueGroup {
    ranks: number[];
    /** The value's text (its repr) as the group's first rank gave it. */
    text: string;
    checksum: string | null;
    differs: Differs | null;
    /** A smaller group than the largest: the odd ones out (of its set, within a dimension). */
    odd: boolean;
    /** Compared within a dimension (`eval --per dp`): the set it belongs to, `dp=0`. */
    per?: string;
}

export interface SparkPoint {
    rank: number;
    /** The value; null where the rank has none (an error, or no finite element). */
    value: number | null;
    /** NaN or Inf: the rank's value itself, or elements of its tensor. */
    bad: boolean;
    odd: boolean;
}

export interface Sparkline {
    /** `value`, `mean`, `norm`. */
    metric: 'value' | 'mean' | 'norm';
    points: SparkPoint[];
}

export interface CompareView {
    expr: string;
    job: string | null;
    /** Every rank asked, in rank order. */
    ranks: RankAnswer[];
    /** Largest first (the CLI's order). */
    groups: ValueGroup[];
    /** Ranks of the smaller groups. */
    odd: number[];
    sparklines: Sparkline[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const ints = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number' && Number.isInteger(x)) : []);

/** A scalar as the CLI gives it: a JSON number, a bool, or "nan" / "inf" / "-inf". */
export function scalar(v: unknown): number | null {
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v === 'number') return v;
    if (v === 'nan') return NaN;
    if (v === 'inf') return Infinity;
    if (v === '-inf') return -Infinity;
    return null;
}

function readSummary(v: unknown): TensorSummary | null {
    if (typeof v !== 'object' || v === null) return null;
    const s = obj(v);
    return {
        shape: ints(s.shape),
        dtype: str(s.dtype) ?? '?',
        device: str(s.device),
        numel: int(s.numel),
        min: num(s.min),
        max: num(s.max),
        mean: num(s.mean),
        norm: num(s.norm),
        nan: int(s.nan) ?? 0,
        inf: int(s.inf) ?? 0,
        checksum: str(s.checksum),
    };
}

function readAnswer(line: Raw<ResultEval> & Raw<ErrorEval>): RankAnswer | undefined {
    const rank = int(line.rank);
    if (rank === null) return undefined;
    if (line.event === 'error') return { rank, ok: false, message: str(line.message) ?? '?', line: int(line.line) };
    if (line.event !== 'result') return undefined;
    return {
        rank,
        ok: true,
        pid: int(line.pid),
        text: str(line.text) ?? '',
        type: str(line.type),
        summary: readSummary(line.summary),
        output: str(line.output) ?? '',
        number: scalar(line.number),
    };
}

function readDiffers(v: unknown): Differs | null {
    if (typeof v !== 'object' || v === null) return null;
    const d = obj(v);
    const from = int(d.from);
    if (from === null) return null;
    return { from, first: int(d.first), last: int(d.last), at: Array.isArray(d.at) ? ints(d.at) : null, exact: d.exact !== false };
}

/**
 * The panel's model from every JSON line `rankdebug eval … --json` printed.
 * Steps: the rank lines (results and errors, by rank); the last `compare` line's groups, the
 * smaller ones odd (groups as large as the largest are not: no majority to be odd against);
 * the sparklines.
 */
export function readCompare(lines: readonly Record<string, unknown>[], expr: string): CompareView {
    const byRank = new Map<number, RankAnswer>();
    let job: string | null = null;
    let compare: Raw<CompareEval> | undefined;
    const sets: Raw<CompareEval>[] = [];
    for (const line of lines) {
        if (line.event === 'compare') compare = line;
        if (line.event === 'compare' && typeof line.per === 'object' && line.per !== null) sets.push(line);
        const answer = readAnswer(line);
        if (!answer) continue;
        byRank.set(answer.rank, answer);
        job ??= str(line.job);
    }
    // Within a dimension: one compare line per set of ranks, each its own majority.
    const groups = sets.length ? sets.flatMap((set) => readGroups(set, perLabel(set.per))) : compare ? readGroups(compare) : [];
    const odd = groups.filter((g) => g.odd).flatMap((g) => g.ranks);
    const ranks = [...byRank.values()].sort((a, b) => a.rank - b.rank);
    return { expr, job, ranks, groups, odd: odd.sort((a, b) => a - b), sparklines: sparklines(ranks, new Set(odd)) };
}

/** `dp=0`, `dp=0 pp=1`: a set's coordinates as `eval --per` names them. */
export function perLabel(per: unknown): string {
    return Object.entries(obj(per))
        .map(([k, v]) => `${k}=${typeof v === 'number' ? v : String(v)}`)
        .join(' ');
}

/** A compare line's groups, largest first; the smaller ones odd (none when no group is larger). */
function readGroups(compare: Raw<CompareEval>, per?: string): ValueGroup[] {
    const raw: Raw<GroupEval>[] = Array.isArray(compare.groups) ? compare.groups.map(obj) : [];
    const largest = raw.reduce((m, g) => Math.max(m, ints(g.ranks).length), 0);
    return raw
        .map((g) => ({
            ranks: [...ints(g.ranks)].sort((a, b) => a - b),
            text: str(g.text) ?? '',
            checksum: str(g.checksum),
            differs: readDiffers(g.differs),
            odd: ints(g.ranks).length < largest,
            ...(per !== undefined ? { per } : {}),
        }))
        .filter((g) => g.ranks.length > 0);
}

/**
 * The sparklines of the ranks' values: the number of each rank that has one (`value`), else
 * the mean and norm of each rank's tensor. A series needs two ranks with a point; a point is
 * bad when the value is NaN or Inf or the tensor holds one.
 */
export function sparklines(ranks: readonly RankAnswer[], odd: ReadonlySet<number> = new Set()): Sparkline[] {
    const out: Sparkline[] = [];
    const numbers = ranks.map((r) => (r.ok && r.number !== null ? r.number : undefined));
    if (numbers.filter((n) => n !== undefined).length >= 2) {
        out.push({
            metric: 'value',
            points: ranks.map((r, i) => {
                const n = numbers[i];
                return { rank: r.rank, value: n !== undefined && Number.isFinite(n) ? n : null, bad: n !== undefined && !Number.isFinite(n), odd: odd.has(r.rank) };
            }),
        });
        return out;
    }
    const tensors = ranks.filter((r) => r.ok && r.summary);
    if (tensors.length < 2) return out;
    for (const metric of ['mean', 'norm'] as const) {
        out.push({
            metric,
            points: ranks.map((r) => {
                const s = r.ok ? r.summary : null;
                return { rank: r.rank, value: s ? s[metric] : null, bad: s !== null && s.nan + s.inf > 0, odd: odd.has(r.rank) };
            }),
        });
    }
    return out;
}

/** A number short enough for a table cell: 6 significant digits (or `digits`). */
export function shortNumber(x: number | null, digits = 6): string {
    if (x === null) return '–';
    if (Number.isNaN(x)) return 'nan';
    if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
    const s = x.toPrecision(digits);
    // 1.00000e-3 → 1e-3, 0.500000 → 0.5
    return s.includes('e') ? s.replace(/\.?0+e/, 'e').replace('e+', 'e') : s.replace(/\.?0+$/, '');
}

/** `lo … hi` with as many digits as it takes to tell them apart (6 to 12): `63.57162 … 63.57163`. */
export function rangeText(lo: number, hi: number): string {
    let digits = 6;
    while (digits < 12 && lo !== hi && shortNumber(lo, digits) === shortNumber(hi, digits)) digits++;
    return `${shortNumber(lo, digits)} … ${shortNumber(hi, digits)}`;
}

/** `[64, 64] torch.float32`. */
export function tensorHead(s: TensorSummary): string {
    return `[${s.shape.join(', ')}] ${s.dtype}`;
}

/** The first line of a value's text, cut at `width` characters. */
export function firstLine(text: string, width = 80): string {
    const lines = text.split('\n');
    const line = lines[0] ?? '';
    if (line.length > width) return `${line.slice(0, width - 1)}…`;
    return lines.length > 1 && text.trim().includes('\n') ? `${line} …` : line;
}

/** `rank 2`, `ranks 0,1,3`, `ranks 0-7`. */
export function ranksText(ranks: readonly number[]): string {
    return `${ranks.length === 1 ? 'rank' : 'ranks'} ${formatSpec(ranks)}`;
}

/**
 * Where a group differs, in words: `differs from rank 0 at element 1234 [19, 18]`; a span
 * `at elements 10..2000 (first [0, 10])`; `within elements 10..20` when the search stopped
 * before single elements.
 */
export function differsText(d: Differs, l10n: Localize): string {
    if (d.first === null) return l10n.t('differs from rank {0}', d.from);
    const last = d.last ?? d.first;
    // The search stopped before single elements: first and last bound the differing ones.
    if (!d.exact) return l10n.t('differs from rank {0} within elements {1}..{2}', d.from, d.first, last);
    const at = d.at?.length ? ` [${d.at.join(', ')}]` : '';
    if (last === d.first) return l10n.t('differs from rank {0} at element {1}', d.from, `${d.first}${at}`);
    return l10n.t('differs from rank {0} at elements {1}..{2} (first{3})', d.from, d.first, last, at);
}

/** The group each rank is in (index into `groups`). */
export function groupIndex(view: Pick<CompareView, 'groups'>): Map<number, number> {
    const out = new Map<number, number>();
    view.groups.forEach((g, i) => g.ranks.forEach((r) => out.set(r, i)));
    return out;
}

/** `A`, `B`, … `Z`, `AA`: the group's letter in the table. */
export function groupLetter(index: number): string {
    let s = '';
    let i = index;
    do {
        s = String.fromCharCode(65 + (i % 26)) + s;
        i = Math.floor(i / 26) - 1;
    } while (i >= 0);
    return s;
}

/** A tolerance as typed: empty → none; else a number ≥ 0 (`1e-3`), or undefined when it is not one. */
export function parseTolerance(text: string): { tolerance: number | null } | undefined {
    const t = text.trim();
    if (!t) return { tolerance: null };
    if (!/^[+]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
    const x = Number(t);
    return Number.isFinite(x) && x >= 0 ? { tolerance: x } : undefined;
}

/** The function name of a DAP stack frame's name (debugpy: `main`, `Trainer.step`, `f (Current frame)`), for `--function`. */
export function functionOfFrame(name: string | undefined): string | undefined {
    const m = /^\s*([\w<>.]+)/.exec(name ?? '');
    if (!m) return undefined;
    const last = m[1].split('.').pop();
    return last || undefined;
}
