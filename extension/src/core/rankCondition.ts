/**
 * Breakpoints bound to ranks: the job's gates read a breakpoint condition `ranks SPEC` (or
 * `ranks SPEC and EXPR`; `rank 2` too) as "only ranks in SPEC stop here" (and, for them,
 * EXPR is the condition). These functions read and rewrite such conditions the way the
 * gates do (supervise/bound_breaks.py): the patterns are generated from the Python side and
 * the unit test checks every case against the gates' own answers. No `vscode` import.
 */

import { BOUND_CONDITION, MAX_DIGITS, MAX_RANK, MAX_SPEC, RANK_ITEM } from './generated/rankGrammar';

/** A spec of the rank grammar (ranks.items): else the condition is Python that only starts
 *  with the word `ranks`. */
function isSpec(spec: string): boolean {
    if (spec.length > MAX_SPEC) return false;
    let any = false;
    for (const raw of spec.split(',')) {
        const item = raw.trim().toLowerCase();
        if (!item) continue;
        if (!RANK_ITEM.test(item)) return false;
        for (const n of item.match(/\d+/g) ?? []) {
            if (n.replace(/^0+/, '').length > MAX_DIGITS || Number(n) > MAX_RANK) return false;
        }
        const [lo, hi] = item.split('-');
        if (hi !== undefined && Number(lo) > Number(hi)) return false;
        any = true;
    }
    return any;
}

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
    const m = BOUND_CONDITION.exec(condition ?? '');
    const spec = m?.groups?.spec?.trim().replace(/\s*,\s*/g, ',');
    if (!m || spec === undefined || !isSpec(spec)) return { rest: text };
    const rest = m.groups?.rest?.trim();
    return rest ? { spec, rest } : { spec };
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
