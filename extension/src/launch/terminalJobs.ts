/**
 * Debugging from VS Code's integrated terminals.
 * - A `rankdebug` shim on every integrated terminal's PATH (an EnvironmentVariableCollection,
 *   as microsoft/vscode-python-debugger's no-config debugging does): `rankdebug torchrun ...`
 *   runs the job under `rankdebug launch --json`, writing its events to a file in a folder
 *   this module watches; the chosen ranks then attach in a parent session.
 * - Debug Last Training Command: with shell integration, the last training command run in a
 *   terminal (and an offer to debug it when it fails).
 * The VS Code calls are the host's (host.ts); terminal.ts gives it the real ones.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { LineSplitter, parseEvent } from '../core/events';
import { isPlanError, titleOf, type LaunchPlan, type PlanError } from '../core/ranks';
import { shimScript } from '../core/shell';
import { TYPE, type RankdebugConfiguration } from '../debug/configuration';
import type { TerminalHost } from './host';
import type { Context } from './trainingCommand';

export interface LastCommand {
    text: string;
    cwd?: string;
    exitCode?: number;
}

export class TerminalJobs implements vscode.Disposable {
    private readonly disposables: vscode.Disposable[] = [];
    private watcher: fs.FSWatcher | undefined;
    private readonly seen = new Set<string>();
    last: LastCommand | undefined;
    readonly endpoints: string;
    readonly bin: string;

    constructor(
        private readonly host: TerminalHost,
        private readonly ctx: Context,
    ) {
        this.bin = path.join(host.storage, 'bin');
        this.endpoints = path.join(host.storage, 'endpoints', String(process.pid));
        if (host.onDidEndTerminalShellExecution) {
            this.disposables.push(host.onDidEndTerminalShellExecution((e) => void this.onCommandEnd(e)));
        }
    }

    /** Writes the shim and points integrated terminals at it (or removes it when disabled). */
    async updateShim(python: string): Promise<void> {
        const env = this.host.env;
        // Not persisted: the endpoints folder belongs to this extension host.
        env.persistent = false;
        env.clear();
        if (!this.host.settings().terminalShim) return;
        fs.mkdirSync(this.bin, { recursive: true });
        fs.mkdirSync(this.endpoints, { recursive: true, mode: 0o700 });
        const shim = path.join(this.bin, 'rankdebug');
        fs.writeFileSync(shim, shimScript(), { mode: 0o755 });
        fs.chmodSync(shim, 0o755);
        env.description = this.host.l10n.t('Rank Debugger: `rankdebug torchrun ...` debugs the job in VS Code');
        env.prepend('PATH', `${this.bin}${path.delimiter}`);
        env.replace('RANKDEBUG_PYTHON', python);
        env.replace('RANKDEBUG_MAIN', this.host.mainScript());
        env.replace('RANKDEBUG_ENDPOINTS', this.endpoints);
        this.watchEndpoints();
    }

    private watchEndpoints(): void {
        if (this.watcher) return;
        try {
            this.watcher = fs.watch(this.endpoints, (_kind, name) => {
                if (name && name.endsWith('.jsonl')) void this.onEndpoint(path.join(this.endpoints, name));
            });
        } catch (e) {
            this.host.log.warn(`cannot watch ${this.endpoints}: ${String(e)}`);
        }
    }

    /** A job the shim started: attach to its ranks as they listen. */
    private async onEndpoint(file: string): Promise<void> {
        if (this.seen.has(file)) return;
        let text: string;
        try {
            text = fs.readFileSync(file, 'utf8');
        } catch {
            return;
        }
        const splitter = new LineSplitter();
        for (const line of splitter.push(text)) {
            const ev = parseEvent(line);
            if (ev?.event === 'error') {
                this.seen.add(file);
                this.host.showError(this.host.l10n.t('Rank Debugger: {0}', ev.message));
                return;
            }
            if (ev?.event !== 'job') continue;
            this.seen.add(file);
            const config: RankdebugConfiguration = {
                type: TYPE,
                request: 'attach',
                name: this.host.l10n.t('terminal job {0}', ev.job),
                __attach: { job: ev.job, supervisorPid: ev.pid, dir: ev.dir, ranks: [], events: file, stopJobOnEnd: true, title: ev.job },
            };
            this.host.log.info(`terminal job ${ev.job}: attaching (${file})`);
            await this.host.startDebugging(this.host.folder(), config);
            return;
        }
    }

    /** The plan of a command run in a terminal, when it starts a Python training job. */
    private async trainingPlan(text: string, cwd: string | undefined): Promise<LaunchPlan | undefined> {
        if (!text || /^(rankdebug|cd|ls|git|cat|echo|pip|conda|source|\.)\b/.test(text)) return undefined;
        let plan: LaunchPlan | PlanError;
        try {
            plan = await this.ctx.server.execute<LaunchPlan | PlanError>('rankdebug.plan', { text, language: 'shellscript', settings: cwd ? { cwd } : undefined });
        } catch {
            return undefined;
        }
        if (isPlanError(plan) || plan.launcher === 'other' || !plan.entry || (plan.launcher === 'python' && plan.entry.kind === 'cli')) return undefined;
        return plan;
    }

    /** Remembers training commands run in terminals; offers to debug one that failed. */
    private async onCommandEnd(e: vscode.TerminalShellExecutionEndEvent): Promise<void> {
        const text = e.execution.commandLine.value.trim();
        const cwd = e.execution.cwd?.fsPath ?? e.terminal.shellIntegration?.cwd?.fsPath;
        const plan = await this.trainingPlan(text, cwd);
        if (!plan) return;
        this.last = { text, cwd, exitCode: e.exitCode };
        this.host.setContext('rankdebug.hasLastCommand', true);
        const failed = e.exitCode !== undefined && e.exitCode !== 0 && e.exitCode !== 130;
        if (!failed || !this.host.settings().offerDebugOnFailure) return;
        const debug = this.host.l10n.t('Debug It');
        const choice = await this.host.ask(this.host.l10n.t('{0} exited with code {1}. Debug it with Rank Debugger?', titleOf(plan), e.exitCode), debug);
        if (choice === debug) await this.debugLast();
    }

    /** Debug Last Training Command. */
    async debugLast(): Promise<void> {
        if (!this.last) {
            this.host.showInfo(this.host.l10n.t('No training command has run in a terminal with shell integration yet. Run one, or use Debug Training Command.'));
            return;
        }
        await this.host.debugCommand(this.ctx, [{ text: this.last.text, cwd: this.last.cwd }], { alwaysPick: true });
    }

    dispose(): void {
        this.watcher?.close();
        try {
            fs.rmSync(this.endpoints, { recursive: true, force: true });
        } catch {
            // best effort
        }
        this.disposables.forEach((d) => d.dispose());
    }
}
