/**
 * Evaluate in Rank: the answer of `rankdebug eval JOB RANK EXPR --json`, the output line,
 * and the list of recent expressions. The lines are read through the names declared in
 * pyserver/rankdebug/protocol/eval.py (generated types). No `vscode` import.
 */
import type { ErrorEval, ResultEval } from './generated/evalLines';
import type { Raw } from './raw';


export interface EvalResult {
    rank: number | null;
    pid: number | null;
    expr: string;
    text: string;
    type: string | null;
}

/** Reads `{"event": "result", "rank", "pid", "expr", "text", "type"}`; undefined for anything else. */
export function readEvalResult(lines: readonly Record<string, unknown>[], expr: string): EvalResult | undefined {
    const answer: (Raw<ResultEval> & Raw<ErrorEval>) | undefined = lines.find((l) => l.event === 'result' || l.event === 'error');
    if (answer?.event === 'error') throw new Error(typeof answer.message === 'string' ? answer.message : 'the rank reported an error');
    if (answer?.event !== 'result' || typeof answer.text !== 'string') return undefined;
    return {
        rank: typeof answer.rank === 'number' ? answer.rank : null,
        pid: typeof answer.pid === 'number' ? answer.pid : null,
        expr: typeof answer.expr === 'string' ? answer.expr : expr,
        text: answer.text,
        type: typeof answer.type === 'string' ? answer.type : null,
    };
}

/** `rank 1 › optimizer.param_groups[0]['lr'] = 0.001`; a multi-line value starts on its own line. */
export function evalLine(rank: number, result: EvalResult): string {
    const value = result.text.includes('\n') ? `\n${result.text}` : result.text;
    return `rank ${rank} › ${result.expr} = ${value}`;
}

/** The recent expressions with `expr` first, without duplicates, at most `max`. */
export function remember(recent: readonly string[], expr: string, max = 20): string[] {
    const e = expr.trim();
    if (!e) return [...recent];
    return [e, ...recent.filter((r) => r !== e)].slice(0, max);
}
