/**
 * Rank Debugger: Compare Across Ranks — a value evaluated in every rank of a job that has a
 * handler (`rankdebug eval JOB all EXPR --json`), shown in a webview panel per expression
 * (reused when run again): the ranks grouped by equal value, the smaller groups marked odd
 * with where a tensor differs, sparklines of a scalar against rank, a table rank → value,
 * errors per rank; a tolerance (`--tolerance`), Refresh, and Make a group of these ranks (the
 * group commands' groups, rankGroups.ts). The model is core/compare.ts, the HTML
 * core/compareHtml.ts (escaped text, strict CSP, no remote content).
 *
 * Where it starts: a Variables or Watch entry of a rank session (its `evaluateName`, each rank
 * evaluating in the frame of the function selected in the Call Stack, `--function`); the
 * editor's selection in a rank session; or an expression asked for (command palette, Training
 * Jobs), with the editor's selection, the last expression typed in a rank's Debug Console and
 * the recent ones offered. Also the context key `rankdebug.rankFocused` (the focused debug
 * session is a rank of a job this window knows) that the menus read. Each panel: comparePage.ts.
 */
import * as vscode from 'vscode';
import { functionOfFrame } from '../core/compare';
import { isRowArg } from '../core/commandArgs';
import { reportedDims } from '../core/coords';
import { takesCommands } from '../core/jobList';
import { TYPE, type RankdebugConfiguration } from '../debug/configuration';
import { pickExpression, RecentExpressions } from './expressionPick';
import { ComparePage, type Request } from './comparePage';
import { compareHost, evalHost } from './vscodeHost';
import type { JobState } from '../jobs/jobState';
import type { JobNode, JobsView } from '../jobs/jobsView';
import { log } from '../common/log';
import type { RankGroups } from '../groups/rankGroups';

/** A Variables or Watch view entry as its context menu passes it (`{sessionId, variable: {evaluateName}}`). */
function variableArg(args: readonly unknown[]): { sessionId?: string; expr?: string; name?: string } | undefined {
    const first = args[0];
    if (typeof first !== 'object' || first === null) return undefined;
    const v = (first as Record<string, unknown>).variable;
    if (typeof v !== 'object' || v === null) return undefined;
    const variable = v as Record<string, unknown>;
    const sessionId = (first as Record<string, unknown>).sessionId;
    return {
        sessionId: typeof sessionId === 'string' ? sessionId : undefined,
        expr: typeof variable.evaluateName === 'string' && variable.evaluateName.trim() ? variable.evaluateName : undefined,
        name: typeof variable.name === 'string' ? variable.name : undefined,
    };
}

/** The text selected in the active editor, trimmed; '' when none. */
function editorSelection(): string {
    const editor = vscode.window.activeTextEditor;
    return editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).trim() : '';
}

export class ComparePanels implements vscode.Disposable {
    private readonly panels = new Map<string, ComparePage>();
    private readonly sessions = new Map<string, vscode.DebugSession>();
    /** The last expression typed in a rank session's Debug Console. */
    private lastRepl: { expr: string; rank?: number; job?: string } | undefined;
    /** Frame names from the rank sessions' stackTrace responses: `session/frameId` → name. */
    private readonly frames = new Map<string, string>();
    private readonly disposables: vscode.Disposable[] = [];
    private rankFocused: boolean | undefined;
    /** The recent expressions, shared with Evaluate in Rank…. */
    private readonly recent: RecentExpressions;

    constructor(
        private readonly python: () => Promise<string>,
        private readonly state: JobState,
        private readonly jobs: Pick<JobsView, 'pickJob' | 'fresh'>,
        private readonly groups: Pick<RankGroups, 'makeGroupOf'>,
        memento: vscode.Memento,
    ) {
        this.recent = new RecentExpressions(memento);
        this.disposables.push(
            vscode.debug.onDidStartDebugSession((s) => this.sessions.set(s.id, s)),
            vscode.debug.onDidTerminateDebugSession((s) => this.sessions.delete(s.id)),
            vscode.debug.onDidChangeActiveDebugSession(() => this.updateContext()),
            state.onDidChange(() => this.updateContext()),
            vscode.debug.registerDebugAdapterTrackerFactory(TYPE, { createDebugAdapterTracker: (session) => this.tracker(session) }),
        );
        if (vscode.debug.activeDebugSession) this.sessions.set(vscode.debug.activeDebugSession.id, vscode.debug.activeDebugSession);
        this.updateContext();
    }

    /**
     * A rank session's tracker: the last expression typed in its Debug Console (offered by
     * Compare Across Ranks…), and its frames' names (the function selected in the Call Stack).
     */
    private tracker(session: vscode.DebugSession): vscode.DebugAdapterTracker | undefined {
        const rank = (session.configuration as RankdebugConfiguration).__rank;
        if (!rank) return undefined;
        return {
            onWillReceiveMessage: (m: { type?: string; command?: string; arguments?: { expression?: unknown; context?: unknown } }) => {
                if (m.type !== 'request' || m.command !== 'evaluate' || m.arguments?.context !== 'repl') return;
                const expr = m.arguments.expression;
                if (typeof expr === 'string' && expr.trim()) this.lastRepl = { expr: expr.trim(), rank: rank.rank, job: this.jobOf(session)?.job };
            },
            onDidSendMessage: (m: { type?: string; command?: string; body?: { stackFrames?: { id?: unknown; name?: unknown }[] } }) => {
                if (m.type !== 'response' || m.command !== 'stackTrace') return;
                if (this.frames.size > 5000) this.frames.clear();
                for (const f of m.body?.stackFrames ?? []) {
                    if (typeof f.id === 'number' && typeof f.name === 'string') this.frames.set(`${session.id}/${f.id}`, f.name);
                }
            },
        };
    }

    private updateContext(): void {
        const active = vscode.debug.activeDebugSession;
        const focused = Boolean(active && (active.configuration as RankdebugConfiguration).__rank && this.jobOf(active));
        if (focused === this.rankFocused) return;
        this.rankFocused = focused;
        void vscode.commands.executeCommand('setContext', 'rankdebug.rankFocused', focused);
    }

    /** The job (registry id) and rank of a debug session of ours, if it is one. */
    jobOf(session: vscode.DebugSession): { job: string; rank?: number } | undefined {
        const config = session.configuration as RankdebugConfiguration;
        if (session.type !== TYPE) return undefined;
        const tracked = this.state.ofSession(session);
        const job = tracked?.job ?? config.__rank?.job ?? config.__attach?.job ?? (typeof config.job === 'string' && config.job !== 'latest' ? config.job : undefined);
        return job ? { job, rank: config.__rank?.rank } : undefined;
    }

    /** The function of the frame selected in the Call Stack when it belongs to `session` (its top frame when a thread is selected). */
    private async selectedFunction(session: vscode.DebugSession): Promise<string | undefined> {
        const item = vscode.debug.activeStackItem;
        if (!item || item.session.id !== session.id) return undefined;
        const frameId = 'frameId' in item ? item.frameId : undefined;
        const known = frameId !== undefined ? this.frames.get(`${session.id}/${frameId}`) : undefined;
        if (known) return functionOfFrame(known);
        try {
            const reply = (await session.customRequest('stackTrace', { threadId: item.threadId, startFrame: 0, levels: frameId === undefined ? 1 : 100 })) as { stackFrames?: { id: number; name: string }[] };
            const frames = reply.stackFrames ?? [];
            const frame = frameId === undefined ? frames[0] : frames.find((f) => f.id === frameId);
            return functionOfFrame(frame?.name);
        } catch (e) {
            log().debug(`compare: no stack of ${session.name}: ${e instanceof Error ? e.message : String(e)}`);
            return undefined;
        }
    }

    private session(id: string | undefined): vscode.DebugSession | undefined {
        const active = vscode.debug.activeDebugSession;
        if (!id) return active;
        return active?.id === id ? active : this.sessions.get(id);
    }

    /**
     * Compare Across Ranks from a Variables or Watch entry (its `evaluateName`) or the editor's
     * selection, in a rank session: every rank of its job evaluates it in the frame of the
     * function selected in the Call Stack. With neither, asks (as compareExpression).
     */
    async compare(args: readonly unknown[]): Promise<void> {
        const t0 = Date.now();
        const variable = variableArg(args);
        const session = this.session(variable?.sessionId);
        let expr = variable?.expr;
        if (variable && !expr) {
            void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no expression to evaluate in the other ranks.', variable.name ?? '?'));
            return;
        }
        if (!variable) {
            const selected = editorSelection();
            if (!selected || !(args[0] instanceof vscode.Uri)) return this.compareExpression(args);
            expr = selected;
        }
        const ours = session ? this.jobOf(session) : undefined;
        if (!session || !ours || !expr) {
            void vscode.window.showInformationMessage(vscode.l10n.t('Compare Across Ranks works in the rank sessions of jobs Rank Debugger debugs.'));
            return;
        }
        const fn = await this.selectedFunction(session);
        await this.show({ job: ours.job, expr, from: ours.rank, fn, t0 });
    }

    /** Compare Across Ranks…: an expression asked for, in the job of a Training Jobs row, of the focused rank session, or picked. */
    async compareExpression(args: readonly unknown[]): Promise<void> {
        const target = await this.target(args);
        if (!target) return;
        const expr = await this.ask(target.job, target.job === this.lastRepl?.job ? this.lastRepl : undefined);
        if (!expr) return;
        const t0 = Date.now();
        const fn = target.session ? await this.selectedFunction(target.session) : undefined;
        await this.show({ job: target.job, expr, from: target.rank, fn, t0 });
    }

    /** An expression asked for, evaluated now in these ranks of the job (in `fn`'s frame where given). */
    async compareIn(job: string, ranks: readonly number[], fn: string | undefined, title: string): Promise<void> {
        const expr = await pickExpression(evalHost, {
            title,
            placeholder: vscode.l10n.t('A Python expression evaluated in every rank, e.g. loss.item() or model.fc.weight'),
            offered: [],
            recent: this.recent.list(),
        });
        if (!expr) return;
        await this.show({ job, expr, fn, t0: Date.now(), ranks: ranks.join(','), now: true });
    }

    /** The job (and rank, session) the command was run on (see compareExpression). */
    private async target(args: readonly unknown[]): Promise<{ job: string; rank?: number; session?: vscode.DebugSession } | undefined> {
        const first = args[0];
        if (isRowArg(first)) {
            const node = first as JobNode;
            return { job: node.job.id, rank: node.kind === 'rank' ? node.rank.rank : undefined };
        }
        const active = vscode.debug.activeDebugSession;
        const ours = active ? this.jobOf(active) : undefined;
        if (active && ours) return { ...ours, session: active };
        const mine = [...new Set(this.state.all().flatMap((t) => (t.job ? [t.job] : [])))];
        if (mine.length === 1) return { job: mine[0] };
        const info = await this.jobs.pickJob(vscode.l10n.t('Compare a value across the ranks of which job?'), takesCommands);
        return info ? { job: info.id } : undefined;
    }

    /** A quick pick that takes what is typed; offered: the editor's selection, the Debug Console's last expression, the recent ones. */
    private ask(job: string, repl: { expr: string; rank?: number } | undefined): Promise<string | undefined> {
        const selected = editorSelection();
        const offered: vscode.QuickPickItem[] = [];
        if (selected && selected.length <= 2000) offered.push({ label: selected, description: vscode.l10n.t('selected in the editor') });
        if (repl && repl.expr !== selected) offered.push({ label: repl.expr, description: repl.rank !== undefined ? vscode.l10n.t('last in the Debug Console of rank {0}', repl.rank) : vscode.l10n.t('last in the Debug Console') });
        return pickExpression(evalHost, {
            title: vscode.l10n.t('Compare across the ranks of {0}', job),
            placeholder: vscode.l10n.t('A Python expression evaluated in every rank, e.g. loss.item() or model.fc.weight'),
            offered,
            recent: this.recent.list(),
        });
    }

    /** The dimensions the job's ranks report (Training Jobs' latest reading of it). */
    private async dimsOf(job: string): Promise<string[]> {
        const info = (await this.jobs.fresh()).find((j) => j.id === job);
        return info ? reportedDims(info.ranks) : [];
    }

    /** The expression's panel (reused when it is open), run. */
    private async show(request: Request): Promise<void> {
        await this.recent.add(request.expr);
        const key = `${request.job}\n${request.expr}`;
        let panel = this.panels.get(key);
        if (panel) {
            panel.panel.reveal(undefined, false);
        } else {
            // Beside the code, with the other Compare panels when there are some.
            const column = [...this.panels.values()].find((p) => p.panel.viewColumn !== undefined)?.panel.viewColumn ?? vscode.ViewColumn.Beside;
            const deps = { python: this.python, makeGroupOf: (job: string, ranks: readonly number[]) => this.groups.makeGroupOf(job, ranks), dimsOf: (job: string) => this.dimsOf(job) };
            panel = new ComparePage(compareHost, request, deps, column, () => this.panels.delete(key));
            this.panels.set(key, panel);
        }
        await panel.run(request);
    }

    dispose(): void {
        [...this.panels.values()].forEach((p) => p.dispose());
        this.panels.clear();
        this.disposables.forEach((d) => d.dispose());
    }
}
