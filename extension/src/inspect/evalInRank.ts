/**
 * Rank Debugger: Evaluate in Rank… — on a rank of an armed job (`rankdebug launch --arm`):
 * an expression (recent ones offered first) → `rankdebug eval JOB RANK EXPR --json` → the
 * output channel `Rank Debugger: Eval` (`rank 1 › expr = text`), focused. No debugger is
 * attached and the other ranks never stop. The VS Code calls are the host's (host.ts);
 * rankEval.ts gives it the real ones.
 */
import type * as vscode from 'vscode';
import { evalLine, readEvalResult } from '../core/evaluate';
import { pickExpression, RecentExpressions } from './expressionPick';
import type { JobNode } from '../jobs/jobsView';
import type { EvalHost } from './host';

export class EvalInRank implements vscode.Disposable {
    private channel: ReturnType<EvalHost['outputChannel']> | undefined;
    /** The recent expressions, shared with Compare Across Ranks. */
    private readonly recent: RecentExpressions;

    constructor(
        private readonly host: EvalHost,
        memento: vscode.Memento,
        private readonly python: () => Promise<string>,
    ) {
        this.recent = new RecentExpressions(memento);
    }

    private output(): ReturnType<EvalHost['outputChannel']> {
        this.channel ??= this.host.outputChannel('Rank Debugger: Eval');
        return this.channel;
    }

    /** A quick pick that takes what is typed, with the recent expressions below it. */
    private ask(rank: number, job: string): Promise<string | undefined> {
        return pickExpression(this.host, {
            title: this.host.l10n.t('Evaluate in rank {0} of {1}', rank, job),
            placeholder: this.host.l10n.t("A Python expression, e.g. optimizer.param_groups[0]['lr']"),
            recent: this.recent.list(),
        });
    }

    async evaluate(node?: JobNode): Promise<void> {
        if (node?.kind !== 'rank') {
            this.host.showInfo(this.host.l10n.t('Right-click a rank of an armed job in Training Jobs to evaluate in it.'));
            return;
        }
        const { job, rank } = node;
        const expr = await this.ask(rank.rank, job.id);
        if (!expr) return;
        await this.recent.add(expr);
        const t0 = Date.now();
        try {
            const run = await this.host.withProgress(
                this.host.l10n.t('Evaluating in rank {0}…', rank.rank),
                async (_p, token) => {
                    const abort = new AbortController();
                    token.onCancellationRequested(() => abort.abort());
                    return this.host.runCli(await this.python(), ['eval', job.id, String(rank.rank), expr, '--json', '--timeout', '10'], { timeoutMs: 30000, signal: abort.signal });
                },
            );
            const result = readEvalResult(run.lines, expr);
            if (!result) throw new Error(this.host.l10n.t('rankdebug eval gave no result'));
            const out = this.output();
            out.appendLine(evalLine(rank.rank, result));
            out.show(false);
            this.host.log.info(`eval in rank ${rank.rank} of ${job.id}: ${Date.now() - t0} ms`);
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            if (message === 'cancelled') return;
            this.host.showError(this.host.l10n.t('Cannot evaluate in rank {0}: {1}', rank.rank, message));
        }
    }

    dispose(): void {
        this.channel?.dispose();
    }
}
