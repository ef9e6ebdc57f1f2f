/**
 * Bind Breakpoint to Ranks… (editor line-number menu, editor context menu, command palette):
 * the breakpoints on the line (one is made when there is none) get the condition `ranks SPEC`,
 * or `ranks SPEC and OLD` keeping their own condition; the job's gates stop only the ranks in
 * SPEC there. An empty SPEC removes the binding. SPEC is checked by the language server as you
 * type (the quick-pick's grammar: `1,3`, `0-3`, `local0`). The Breakpoints view shows the
 * condition; VS Code has no other place for it. The VS Code calls are the host's (host.ts);
 * bindBreakpoint.ts gives it the real ones.
 */
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { lineArg } from '../core/commandArgs';
import { debounce } from '../core/debounce';
import { CHECK_DELAY_MS, RankChecker, type Execute } from '../core/rankCheck';
import { bindCondition, readCondition } from '../core/rankCondition';
import { isPlanError } from '../core/ranks';
import type { JobState } from '../jobs/jobState';
import type { BindHost, LineBreakpoint } from './host';

/** The file and 0-based line the command is for: the line-number menu's, else the cursor's. */
function target(host: BindHost, args: readonly unknown[]): { uri: vscode.Uri; line: number } | undefined {
    const fromGutter = lineArg(args);
    if (fromGutter && host.isUri(fromGutter.uri)) return { uri: fromGutter.uri, line: fromGutter.lineNumber - 1 };
    return host.cursor();
}

export class BreakpointBinding {
    constructor(
        private readonly host: BindHost,
        private readonly execute: Execute,
        private readonly state: JobState,
    ) {}

    /** The spec as the language server writes it (no spaces); the typed text when the server cannot say. */
    private async canonical(checker: RankChecker, text: string): Promise<string | undefined> {
        try {
            const reply = await checker.check(text);
            if (isPlanError(reply)) {
                this.host.showError(this.host.l10n.t('Rank Debugger: {0}', reply.error.message));
                return undefined;
            }
            return reply.rankSpec;
        } catch (e) {
            this.host.log.warn(`bind breakpoint: ranks not checked: ${String(e)}`);
            return text.replace(/\s+/g, '');
        }
    }

    async bind(args: readonly unknown[]): Promise<void> {
        const at = target(this.host, args);
        if (!at) {
            this.host.showInfo(this.host.l10n.t('Put the cursor on a line of a Python file first.'));
            return;
        }
        const here = this.host.breakpointsAt(at.uri, at.line);
        // The job's size bounds the ranks when exactly one job is debugged here.
        const sizes = [...new Set(this.state.all().map((j) => j.worldSize ?? null))];
        const checker = new RankChecker(this.execute, { ranks: [], worldSize: sizes.length === 1 ? sizes[0] : null }, false);
        const where = `${path.basename(at.uri.fsPath)}:${at.line + 1}`;
        const text = await this.host.showInputBox({
            title: this.host.l10n.t('Bind the breakpoint at {0} to ranks', where),
            prompt: this.host.l10n.t('Only these ranks stop here (e.g. 1,3 or 0-3); empty: every chosen rank.'),
            value: readCondition(here[0]?.condition).spec ?? '',
            validateInput: debounce((value: string) => (value.trim() ? checker.problem(value) : Promise.resolve(undefined)), CHECK_DELAY_MS, undefined),
        });
        if (text === undefined) return;
        const spec = text.trim() ? await this.canonical(checker, text) : '';
        if (spec === undefined) return;
        const olds: (LineBreakpoint | undefined)[] = here.length ? here : [undefined];
        const fresh = olds.map((b) => ({ enabled: b?.enabled ?? true, condition: bindCondition(b?.condition, spec), hitCondition: b?.hitCondition, logMessage: b?.logMessage }));
        this.host.setBreakpoints(at.uri, at.line, fresh);
        this.host.log.info(`breakpoint ${where}: condition ${fresh.map((b) => JSON.stringify(b.condition ?? '')).join(', ')}`);
        this.host.setStatus(
            spec ? this.host.l10n.t('$(debug-breakpoint-conditional) {0}: only ranks {1} stop here', where, spec) : this.host.l10n.t('$(debug-breakpoint) {0}: every chosen rank stops here', where),
            6000,
        );
    }
}
