/**
 * Fakes of what the debug parts take from VS Code (extension/src/debug/host.ts), the language
 * server and the jobs' state: they record what they are asked and answer as the tests set them.
 */
import type * as vscode from 'vscode';
import type { CommandServer } from '../../../../extension/src/debug/configuration';
import type { DebugHost, Localize } from '../../../../extension/src/debug/host';
import type { JobStore } from '../../../../extension/src/debug/jobAdapter';
import type { SourceBreakpoints } from '../../../../extension/src/debug/rankLink';
import type { LaunchEvent } from '../../../../extension/src/core/events';
import type { JobInfo } from '../../../../extension/src/core/jobList';
import type { TrackedJob, TrackedRank } from '../../../../extension/src/jobs/jobState';

/** `vscode.l10n` without a bundle: the English message with its `{N}` filled in. */
export const l10n: Localize = {
    t: (message, ...args) => message.replace(/\{(\d+)\}/g, (_m, i: string) => String(args[Number(i)])),
};

/** `vscode.EventEmitter`: listeners called in order, synchronously. */
export class Emitter<T> implements vscode.EventEmitter<T> {
    private listeners: ((e: T) => unknown)[] = [];

    readonly event: vscode.Event<T> = (listener) => {
        this.listeners.push(listener);
        return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
    };

    fire(data: T): void {
        for (const l of [...this.listeners]) l(data);
    }

    dispose(): void {
        this.listeners = [];
    }
}

let sessionCount = 0;

/** A debug session with this configuration (and parent). */
export function fakeSession(configuration: vscode.DebugConfiguration, parentSession?: vscode.DebugSession): vscode.DebugSession {
    sessionCount += 1;
    return { id: `session-${sessionCount}`, type: configuration.type, name: configuration.name, configuration, parentSession, workspaceFolder: undefined } as unknown as vscode.DebugSession;
}

/** A terminal the fake host opened: its name and everything its pseudoterminal wrote. */
export interface FakeTerminal {
    name: string;
    pty: vscode.Pseudoterminal;
    written: string;
    shown: boolean;
}

/** A child session the adapter asked for. */
export interface ChildStart {
    parent: vscode.DebugSession;
    config: vscode.DebugConfiguration;
    child?: vscode.DebugSession;
}

export class FakeHost implements DebugHost {
    readonly l10n = l10n;
    readonly errors: string[] = [];
    readonly commands: string[] = [];
    readonly logged: { info: string[]; warn: string[] } = { info: [], warn: [] };
    readonly log = { info: (m: string) => this.logged.info.push(m), warn: (m: string) => this.logged.warn.push(m) };
    /** The `rankdebug.justMyCode` setting, and the scopes it was read for. */
    justMyCodeSetting = true;
    readonly justMyCodeScopes: (vscode.Uri | undefined)[] = [];
    breakpoints: string[] = [];
    jobs: JobInfo[] = [];
    listed = 0;
    readonly terminals: FakeTerminal[] = [];
    readonly starts: ChildStart[] = [];
    /** Whether VS Code starts the next child sessions (each call takes the first answer left; then true). */
    startAnswers: boolean[] = [];
    private readonly started = new Emitter<vscode.DebugSession>();
    private readonly terminated = new Emitter<vscode.DebugSession>();
    readonly onDidStartDebugSession = this.started.event;
    readonly onDidTerminateDebugSession = this.terminated.event;
    /** The `rankdebug.maxSessions` setting. */
    maxSessionsSetting = 16;
    /** The session the user looks at; `focus` changes it. */
    active: vscode.DebugSession | undefined;
    private readonly activeChanged = new Emitter<vscode.DebugSession | undefined>();
    readonly onDidChangeActiveDebugSession = this.activeChanged.event;
    /** The editor's breakpoints per source; `changeBreakpoints` says they changed. */
    sources: SourceBreakpoints[] = [];
    private readonly breakpointsChanged = new Emitter<unknown>();
    readonly onDidChangeBreakpoints = this.breakpointsChanged.event;
    /** Sessions the adapter ended (`stopSession`). */
    readonly stopped: vscode.DebugSession[] = [];

    maxSessions(): number {
        return this.maxSessionsSetting;
    }

    /** Like VS Code: the session ends (onDidTerminateDebugSession) before the answer. */
    stopSession(session: vscode.DebugSession): Thenable<void> {
        this.stopped.push(session);
        this.terminated.fire(session);
        return Promise.resolve();
    }

    activeSession(): vscode.DebugSession | undefined {
        return this.active;
    }

    focus(session: vscode.DebugSession | undefined): void {
        this.active = session;
        this.activeChanged.fire(session);
    }

    sourceBreakpoints(): SourceBreakpoints[] {
        return this.sources;
    }

    changeBreakpoints(sources: SourceBreakpoints[]): void {
        this.sources = sources;
        this.breakpointsChanged.fire(undefined);
    }

    showError(message: string): void {
        this.errors.push(message);
    }

    justMyCode(scope?: vscode.Uri): boolean {
        this.justMyCodeScopes.push(scope);
        return this.justMyCodeSetting;
    }

    executeCommand(command: string): Thenable<unknown> {
        this.commands.push(command);
        return Promise.resolve(undefined);
    }

    pythonBreakpoints(): string[] {
        return this.breakpoints;
    }

    cliPrefix(python: string): string[] {
        return [python, '/ext/rankdebug_main.py'];
    }

    listJobs(): Promise<readonly JobInfo[]> {
        this.listed += 1;
        return Promise.resolve(this.jobs);
    }

    emitter<T>(): vscode.EventEmitter<T> {
        return new Emitter<T>();
    }

    /** Opens the terminal at once, as VS Code does when it is shown. */
    createTerminal(name: string, pty: vscode.Pseudoterminal): vscode.Terminal {
        const terminal: FakeTerminal = { name, pty, written: '', shown: false };
        this.terminals.push(terminal);
        pty.onDidWrite((text) => (terminal.written += text));
        pty.open(undefined);
        return { name, show: () => (terminal.shown = true) } as unknown as vscode.Terminal;
    }

    /** Like VS Code: the child session starts (onDidStartDebugSession) before the answer. */
    startChildSession(parent: vscode.DebugSession, config: vscode.DebugConfiguration): Thenable<boolean> {
        const start: ChildStart = { parent, config };
        this.starts.push(start);
        const ok = this.startAnswers.shift() ?? true;
        if (ok) {
            start.child = fakeSession(config, parent);
            this.started.fire(start.child);
        }
        return Promise.resolve(ok);
    }

    /** VS Code ends a session. */
    endSession(session: vscode.DebugSession): void {
        this.terminated.fire(session);
    }
}

/** The jobs' state (jobState.ts `JobState`) as the adapter and the tracker use it. */
export class FakeJobs implements JobStore {
    readonly jobs = new Map<string, TrackedJob>();
    /** Every job ever added, by key, kept after its removal. */
    readonly added = new Map<string, TrackedJob>();
    readonly removed: string[] = [];
    readonly rankStates: [string, TrackedRank['state'] | undefined][] = [];
    readonly early = new Map<string, TrackedRank['state']>();
    /** Rank events the adapter passed on, with the key of their job. */
    readonly rankEvents: [string, LaunchEvent][] = [];

    add(job: TrackedJob): TrackedJob {
        this.jobs.set(job.key, job);
        this.added.set(job.key, job);
        return job;
    }

    update(job: TrackedJob, fn: (j: TrackedJob) => void): void {
        fn(job);
    }

    remove(key: string): void {
        this.jobs.delete(key);
        this.removed.push(key);
    }

    /** As JobState: a rank whose session ended leaves its job. */
    setRankState(session: vscode.DebugSession, state: TrackedRank['state'] | undefined): void {
        this.rankStates.push([session.id, state]);
        for (const job of this.jobs.values()) {
            for (const r of job.ranks.values()) {
                if (r.session?.id !== session.id) continue;
                if (state === undefined) job.ranks.delete(r.rank);
                else r.state = state;
            }
        }
    }

    rankEvent(job: TrackedJob, event: LaunchEvent): void {
        this.rankEvents.push([job.key, event]);
    }

    takeEarlyState(session: vscode.DebugSession | undefined): TrackedRank['state'] | undefined {
        const state = session ? this.early.get(session.id) : undefined;
        if (session) this.early.delete(session.id);
        return state;
    }
}

/** The language server's `workspace/executeCommand`: records each call, answers with `reply`. */
export class FakeServer implements CommandServer {
    readonly calls: { command: string; arg: unknown }[] = [];

    constructor(private readonly reply: (command: string, arg: unknown) => unknown = () => undefined) {}

    async execute<T>(command: string, arg: unknown): Promise<T> {
        this.calls.push({ command, arg });
        return this.reply(command, arg) as T;
    }
}

/** Waits until `check` holds (polling), or fails saying what did not happen. */
export async function until(check: () => boolean, what: string, ms = 8000): Promise<void> {
    const end = Date.now() + ms;
    while (!check()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
    }
}
