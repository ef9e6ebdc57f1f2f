/**
 * The `rankdebug` debug type.
 *
 * - `launch` (parent session, inline adapter): runs `rankdebug launch --json` in a
 *   pseudoterminal the user sees and types into, reads its `listening` lines and starts one
 *   child session `rank N` per chosen rank (`parentSession`, `lifecycleManagedByParent`).
 *   Stopping the parent stops the job; the job's exit ends the parent.
 * - `attach` with `connect` (a rank): `vscode.DebugAdapterServer` on that rank's debugpy port.
 * - `attach` with `job` (+ `ranks`): a parent for ranks of a running job, from the registry.
 *
 * One resolver per request kind normalises a configuration before the session starts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { rankConfiguration, registryRanks, specText, whereOf, type AttachConfiguration, type DebugPlanReply } from './core/debugPlan';
import { LineSplitter, parseEvent, type LaunchEvent, type ListeningEvent } from './core/events';
import { findJob, listJobs, type JobEntry } from './core/jobs';
import { CHECK_RANKS, type CheckRanksReply } from './core/rankCheck';
import { isPlanError, plainRankList, titleOf, type PlanError } from './core/ranks';
import { join } from './core/shell';
import type { JobState, TrackedJob } from './jobState';
import { log } from './log';
import { cliPrefix } from './python';
import type { Server } from './server';
import { getSettings } from './settings';

export const TYPE = 'rankdebug';

/** What the launch resolver computes: the process to run. */
export interface JobSpec {
    argv: string[];
    env: Record<string, string>;
    cwd: string;
    ranks: number[] | null;
    rankSpec: string;
    worldSize: number | null;
    /** The server's title of the job (`rankdebug.debugPlan` → `title`). */
    title: string;
    /** Every rank serves a control socket (`--arm`): attach, evaluate or read stacks later. */
    armed: boolean;
    /** The server's child attach configuration per chosen rank (`configurations`). */
    configurations?: AttachConfiguration[];
}

/** Where a parent session for a running job finds its ranks. */
export interface AttachSpec {
    job: string;
    supervisorPid?: number;
    ranks: { rank: number; host: string; port: number }[];
    /** A JSON-lines file of `rankdebug launch --json` events to follow (the terminal shim). */
    events?: string;
    /** Stop the job when the parent session stops (jobs the shim started). */
    stopJobOnEnd?: boolean;
    worldSize?: number | null;
    title?: string;
}

/** Fields the extension adds to configurations; user configurations never carry them. */
export interface RankdebugConfiguration extends vscode.DebugConfiguration {
    command?: string | string[];
    cwd?: string;
    env?: Record<string, string>;
    ranks?: string | number | number[];
    /** launch: arm every rank (`rankdebug launch --arm`); with no `ranks`, none is debugged from the start. */
    arm?: boolean;
    connect?: { host?: string; port: number };
    job?: string | null;
    justMyCode?: boolean;
    python?: string;
    /** Where the command is, when it came from an editor: `{uri, line}` (0-based) or `{text, cwd}`. */
    source?: { uri?: string; line?: number; text?: string; cwd?: string; argv?: string[] };
    __job?: JobSpec;
    __attach?: AttachSpec;
    __rank?: { rank: number; job?: string; parentKey?: string };
}

/** Enabled line breakpoints in Python files as `FILE:LINE` (1-based), for `--break`. */
export function pythonBreakpoints(): string[] {
    return vscode.debug.breakpoints
        .filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint && b.enabled)
        .filter((b) => b.location.uri.scheme === 'file' && b.location.uri.fsPath.endsWith('.py'))
        .map((b) => `${b.location.uri.fsPath}:${b.location.range.start.line + 1}`);
}

/** The job's process from the server's debug plan. */
function jobSpecOf(result: DebugPlanReply): JobSpec {
    return {
        argv: result.argv,
        env: { ...(result.env ?? {}) },
        cwd: result.cwd,
        ranks: result.ranks,
        rankSpec: result.rankSpec,
        worldSize: result.plan.world_size ?? null,
        title: result.title ?? titleOf(result.plan),
        armed: result.armed === true,
        configurations: result.configurations,
    };
}

/** A launch configuration's overrides of the server's settings for this request. */
function overridesOf(config: RankdebugConfiguration): Record<string, unknown> {
    const overrides: Record<string, unknown> = {};
    const cwd = config.cwd ?? config.source?.cwd;
    if (cwd) overrides.cwd = cwd;
    if (config.env && Object.keys(config.env).length) overrides.env = config.env;
    if (config.python) overrides.interpreter = cliPrefix(config.python);
    return overrides;
}

/** The server's error as shown to the user, with its line (1-based) when it has one. */
export function planErrorText(result: PlanError): string {
    return result.error.line ? `${result.error.message} (${vscode.l10n.t('line {0}', result.error.line)})` : result.error.message;
}

export class ConfigurationProvider implements vscode.DebugConfigurationProvider {
    constructor(private readonly server: Server) {}

    /** F5 with no launch.json: debug the command under the cursor. */
    async resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
        if (!config.type && !config.request && !config.name) {
            await vscode.commands.executeCommand('rankdebug.debugCommand');
            return undefined;
        }
        return config;
    }

    async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<vscode.DebugConfiguration | undefined | null> {
        try {
            if (config.__rank || config.__job || config.__attach) return config;
            if (config.request === 'launch') return await this.resolveLaunch(folder, config);
            if (config.request === 'attach') return await this.resolveAttach(config);
            throw new Error(vscode.l10n.t('"request" must be "launch" or "attach"'));
        } catch (e) {
            void vscode.window.showErrorMessage(vscode.l10n.t('Rank Debugger: {0}', e instanceof Error ? e.message : String(e)));
            return undefined;
        }
    }

    /**
     * launch: asks the language server what to run (`rankdebug.debugPlan`) for the command and
     * ranks; the server reads `ranks` (default rank 0, none when only armed) and names the job.
     */
    private async resolveLaunch(folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<RankdebugConfiguration> {
        const where = whereOf(config);
        if (!where) throw new Error(vscode.l10n.t('a launch configuration needs "command": the training command to run'));
        const result = await this.server.execute<DebugPlanReply | PlanError>('rankdebug.debugPlan', {
            ...where,
            ...(config.ranks !== undefined && config.ranks !== null ? { ranks: config.ranks } : {}),
            ...(config.arm === true ? { arm: true } : {}),
            breakpoints: pythonBreakpoints(),
            settings: overridesOf(config),
        });
        if (isPlanError(result)) throw new Error(planErrorText(result));
        for (const w of result.warnings ?? []) log().warn(w);
        config.__job = jobSpecOf(result);
        config.justMyCode ??= getSettings(folder?.uri).justMyCode;
        return config;
    }

    /**
     * The ranks of a running job an attach configuration names (default: every listening rank),
     * read by the server (`rankdebug.checkRanks`). Only when the server cannot run, a plain list
     * of rank numbers is read here (core/ranks.ts `plainRankList`).
     */
    private async attachRanks(config: RankdebugConfiguration, job: JobEntry, listening: readonly number[]): Promise<readonly number[]> {
        const spec = specText(config.ranks);
        if (spec === undefined) return listening;
        let reply: CheckRanksReply;
        try {
            reply = await this.server.execute<CheckRanksReply>(CHECK_RANKS, { spec, ranks: registryRanks(job), worldSize: job.world_size ?? null });
        } catch (e) {
            const plain = plainRankList(spec);
            if (!plain) throw e;
            return plain;
        }
        if (isPlanError(reply)) throw new Error(reply.error.message);
        if (reply.ranks === null) throw new Error(vscode.l10n.t('which ranks "{0}" names in job {1} is not known here; give rank numbers', spec, job.job));
        return reply.ranks;
    }

    /** attach: `connect` goes straight to the rank; `job` + `ranks` becomes a parent over the job's ranks. */
    private async resolveAttach(config: RankdebugConfiguration): Promise<RankdebugConfiguration> {
        config.justMyCode ??= getSettings().justMyCode;
        if (config.connect) {
            if (!config.connect.port) throw new Error(vscode.l10n.t('"connect" needs a "port"'));
            return config;
        }
        const jobs = listJobs();
        const job = findJob(config.job ?? 'latest', jobs);
        if (!job) throw new Error(config.job ? vscode.l10n.t('no running job {0}', config.job) : vscode.l10n.t('no running training job was found'));
        const entries = job.rankEntries.filter((r) => typeof r.port === 'number' && r.port > 0 && r.state !== 'exited');
        const wanted = await this.attachRanks(config, job, entries.map((r) => r.rank));
        const ranks = entries.filter((r) => wanted.includes(r.rank)).map((r) => ({ rank: r.rank, host: r.host ?? '127.0.0.1', port: r.port as number }));
        if (!ranks.length) throw new Error(vscode.l10n.t('no rank of job {0} is listening for a debugger', job.job));
        if (ranks.length === 1 && config.name.startsWith('rank ')) {
            config.connect = { host: ranks[0].host, port: ranks[0].port };
            return config;
        }
        config.__attach = {
            job: job.job,
            supervisorPid: job.pid,
            ranks,
            worldSize: job.world_size ?? null,
            title: job.launcher ?? job.job,
        };
        return config;
    }
}

/** Child sessions connect to the rank's debugpy adapter; parents run in this process. */
export class DescriptorFactory implements vscode.DebugAdapterDescriptorFactory {
    constructor(private readonly state: JobState) {}

    createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
        const config = session.configuration as RankdebugConfiguration;
        if (config.connect) return new vscode.DebugAdapterServer(config.connect.port, config.connect.host ?? '127.0.0.1');
        return new vscode.DebugAdapterInlineImplementation(new JobAdapter(session, this.state));
    }
}

/** Tracks child sessions' stopped/continued events for the jobs view and the status bar. */
export class RankTrackerFactory implements vscode.DebugAdapterTrackerFactory {
    constructor(private readonly state: JobState) {}

    createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker | undefined {
        if (!(session.configuration as RankdebugConfiguration).__rank) return undefined;
        const state = this.state;
        return {
            onDidSendMessage(m: { type?: string; event?: string; body?: { allThreadsContinued?: boolean } }) {
                if (m.type !== 'event') return;
                if (m.event === 'stopped') state.setRankState(session, 'paused');
                else if (m.event === 'continued') state.setRankState(session, 'attached');
            },
            onWillReceiveMessage(m: { type?: string; command?: string }) {
                if (m.type === 'request' && ['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue'].includes(m.command ?? '')) {
                    state.setRankState(session, 'attached');
                }
            },
            onExit() {
                state.setRankState(session, undefined);
            },
        };
    }
}

interface DapRequest {
    seq: number;
    type: 'request';
    command: string;
    arguments?: Record<string, unknown>;
}

/**
 * The parent session's adapter (DAP in-process). It has no threads of its own: it owns the
 * job's process and its rank sessions.
 */
export class JobAdapter implements vscode.DebugAdapter {
    private readonly emitter = new vscode.EventEmitter<vscode.DebugProtocolMessage>();
    readonly onDidSendMessage = this.emitter.event;
    private seq = 1;
    private proc: ChildProcess | undefined;
    private exited: Promise<number> | undefined;
    private pty: vscode.EventEmitter<string> | undefined;
    private tracked: TrackedJob | undefined;
    private terminatedSent = false;
    private readonly disposables: vscode.Disposable[] = [];
    private readonly started = new Set<number>();
    private watcher: fs.FSWatcher | undefined;
    private eventsOffset = 0;
    private readonly splitter = new LineSplitter();
    private stopJobOnEnd = true;

    constructor(
        private readonly session: vscode.DebugSession,
        private readonly state: JobState,
    ) {
        this.disposables.push(
            vscode.debug.onDidTerminateDebugSession((s) => {
                if (s.parentSession?.id !== this.session.id || !this.tracked) return;
                // The rank can be attached again (its adapter takes a new client).
                const rank = (s.configuration as RankdebugConfiguration).__rank?.rank;
                if (rank !== undefined) this.started.delete(rank);
                const still = [...this.tracked.ranks.values()].some((r) => r.session && r.session.id !== s.id);
                this.state.setRankState(s, undefined);
                // A parent over a job it does not own ends with its last rank.
                if (!this.proc && !still && !this.watcher) this.sendTerminated();
            }),
        );
    }

    private get config(): RankdebugConfiguration {
        return this.session.configuration as RankdebugConfiguration;
    }

    handleMessage(message: vscode.DebugProtocolMessage): void {
        const req = message as DapRequest;
        if (req.type !== 'request') return;
        void this.handle(req).catch((e: unknown) => this.respond(req, false, {}, e instanceof Error ? e.message : String(e)));
    }

    private async handle(req: DapRequest): Promise<void> {
        switch (req.command) {
            case 'initialize':
                this.respond(req, true, { supportsConfigurationDoneRequest: false, supportsTerminateRequest: true });
                return;
            case 'launch':
                this.launch();
                this.respond(req, true);
                return;
            case 'attach':
                this.attach();
                this.respond(req, true);
                return;
            case 'terminate':
                this.respond(req, true);
                await this.stop();
                return;
            case 'disconnect':
                await this.stop();
                this.respond(req, true);
                return;
            case 'threads':
                this.respond(req, true, { threads: [] });
                return;
            default:
                this.respond(req, false, {}, vscode.l10n.t('Select a rank in the Call Stack: the job session itself runs no Python.'));
        }
    }

    private respond(req: DapRequest, success: boolean, body: Record<string, unknown> = {}, message?: string): void {
        this.emitter.fire({ seq: this.seq++, type: 'response', request_seq: req.seq, command: req.command, success, body, ...(message ? { message } : {}) } as vscode.DebugProtocolMessage);
    }

    private event(event: string, body: Record<string, unknown> = {}): void {
        this.emitter.fire({ seq: this.seq++, type: 'event', event, body } as vscode.DebugProtocolMessage);
    }

    private output(text: string, category = 'console'): void {
        this.event('output', { category, output: text.endsWith('\n') ? text : `${text}\n` });
    }

    private sendTerminated(): void {
        if (this.terminatedSent) return;
        this.terminatedSent = true;
        this.event('terminated');
        if (this.tracked) this.state.remove(this.tracked.key);
    }

    /** Starts `rankdebug launch --json` in a pseudoterminal and follows its events. */
    private launch(): void {
        const spec = this.config.__job;
        if (!spec) throw new Error('internal: launch without a resolved job');
        const key = `launch:${this.session.id}`;
        this.tracked = this.state.add({
            key,
            title: spec.title,
            worldSize: spec.worldSize,
            command: spec.argv,
            parent: this.session,
            ranks: new Map(),
            armed: spec.armed,
            claimed: this.started,
            startRank: (ep) => this.startRank({ event: 'listening', ...ep }),
        });
        const pty = new vscode.EventEmitter<string>();
        this.pty = pty;
        const closeEmitter = new vscode.EventEmitter<number | void>();
        const env: Record<string, string> = { ...(process.env as Record<string, string>), ...spec.env, PYTHONUNBUFFERED: '1' };
        const python = spec.argv[0];
        if (path.isAbsolute(python)) env.PATH = `${path.dirname(python)}${path.delimiter}${env.PATH ?? ''}`;
        const terminal = vscode.window.createTerminal({
            name: `rankdebug: ${spec.title}`,
            iconPath: new vscode.ThemeIcon('debug-alt'),
            pty: {
                onDidWrite: pty.event,
                onDidClose: closeEmitter.event,
                open: () => pty.fire(`\x1b[2m$ ${join(spec.argv)}\x1b[0m\r\n`),
                close: () => void this.stop(),
                handleInput: (data: string) => {
                    if (data === '\x03') this.proc?.kill('SIGINT');
                    else if (this.proc?.stdin?.writable) {
                        this.proc.stdin.write(data.replace(/\r/g, '\n'));
                        pty.fire(data.replace(/\r/g, '\r\n'));
                    }
                },
            },
        });
        terminal.show(true);
        this.state.update(this.tracked, (j) => (j.terminal = terminal));
        if (spec.armed && !spec.ranks?.length) {
            this.output(vscode.l10n.t('Every rank is armed, none is debugged now: attach, evaluate or read stacks from Training Jobs (Run and Debug).'));
        }
        log().info(`launch (cwd ${spec.cwd}): ${join(spec.argv)}`);
        const proc = spawn(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
        this.proc = proc;
        this.state.update(this.tracked, (j) => (j.supervisorPid = proc.pid));
        this.exited = new Promise<number>((resolve) => {
            proc.on('error', (e) => {
                pty.fire(`rankdebug: ${e.message}\r\n`);
                this.output(vscode.l10n.t('Could not start {0}: {1}', spec.argv[0], e.message), 'stderr');
                resolve(127);
            });
            proc.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
        });
        proc.stdout?.setEncoding('utf8');
        proc.stderr?.setEncoding('utf8');
        proc.stdout?.on('data', (chunk: string) => {
            for (const line of this.splitter.push(chunk)) this.onLine(line);
        });
        proc.stderr?.on('data', (chunk: string) => pty.fire(chunk.replace(/\r?\n/g, '\r\n')));
        void this.exited.then((code) => {
            for (const line of this.splitter.flush()) this.onLine(line);
            pty.fire(`\r\n\x1b[2m${vscode.l10n.t('[job exited with code {0}]', code)}\x1b[0m\r\n`);
            this.proc = undefined;
            this.sendTerminated();
        });
    }

    /** A parent over ranks of a job already running (jobs view, terminal shim, launch.json). */
    private attach(): void {
        const spec = this.config.__attach;
        if (!spec) throw new Error('internal: attach without a resolved job');
        this.stopJobOnEnd = spec.stopJobOnEnd ?? false;
        const key = `attach:${this.session.id}`;
        this.tracked = this.state.add({
            key,
            job: spec.job,
            title: spec.title ?? spec.job,
            worldSize: spec.worldSize,
            parent: this.session,
            supervisorPid: spec.supervisorPid,
            ranks: new Map(),
            claimed: this.started,
            // A parent that follows the job's events (the terminal shim) starts its ranks' sessions itself.
            startRank: spec.events ? (ep) => this.startRank({ event: 'listening', ...ep }) : undefined,
        });
        for (const r of spec.ranks) void this.startRank({ event: 'listening', rank: r.rank, host: r.host, port: r.port, job: spec.job });
        if (spec.events) this.follow(spec.events);
    }

    /** Follows a JSON-lines events file as it grows (written by the terminal shim). */
    private follow(file: string): void {
        const read = (): void => {
            let data: Buffer;
            try {
                data = fs.readFileSync(file);
            } catch {
                return;
            }
            if (data.length <= this.eventsOffset) return;
            const chunk = data.subarray(this.eventsOffset).toString('utf8');
            this.eventsOffset = data.length;
            for (const line of this.splitter.push(chunk)) this.onLine(line);
        };
        try {
            this.watcher = fs.watch(file, () => read());
        } catch {
            // the file is gone already
        }
        read();
    }

    private onLine(line: string): void {
        const ev: LaunchEvent | undefined = parseEvent(line);
        if (!ev) {
            if (line.trim()) this.pty?.fire(`${line}\r\n`);
            return;
        }
        const tracked = this.tracked;
        switch (ev.event) {
            case 'job':
                if (tracked) this.state.update(tracked, (j) => (j.job = ev.job));
                if (ev.pid && tracked && !this.proc) this.state.update(tracked, (j) => (j.supervisorPid = ev.pid));
                break;
            case 'listening':
                void this.startRank(ev);
                break;
            case 'error':
                void vscode.window.showErrorMessage(vscode.l10n.t('Rank Debugger: {0}', ev.message));
                this.output(ev.message, 'stderr');
                if (!this.proc) this.finish();
                break;
            case 'exited':
                this.output(vscode.l10n.t('The job exited with code {0}.', ev.code));
                if (!this.proc) this.finish();
                break;
            default:
                break;
        }
    }

    private finish(): void {
        this.watcher?.close();
        this.watcher = undefined;
        this.sendTerminated();
    }

    /**
     * Starts the child session `rank N` that attaches to the rank's debugpy adapter; once per
     * rank (its adapter takes one client), whether the supervisor's `listening` event or an
     * Attach from Training Jobs comes first. True when the rank has a session or is getting one.
     */
    private async startRank(ev: ListeningEvent): Promise<boolean> {
        if (this.terminatedSent) return false;
        if (this.started.has(ev.rank)) return true;
        this.started.add(ev.rank);
        const base = rankConfiguration(this.config.__job?.configurations, ev.rank);
        const config: RankdebugConfiguration = {
            ...base,
            job: ev.job ?? base.job ?? null,
            connect: { host: ev.host, port: ev.port },
            justMyCode: this.config.justMyCode ?? getSettings().justMyCode,
            __rank: { rank: ev.rank, job: ev.job, parentKey: this.tracked?.key },
        };
        const t0 = Date.now();
        const ok = await vscode.debug.startDebugging(this.session.workspaceFolder, config, {
            parentSession: this.session,
            lifecycleManagedByParent: true,
            consoleMode: vscode.DebugConsoleMode.MergeWithParent,
            compact: false,
            suppressSaveBeforeStart: true,
        } as vscode.DebugSessionOptions);
        log().info(`rank ${ev.rank}: ${ok ? 'attached' : 'attach failed'} (${ev.host}:${ev.port}, ${Date.now() - t0} ms)`);
        if (!ok) {
            this.started.delete(ev.rank);
            if (this.tracked) this.state.update(this.tracked, () => undefined);
            return false;
        }
        const child = findChild(this.session, ev.rank);
        if (this.tracked) {
            this.state.update(this.tracked, (j) => {
                j.job ??= ev.job;
                j.ranks.set(ev.rank, { rank: ev.rank, session: child, state: this.state.takeEarlyState(child) ?? 'attached' });
            });
        }
        return true;
    }

    /** Stops the job this session owns (SIGTERM to `rankdebug launch`, which ends every process). */
    private async stop(): Promise<void> {
        const proc = this.proc;
        if (proc && proc.exitCode === null) {
            proc.kill('SIGTERM');
            const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
            await this.exited;
            clearTimeout(timer);
        } else if (!proc && this.stopJobOnEnd && this.tracked?.supervisorPid) {
            try {
                process.kill(this.tracked.supervisorPid, 'SIGTERM');
            } catch {
                // gone already
            }
        }
        this.finish();
    }

    dispose(): void {
        this.watcher?.close();
        this.disposables.forEach((d) => d.dispose());
        if (this.proc && this.proc.exitCode === null) this.proc.kill('SIGTERM');
        if (this.tracked) this.state.remove(this.tracked.key);
        this.emitter.dispose();
    }
}

const childSessions = new Map<string, vscode.DebugSession>();

/** Remembers rank sessions as they start, so a parent can find its children. */
export function trackSessions(): vscode.Disposable {
    return vscode.Disposable.from(
        vscode.debug.onDidStartDebugSession((s) => {
            const rank = (s.configuration as RankdebugConfiguration).__rank;
            if (rank && s.parentSession) childSessions.set(`${s.parentSession.id}/${rank.rank}`, s);
        }),
        vscode.debug.onDidTerminateDebugSession((s) => {
            const rank = (s.configuration as RankdebugConfiguration).__rank;
            if (rank && s.parentSession) childSessions.delete(`${s.parentSession.id}/${rank.rank}`);
        }),
    );
}

function findChild(parent: vscode.DebugSession, rank: number): vscode.DebugSession | undefined {
    return childSessions.get(`${parent.id}/${rank}`);
}
