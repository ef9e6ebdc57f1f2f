/**
 * Debug Training Command (editor context menu, code lens, terminal selection, command
 * palette) and Generate launch.json: where the command is → the plan (language server) →
 * the ranks (quick-pick) → one parent debug session, or configurations in launch.json.
 * The VS Code calls are the host's (host.ts); commands.ts gives it the real ones.
 */
import type * as vscode from 'vscode';
import { readPlanCoords } from '../core/coords';
import { RankChecker, type CheckedChoice } from '../core/rankCheck';
import { choiceName, type RankChoice } from '../core/rankChoice';
import { isPlanError, titleOf, type LaunchPlan, type PlanError } from '../core/ranks';
import { TYPE, type RankdebugConfiguration } from '../debug/configuration';
import { planErrorText } from '../debug/launchResolver';
import { mark } from '../debug/traceMarks';
import type { CommandHost } from './host';
import { pickRanks, recall, resolvePresets, type RankMemory } from './rankPick';
import type { Server } from '../common/server';
import type { StartedRankPicks } from './startedRankPick';

/** Where a command is: a line of a document, a text (terminal) or an argv. */
export interface CommandSource {
    uri?: vscode.Uri;
    line?: number;
    text?: string;
    cwd?: string;
}

export interface Context {
    server: Server;
    memory: RankMemory;
    /** Choose when the ranks start: the pick that fills as the armed job's ranks start. */
    started?: StartedRankPicks;
}

function memoryKey(src: CommandSource): string {
    return src.uri ? `${src.uri.toString()}#${src.line ?? 0}` : `text:${src.text ?? ''}`;
}

function folderOf(host: CommandHost, src: CommandSource): vscode.WorkspaceFolder | undefined {
    return host.folderOf(src.uri ?? src.cwd);
}

/**
 * The command's source from a command's arguments.
 * Steps: a code lens gives (uri string, 0-based line); a menu gives a Uri; else the active
 * editor and its cursor; with no editor, ask for the command text.
 */
export async function sourceFromArgs(host: CommandHost, args: unknown[]): Promise<CommandSource | undefined> {
    const [first, second] = args;
    if (typeof first === 'string' && typeof second === 'number') return { uri: host.parseUri(first), line: second };
    if (first && typeof first === 'object' && 'text' in first) return first as CommandSource;
    const editor = host.activeEditor();
    if (host.isUri(first) && editor && editor.uri.toString() !== first.toString()) {
        return { uri: first, line: 0 };
    }
    if (editor && ['shellscript', 'markdown'].includes(editor.languageId)) {
        return { uri: editor.uri, line: editor.line };
    }
    const text = await host.showInputBox({
        title: host.l10n.t('Debug Training Command'),
        prompt: host.l10n.t('The training command to debug, as you would type it in a terminal'),
        placeHolder: 'torchrun --nproc_per_node 4 train.py --lr 1e-4',
        ignoreFocusOut: true,
    });
    if (!text?.trim()) return undefined;
    return { text: text.trim(), cwd: host.folderOf(undefined)?.uri.fsPath };
}

export async function saveIfDirty(host: CommandHost, src: CommandSource): Promise<void> {
    if (src.uri) await host.saveIfDirty(src.uri);
}

/** Where the command is, as the server's commands take it (`rankdebug.plan`, `rankdebug.smoke`). */
export function planArg(src: CommandSource): Record<string, unknown> {
    return src.uri ? { uri: src.uri.toString(), line: src.line ?? 0 } : { text: src.text, language: 'shellscript', settings: src.cwd ? { cwd: src.cwd } : undefined };
}

/** Asks the server for the plan of the command at `src`; shows the error and returns undefined when there is none. */
export async function planFor(host: CommandHost, ctx: Context, src: CommandSource): Promise<LaunchPlan | undefined> {
    const result = await ctx.server.execute<LaunchPlan | PlanError>('rankdebug.plan', planArg(src));
    if (isPlanError(result)) {
        host.showError(host.l10n.t('Rank Debugger: {0}', planErrorText(result, host.l10n)));
        return undefined;
    }
    if (result.launcher === 'other' || !result.entry) {
        host.showWarning(host.l10n.t('Rank Debugger: this line does not start a Python training job.'));
        return undefined;
    }
    return result;
}

/** Reads rank choices for `plan` through the language server (`rankdebug.checkRanks`). */
function rankChecker(ctx: Context, plan: LaunchPlan, allowArm: boolean): RankChecker {
    return new RankChecker(ctx.server.execute.bind(ctx.server), { ranks: plan.ranks ?? [], worldSize: plan.world_size ?? null, coords: readPlanCoords(plan.coords) }, allowArm);
}

/** The choice remembered for the command, when it still fits the plan. */
async function remembered(checker: RankChecker, plan: LaunchPlan, text: string | undefined): Promise<CheckedChoice | undefined> {
    if (!text) return undefined;
    return recall(checker, text, await resolvePresets(checker, plan.ranks ?? []));
}

/** The job's launch configuration for the choice (`arm` for *Choose when the ranks start* too). */
function launchConfig(title: string, choice: RankChoice, src: CommandSource): RankdebugConfiguration {
    return {
        type: TYPE,
        request: 'launch',
        name: choiceName(title, choice),
        ...(choice.spec ? { ranks: choice.spec } : {}),
        ...(choice.arm ? { arm: true } : {}),
        source: src.uri ? { uri: src.uri.toString(), line: src.line ?? 0 } : { text: src.text, cwd: src.cwd },
    };
}

/**
 * Debug Training Command.
 * Steps: find the command; save its document; plan it; pick ranks (a code lens reuses the
 * remembered choice); start the parent session, which runs the job.
 */
export async function debugCommand(host: CommandHost, ctx: Context, args: unknown[], options: { alwaysPick?: boolean } = {}): Promise<boolean> {
    const src = await sourceFromArgs(host, args);
    if (!src) return false;
    host.prepareLaunch(ctx.server, folderOf(host, src)?.uri.fsPath); // the job's process warms up while the ranks are picked
    let started = false;
    try {
        started = await debugSource(host, ctx, src, { fromLens: typeof args[0] === 'string' && typeof args[1] === 'number', ...options });
        return started;
    } finally {
        if (!started) host.discardLaunch(); // no job: no launcher left waiting
    }
}

async function debugSource(host: CommandHost, ctx: Context, src: CommandSource, options: { alwaysPick?: boolean; fromLens: boolean }): Promise<boolean> {
    await saveIfDirty(host, src);
    const plan = await planFor(host, ctx, src);
    if (!plan) return false;
    const title = titleOf(plan);
    const key = memoryKey(src);
    const checker = rankChecker(ctx, plan, true);
    const last = options.fromLens && !options.alwaysPick ? await remembered(checker, plan, ctx.memory.get(key)) : undefined;
    const choice = last ?? (await pickRanks(host, checker, plan.ranks ?? [], { title: host.l10n.t('Debug {0}: which ranks?', title), memory: ctx.memory, key }));
    if (!choice) return false;
    mark('picked');
    const config = launchConfig(title, choice, src);
    host.log.info(`debug ${config.name}`);
    // Followed before it starts: the pick opens once the session says its job.
    if (choice.live) ctx.started?.follow(config.name, title);
    return host.startJobSession(folderOf(host, src), config);
}

/** Debug Training Command from a terminal's selected text. */
export async function debugTerminalSelection(host: CommandHost, ctx: Context): Promise<boolean> {
    const selection = await host.terminalSelection();
    const text = selection.text?.replace(/^\s*\$\s+/, '').trim();
    if (!text) {
        host.showWarning(host.l10n.t('Select a training command in the terminal first.'));
        return false;
    }
    const cwd = selection.cwd ?? host.folderOf(undefined)?.uri.fsPath;
    return debugCommand(host, ctx, [{ text, cwd }], { alwaysPick: true });
}

/** Generate launch.json: per-rank configurations and a compound for the command. */
export async function generateLaunchJson(host: CommandHost, ctx: Context, args: unknown[]): Promise<void> {
    const src = await sourceFromArgs(host, args);
    if (!src) return;
    await saveIfDirty(host, src);
    const plan = await planFor(host, ctx, src);
    if (!plan) return;
    const title = titleOf(plan);
    const choice = await pickRanks(host, rankChecker(ctx, plan, false), plan.ranks ?? [], { title: host.l10n.t('launch.json for {0}: which ranks?', title), memory: ctx.memory, key: memoryKey(src) });
    const spec = choice?.spec;
    if (!spec) return;
    const arg = src.uri ? { uri: src.uri.toString(), line: src.line ?? 0, ranks: spec } : { text: src.text, ranks: spec, settings: src.cwd ? { cwd: src.cwd } : undefined };
    const result = await ctx.server.execute<{ configurations: { name: string }[]; compounds: { name: string }[]; terminalCommand?: string[]; warnings?: string[] } | PlanError>('rankdebug.launchJson', arg);
    if (isPlanError(result)) {
        host.showError(host.l10n.t('Rank Debugger: {0}', planErrorText(result, host.l10n)));
        return;
    }
    for (const w of result.warnings ?? []) host.log.warn(w);
    const folder = folderOf(host, src);
    if (!folder) {
        host.showError(host.l10n.t('Open a folder to write .vscode/launch.json.'));
        return;
    }
    await host.writeLaunchJson(folder, result.configurations, result.compounds, result.terminalCommand);
}
