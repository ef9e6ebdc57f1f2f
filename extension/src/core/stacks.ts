/**
 * `rankdebug stacks JOB --json` → the Show Stacks panel's model: one column per group of
 * ranks with the same stack (main threads first), frames innermost first and marked user or
 * library, ranks that could not be read listed apart. The answer is read through the names
 * declared in pyserver/rankdebug/protocol/stacks.py (generated types), so tsc refuses a name it
 * lacks. No `vscode` import.
 */
import type { AnswerJson, FrameJson, GroupJson, MismatchJson, NodeJson, RankJson } from './generated/stacksAnswer';
import type { Raw } from './raw';

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
    /** The collective each rank is at with its number (`all_reduce #6`), from `collectives.current`; null when none says. */
    current: string | null;
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

/** One node of the merged tree of the main threads (outermost frame at the root). */
export interface TreeNodeView {
    /** Preorder index in StacksView.nodes: what the page posts back. */
    id: number;
    frame: FrameView;
    count: number;
    /** Rank numbers; a negative one is -pid of a process with no rank. */
    ranks: number[];
    /** Every rank of the node is an odd one out (the branch where they went apart). */
    odd: boolean;
    children: TreeNodeView[];
}

/** A process group whose ranks are at different collectives. */
export interface CollectiveMismatch {
    group: string;
    desc: string | null;
    odd: number[];
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
    /** The merged tree's roots, largest branch first. */
    tree: TreeNodeView[];
    /** Every node of the tree in preorder (`nodes[n.id] === n`). */
    nodes: TreeNodeView[];
    /** Ranks in the tree (the count badges' denominator). */
    treeTotal: number;
    /** Ranks the CLI calls odd (stacks apart over its samples, or past/behind in a collective). */
    odd: number[];
    collectives: CollectiveMismatch[];
}

/** What a rank's handler says of itself (its `collectives`): the rank's words, not declared. */
type Obj = Record<string, unknown>;
const obj = <T = Obj>(v: unknown): Raw<T> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw<T>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);

function frame(v: unknown): FrameView {
    const f = obj<FrameJson>(v);
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

/** `0-2,4`: sorted distinct numbers, each run of consecutive ones as `first-last`. */
function ranges(known: readonly number[]): string {
    const parts: string[] = [];
    for (let i = 0; i < known.length; ) {
        let j = i;
        while (j + 1 < known.length && known[j + 1] === known[j] + 1) j++;
        parts.push(i === j ? String(known[i]) : `${known[i]}-${known[j]}`);
        i = j + 1;
    }
    return parts.join(',');
}

/** `ranks 0-2,4` / `rank 3` / `pid 123` (as the CLI labels groups). */
export function ranksLabel(ranks: (number | null)[], pids: number[]): string {
    const known = [...new Set(ranks.filter((r): r is number => r !== null))].sort((a, b) => a - b);
    const unknown = pids.filter((_p, i) => ranks[i] === null || ranks[i] === undefined).map((p) => `pid ${p}`);
    const head = known.length ? `${known.length === 1 ? 'rank' : 'ranks'} ${ranges(known)}` : '';
    return [head, ...unknown].filter(Boolean).join(', ') || '?';
}

/** `0-2,4` (and `pid 123` for a negative -pid): the ranks of a tree node, compact. */
export function compactRanks(ranks: readonly number[]): string {
    const known = [...new Set(ranks.filter((r) => r >= 0))].sort((a, b) => a - b);
    const pids = [...new Set(ranks.filter((r) => r < 0))].map((r) => `pid ${-r}`);
    return [ranges(known), ...pids].filter(Boolean).join(', ');
}

/** The ranks a `3`, `0-2`, `0,1,4-5` list names. */
export function parseRankList(text: string): number[] {
    const out: number[] = [];
    for (const part of text.split(',')) {
        const m = /^\s*(\d+)(?:\s*-\s*(\d+))?\s*$/.exec(part);
        if (!m) continue;
        const a = Number(m[1]);
        const b = m[2] === undefined ? a : Number(m[2]);
        for (let r = a; r <= b && r - a < 100000; r++) out.push(r);
    }
    return out;
}

function ints(v: unknown): number[] {
    return arr(v)
        .map((x) => num(x))
        .filter((x): x is number => x !== null && Number.isInteger(x));
}

/** `all_reduce #6` from a rank's `collectives.current`, or null. */
function currentOf(rank: Raw<RankJson>): string | null {
    const cur = obj(obj(rank.collectives).current);
    const op = str(cur.op);
    if (!op) return null;
    return collectiveText({ op, seq: num(cur.seq) });
}

/** `all_reduce #6`, or `all_reduce` when its number is unknown (also the diagnosis'). */
export function collectiveText(c: { op: string | null; seq: number | null }): string {
    if (!c.op) return c.seq !== null ? `#${c.seq}` : '';
    return c.seq !== null ? `${c.op} #${c.seq}` : c.op;
}

/** One label for the ranks of a column: `all_reduce #6`, or `all_reduce #6 (0,1); #5 (2)` when they differ. */
function columnCurrent(ranks: (number | null)[], current: Map<number, string>): string | null {
    const by = new Map<string, number[]>();
    for (const r of ranks) {
        if (r === null) continue;
        const c = current.get(r);
        if (c === undefined) continue;
        by.set(c, [...(by.get(c) ?? []), r]);
    }
    if (!by.size) return null;
    if (by.size === 1) return [...by.keys()][0];
    return [...by.entries()].map(([c, rs]) => `${c} (${compactRanks(rs)})`).join('; ');
}

function toTree(roots: unknown, odd: ReadonlySet<number>): { tree: TreeNodeView[]; nodes: TreeNodeView[] } {
    const nodes: TreeNodeView[] = [];
    const walk = (v: unknown, depth: number): TreeNodeView => {
        const n = obj<NodeJson>(v);
        const ranks = ints(n.ranks);
        const node: TreeNodeView = {
            id: nodes.length,
            frame: frame(n),
            count: num(n.count) ?? ranks.length,
            ranks,
            odd: ranks.length > 0 && odd.size > 0 && ranks.every((r) => odd.has(r)),
            children: [],
        };
        nodes.push(node);
        // Deep recursion from a hostile answer stops at a depth no Python stack reaches.
        if (depth < 2000) node.children = arr(n.children).map((c) => walk(c, depth + 1));
        return node;
    };
    const tree = arr(roots).map((r) => walk(r, 0));
    return { tree, nodes };
}

/**
 * The panel's model from the decoded `rankdebug stacks --json` answer.
 * Steps: groups become columns (main-thread groups first, the CLI's order kept within);
 * frames keep the CLI's order (innermost first); ranks with an `error` are listed apart.
 */
export function toStacksView(answer: unknown): StacksView {
    const a = obj<AnswerJson>(answer);
    const ranks = arr(a.ranks).map((r) => obj<RankJson>(r));
    const errors: RankError[] = ranks
        .filter((r) => typeof r.error === 'string' && r.error)
        .map((r) => {
            const rank = num(r.rank);
            const pid = num(r.pid);
            return { label: rank === null ? `pid ${pid ?? '?'}` : `rank ${rank}`, pid, message: str(r.error) };
        });
    const current = new Map<number, string>();
    for (const r of ranks) {
        const rank = num(r.rank);
        const c = currentOf(r);
        if (rank !== null && c !== null) current.set(rank, c);
    }
    const collectives: CollectiveMismatch[] = arr(a.collectives).map((c0) => {
        const c = obj<MismatchJson>(c0);
        return { group: str(c.group), desc: typeof c.desc === 'string' && c.desc ? c.desc : null, odd: ints(c.odd), message: str(c.message) };
    });
    const odd = [...new Set([...ints(a.odd), ...collectives.flatMap((c) => c.odd)])].sort((x, y) => x - y);
    const { tree, nodes } = toTree(a.tree, new Set(odd));
    const columns: ColumnView[] = arr(a.groups).map((g0) => {
        const g = obj<GroupJson>(g0);
        const ranksOf = arr(g.ranks).map((r) => num(r));
        const pids = arr(g.pids).map((p) => num(p) ?? 0);
        return {
            label: str(g.label) || ranksLabel(ranksOf, pids),
            thread: str(g.thread, 'MainThread'),
            main: g.main !== false,
            summary: str(g.summary),
            collective: typeof g.collective === 'string' && g.collective ? g.collective : null,
            current: g.main !== false ? columnCurrent(ranksOf, current) : null,
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
        tree,
        nodes,
        treeTotal: tree.reduce((s, n) => s + n.count, 0),
        odd,
        collectives,
    };
}

/** A class of ranks (the same stack) and the rank that stands for it. */
export interface ClassRep {
    /** The representative: the odd one when the class holds one, else the lowest rank. */
    rank: number;
    /** How many other ranks it stands for (`rank 3 · 252 like it`). */
    others: number;
    /** Whether the representative is an odd one out. */
    odd: boolean;
}

/** The representative of these ranks: the lowest odd one, else the lowest; null when none is a rank. */
export function classRep(ranks: readonly (number | null)[], odd: readonly number[]): ClassRep | null {
    const known = [...new Set(ranks.filter((r): r is number => r !== null && r >= 0))].sort((a, b) => a - b);
    if (!known.length) return null;
    const oddSet = new Set(odd);
    const oddOne = known.find((r) => oddSet.has(r));
    return { rank: oddOne ?? known[0], others: known.length - 1, odd: oddOne !== undefined };
}

/**
 * One representative per class of the main threads (a column of the view): odd classes first,
 * then the larger ones, then by rank; a column with no rank number (a process with no RANK) has none.
 */
export function stackClasses(view: Pick<StacksView, 'columns' | 'odd'>): ClassRep[] {
    const reps = view.columns.filter((c) => c.main).flatMap((c) => classRep(c.ranks, view.odd) ?? []);
    const seen = new Set<number>();
    return reps
        .filter((r) => !seen.has(r.rank) && seen.add(r.rank))
        .sort((a, b) => Number(b.odd) - Number(a.odd) || b.others - a.others || a.rank - b.rank);
}
