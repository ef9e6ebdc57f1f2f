/**
 * What a command was invoked on, from its arguments: Training Jobs rows (the clicked row, then
 * the multi-selection), a Call Stack item (VS Code passes the session's id, a thread id or a
 * frame's source, then `{sessionId, threadId?, frameId?}`), or an editor's line number
 * (`{lineNumber, uri}`). No `vscode` import.
 */

/** A Training Jobs row as commands receive it (jobsView.ts `JobNode`). */
export interface RowArg {
    kind: 'job' | 'group' | 'rank';
    job: { id: string };
}

export function isRowArg(value: unknown): value is RowArg {
    if (typeof value !== 'object' || value === null) return false;
    const v = value as Record<string, unknown>;
    const job = v.job as Record<string, unknown> | undefined;
    return (v.kind === 'job' || v.kind === 'group' || v.kind === 'rank') && typeof job === 'object' && job !== null && typeof job.id === 'string';
}

/** The rows a view command acts on: the multi-selection when the clicked row is in it, else the clicked row. */
export function rowsOf<T extends RowArg>(args: readonly unknown[]): T[] {
    const [clicked, selection] = args;
    if (!isRowArg(clicked)) return [];
    const selected = Array.isArray(selection) ? selection.filter(isRowArg) : [];
    return (selected.includes(clicked) ? selected : [clicked]) as T[];
}

/** The debug session a Call Stack item belongs to, when the arguments name one. */
export function sessionIdOf(args: readonly unknown[], isSession: (id: string) => boolean): string | undefined {
    for (const a of args) {
        if (typeof a === 'object' && a !== null && typeof (a as Record<string, unknown>).sessionId === 'string') return (a as Record<string, string>).sessionId;
    }
    const first = args[0];
    return typeof first === 'string' && isSession(first) ? first : undefined;
}

/** `{lineNumber, uri}` from the editor's line-number menu (1-based line). */
export function lineArg(args: readonly unknown[]): { lineNumber: number; uri: unknown } | undefined {
    const first = args[0];
    if (typeof first !== 'object' || first === null) return undefined;
    const v = first as Record<string, unknown>;
    return typeof v.lineNumber === 'number' && v.uri !== undefined ? { lineNumber: v.lineNumber, uri: v.uri } : undefined;
}
