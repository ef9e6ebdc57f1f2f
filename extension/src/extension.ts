/**
 * Rank Debugger: wires the parts together; each lives in its own module.
 * Activation: the commands, the Training Jobs view, the `rankdebug` debug type, shell
 * scripts and Markdown (never `*`).
 */
import * as vscode from 'vscode';
import { BreakpointBinder } from './groups/bindBreakpoint';
import { debugCommand, debugTerminalSelection, generateLaunchJson, type Context } from './launch/commands';
import { ComparePanels } from './inspect/comparePanel';
import { looksLikeLaunch } from './core/lineHint';
import { registerDebugType } from './debug';
import { DEBUG_RANK_COMMAND, WhyStuck } from './diagnose/whyStuck';
import { JobState } from './jobs/jobState';
import { GroupStore } from './core/groupStore';
import { JobsFilter } from './jobs/jobsFilter';
import { JobsView, type JobNode } from './jobs/jobsView';
import { createLog, log } from './common/log';
import { onInterpreterChange, resolveInterpreter, setExtensionRoot } from './common/python';
import { RankAttach } from './jobs/rankAttach';
import { RankEval } from './inspect/rankEval';
import { RankGroups } from './groups/rankGroups';
import { RankTargets } from './groups/rankTargets';
import { RankMemory } from './launch/rankPick';
import { SmokeRuns } from './smoke/smokeRun';
import { StartedRankPicks } from './launch/startedRankPick';
import { LANGUAGES, Server } from './common/server';
import { affectsInterpreter, affectsServer, affectsShim } from './common/settings';
import { StacksPanels } from './inspect/stacksPanel';
import { TerminalSupport } from './launch/terminal';

export function activate(context: vscode.ExtensionContext): { server: Server; state: JobState } {
    const t0 = Date.now();
    setExtensionRoot(context.extensionPath);
    context.subscriptions.push(createLog());
    const server = new Server();
    const state = new JobState();
    const ctx: Context = { server, memory: new RankMemory(context.workspaceState) };
    const terminals = new TerminalSupport(context, ctx);
    const python = async (): Promise<string> => (await server.python()).python;
    const jobs = new JobsView(state, python);
    const execute = server.execute.bind(server);
    const attach = new RankAttach(python, jobs, state, execute);
    ctx.started = new StartedRankPicks({ python, state, execute, attach: (job, ranks) => attach.attachRanks(job, ranks, false) });
    const groups = new RankGroups(state, new RankTargets(state, jobs, new GroupStore()), execute);
    const stacks = new StacksPanels(python, jobs, groups, attach);
    const evaluate = new RankEval(context.globalState, python);
    const compare = new ComparePanels(python, state, jobs, groups, context.globalState);
    const filter = new JobsFilter(jobs, execute);
    const binder = new BreakpointBinder(execute, state);
    const smoke = new SmokeRuns(context.globalStorageUri, ctx);
    const whyStuck = new WhyStuck({ python, jobs, attach, compare });
    context.subscriptions.push(server, state, terminals, jobs, attach, stacks, evaluate, groups, compare, smoke, whyStuck);

    const reg = (id: string, fn: (...args: unknown[]) => unknown): void => {
        context.subscriptions.push(
            vscode.commands.registerCommand(id, async (...args: unknown[]) => {
                try {
                    return await fn(...args);
                } catch (e) {
                    log().error(`${id}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
                    void vscode.window.showErrorMessage(vscode.l10n.t('Rank Debugger: {0}', e instanceof Error ? e.message : String(e)));
                    return undefined;
                }
            }),
        );
    };
    reg('rankdebug.debugCommand', (...args) => debugCommand(ctx, args));
    reg('rankdebug.pickRanks', (...args) => debugCommand(ctx, args, { alwaysPick: true }));
    reg('rankdebug.smokeRun', (...args) => smoke.open(args));
    reg('rankdebug.smoke.run', (uri) => smoke.run(uri));
    reg('rankdebug.smoke.debug', (uri) => smoke.debug(uri));
    reg('rankdebug.debugTerminalSelection', () => debugTerminalSelection(ctx));
    reg('rankdebug.debugLastCommand', () => terminals.debugLast());
    reg('rankdebug.generateLaunchJson', (...args) => generateLaunchJson(ctx, args));
    reg('rankdebug.restartServer', () => server.restart());
    reg('rankdebug.showLog', () => log().show());
    reg('rankdebug.jobs.refresh', () => jobs.refresh());
    reg('rankdebug.jobs.attach', (node) => attach.attach(node as JobNode | undefined));
    reg('rankdebug.jobs.showStacks', (node) => stacks.show(node as JobNode | undefined));
    reg('rankdebug.jobs.evaluate', (node) => evaluate.evaluate(node as JobNode | undefined));
    reg('rankdebug.jobs.stop', (node) => jobs.stop(node as JobNode | undefined));
    reg('rankdebug.jobs.openTerminal', (node) => jobs.openTerminal(node as JobNode | undefined));
    reg('rankdebug.jobs.copyCommand', (node) => jobs.copyCommand(node as JobNode | undefined));
    reg('rankdebug.jobs.filter', () => filter.ask());
    reg('rankdebug.jobs.clearFilter', () => filter.clear());
    reg('rankdebug.ranks.continue', (...args) => groups.run('continue', args));
    reg('rankdebug.ranks.pause', (...args) => groups.run('pause', args));
    reg('rankdebug.ranks.stepOver', (...args) => groups.run('over', args));
    reg('rankdebug.ranks.stepInto', (...args) => groups.run('in', args));
    reg('rankdebug.ranks.stepOut', (...args) => groups.run('out', args));
    reg('rankdebug.ranks.runToCursor', (...args) => groups.runToCursor(args));
    reg('rankdebug.ranks.stopTogether', (...args) => groups.setStopMode('together', args));
    reg('rankdebug.ranks.stopAlone', (...args) => groups.setStopMode('alone', args));
    reg('rankdebug.ranks.makeGroup', (...args) => groups.makeGroup(args));
    reg('rankdebug.ranks.chooseGroup', (...args) => groups.chooseGroup(args));
    reg('rankdebug.bindBreakpoint', (...args) => binder.bind(args));
    reg('rankdebug.compareAcrossRanks', (...args) => compare.compare(args));
    reg('rankdebug.compareExpression', (...args) => compare.compareExpression(args));
    reg('rankdebug.whyStuck', (arg) => whyStuck.run(arg));
    reg(DEBUG_RANK_COMMAND, (job, rank) => whyStuck.debugRank(job, rank));

    context.subscriptions.push(...registerDebugType(server, state, () => jobs.latest()));

    // The editor context menu shows "Debug Training Command" in documents that hold a launch
    // command. A per-line key would lag behind the right-click that moves the cursor, so the
    // key is per document; the command itself reads the line under the cursor.
    void vscode.commands.executeCommand('setContext', 'rankdebug.languages', LANGUAGES);
    const hinted = new Map<string, { version: number; hit: boolean }>();
    const updateHint = (editor: vscode.TextEditor | undefined): void => {
        let hit = false;
        const doc = editor?.document;
        if (doc && LANGUAGES.includes(doc.languageId)) {
            const key = doc.uri.toString();
            const known = hinted.get(key);
            if (known?.version === doc.version) hit = known.hit;
            else {
                const lines = doc.getText().split(/\r?\n/).slice(0, 20000);
                hit = lines.some((_l, i) => looksLikeLaunch(lines, i));
                hinted.set(key, { version: doc.version, hit });
            }
        }
        void vscode.commands.executeCommand('setContext', 'rankdebug.docHasCommand', hit);
    };
    let hintTimer: NodeJS.Timeout | undefined;
    context.subscriptions.push(
        vscode.window.onDidChangeActiveTextEditor(updateHint),
        vscode.workspace.onDidChangeTextDocument((e) => {
            if (e.document !== vscode.window.activeTextEditor?.document) return;
            if (hintTimer) clearTimeout(hintTimer);
            hintTimer = setTimeout(() => updateHint(vscode.window.activeTextEditor), 300);
        }),
        vscode.workspace.onDidCloseTextDocument((d) => hinted.delete(d.uri.toString())),
        { dispose: () => hintTimer && clearTimeout(hintTimer) },
    );
    updateHint(vscode.window.activeTextEditor);

    // Another interpreter: restart the server and refresh the shim. Other settings: tell the
    // running server (didChangeConfiguration); the shim follows its own setting.
    const refresh = async (): Promise<void> => {
        server.scheduleRestart();
        await terminals.updateShim((await resolveInterpreter()).python);
    };
    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (affectsInterpreter(e)) {
                void refresh();
                return;
            }
            if (affectsServer(e)) void server.sendSettings();
            if (affectsShim(e)) {
                void server
                    .python()
                    .then(({ python }) => terminals.updateShim(python))
                    .catch((err: unknown) => log().warn(`terminal shim: ${String(err)}`));
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => void server.sendSettings()),
    );
    // Not awaited: the Python extension may still be activating.
    void onInterpreterChange(() => void refresh()).then((d) => d && context.subscriptions.push(d));

    void server.ready().then(async () => {
        await terminals.updateShim((await server.python()).python);
        log().info(`activated in ${Date.now() - t0} ms (language server included)`);
    });
    log().info(`activate() returned in ${Date.now() - t0} ms`);
    return { server, state };
}

export function deactivate(): void {
    // Disposables in context.subscriptions stop the server and the watchers.
}
