/**
 * `rankdebug stacks JOB --json` → the Show Stacks panel's model: one column per group of
 * ranks with the same stack (main threads first), frames innermost first and marked user or
 * library, ranks that could not be read listed apart. No `vscode` import.
 */

export interface FrameView {
    name: string;
    file: string;
    line: number;
    /** `train.py:30`, `torch/distributed/distributed_c10d.py:2501`. */
    short: string;
    /** In site-packages, the standard library or frozen: shown dimmed. */
    library: boolean;
    /** An absolute file path and a line: a click opens it. */
    openable: boolean;
}

export interface ColumnView {
    /** `ranks 0-2`, `rank 3`, `pid 123`. */
    label: string;
    thread: string;
    main: boolean;
    /** `all_reduce ← train_step ← main`. */
    summary: string;
    /** The collective the ranks wait in, or null. */
    collective: string | null;
    odd: boolean;
    active: boolean;
    ranks: (number | null)[];
    pids: number[];
    frames: FrameView[];
}

export interface RankError {
    label: string;
    pid: number | null;
    message: string;
}

export interface StacksView {
    job: string | null;
    /** Seconds since the epoch when the stacks were taken. */
    time: number | null;
    seconds: number | null;
    read: number;
    total: number;
    columns: ColumnView[];
    errors: RankError[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);

function frame(v: unknown): FrameView {
    const f = obj(v);
    const file = str(f.file);
    const line = num(f.line) ?? 0;
    return {
        name: str(f.name, '?'),
        file,
        line,
        // The CLI tells library frames (site-packages, the standard library) and their short place.
        short: str(f.short, `${file}:${line}`),
        library: f.library === true,
        openable: (file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file)) && line > 0,
    };
}

/** `ranks 0-2,4` / `rank 3` / `pid 123` (as the CLI labels groups). */
export function ranksLabel(ranks: (number | null)[], pids: number[]): string {
    const known = [...new Set(ranks.filter((r): r is number => r !== null))].sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < known.length; ) {
        let j = i;
        while (j + 1 < known.length && known[j + 1] === known[j] + 1) j++;
        parts.push(i === j ? String(known[i]) : `${known[i]}-${known[j]}`);
        i = j + 1;
    }
    const unknown = pids.filter((_p, i) => ranks[i] === null || ranks[i] === undefined).map((p) => `pid ${p}`);
    const head = known.length ? `${known.length === 1 ? 'rank' : 'ranks'} ${parts.join(',')}` : '';
    return [head, ...unknown].filter(Boolean).join(', ') || '?';
}

/**
 * The panel's model from the decoded `rankdebug stacks --json` answer.
 * Steps: groups become columns (main-thread groups first, the CLI's order kept within);
 * frames keep the CLI's order (innermost first); ranks with an `error` are listed apart.
 */
export function toStacksView(answer: unknown): StacksView {
    const a = obj(answer);
    const ranks = arr(a.ranks).map(obj);
    const errors: RankError[] = ranks
        .filter((r) => typeof r.error === 'string' && r.error)
        .map((r) => {
            const rank = num(r.rank);
            const pid = num(r.pid);
            return { label: rank === null ? `pid ${pid ?? '?'}` : `rank ${rank}`, pid, message: str(r.error) };
        });
    const columns: ColumnView[] = arr(a.groups).map((g0) => {
        const g = obj(g0);
        const ranksOf = arr(g.ranks).map((r) => num(r));
        const pids = arr(g.pids).map((p) => num(p) ?? 0);
        return {
            label: str(g.label) || ranksLabel(ranksOf, pids),
            thread: str(g.thread, 'MainThread'),
            main: g.main !== false,
            summary: str(g.summary),
            collective: typeof g.collective === 'string' && g.collective ? g.collective : null,
            odd: g.odd === true,
            active: g.active === true,
            ranks: ranksOf,
            pids,
            frames: arr(g.frames).map(frame),
        };
    });
    columns.sort((x, y) => Number(y.main) - Number(x.main));
    return {
        job: typeof a.job === 'string' ? a.job : null,
        time: num(a.time),
        seconds: num(a.seconds),
        read: ranks.length - errors.length,
        total: ranks.length,
        columns,
        errors,
    };
}
