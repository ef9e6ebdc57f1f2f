/**
 * Breakpoints bound to ranks: the job's gates read a breakpoint condition `ranks SPEC` (or
 * `ranks SPEC and EXPR`) as "only ranks in SPEC stop here" (and, for them, EXPR is the
 * condition). These functions read and rewrite such conditions; SPEC itself is the rank
 * grammar's (checked by the language server). No `vscode` import.
 */

/** `ranks 1,3`, `ranks 0-3,8 and step > 10`, `ranks local0`: a spec has no spaces. */
const BOUND = /^\s*ranks\s+([\w,-]+)(?:\s+and\s+([\s\S]*?))?\s*$/;

export interface RankCondition {
    /** The ranks the breakpoint is bound to; undefined when it is not bound. */
    spec?: string;
    /** The condition besides the binding (the whole condition of an unbound breakpoint). */
    rest?: string;
}

/** Reads a breakpoint's condition. */
export function readCondition(condition: string | undefined): RankCondition {
    const text = condition?.trim();
    if (!text) return {};
    const m = BOUND.exec(text);
    if (!m) return { rest: text };
    const rest = m[2]?.trim();
    return rest ? { spec: m[1], rest } : { spec: m[1] };
}

/**
 * The condition of a breakpoint bound to `spec`, keeping the old condition's own expression
 * (`ranks SPEC and OLD`) and replacing an old binding; an empty `spec` removes the binding.
 * Undefined: no condition left.
 */
export function bindCondition(old: string | undefined, spec: string): string | undefined {
    const { rest } = readCondition(old);
    const ranks = spec.replace(/\s+/g, '');
    if (!ranks) return rest;
    return rest ? `ranks ${ranks} and ${rest}` : `ranks ${ranks}`;
}
