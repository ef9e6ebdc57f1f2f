/**
 * Fakes of what the group commands take (extension/src/groups/host.ts and the window's job
 * state), and a supervisor's control socket: a real Unix socket in a private folder that
 * records each command line and answers as the test says.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { controlSocket } from '../../../../extension/src/core/control';
import type { LaunchEvent } from '../../../../extension/src/core/events';
import type { GroupsHost } from '../../../../extension/src/groups/host';
import type { JobState, TrackedJob } from '../../../../extension/src/jobs/jobState';
import { Emitter } from '../debug/fakes';
import { FakeRoomHost } from '../jobs/fakes';

export class FakeGroupsHost extends FakeRoomHost implements GroupsHost {
    readonly warnings: string[] = [];
    /** Status bar messages, the last one shown last. */
    readonly status: string[] = [];
    readonly contexts = new Map<string, unknown>();
    readonly contextCalls: string[] = [];
    active: vscode.DebugSession | undefined;
    readonly activeChanged = new Emitter<vscode.DebugSession | undefined>();
    readonly onDidChangeActiveDebugSession = this.activeChanged.event;
    /** Quick-picks shown: their title and item labels; the test's `choose` answers each. */
    readonly quickPicks: { title: string; labels: string[] }[] = [];
    choose: (labels: string[]) => string | undefined = () => undefined;
    /** Input boxes shown; `inputs` answers them in turn (none left: cancelled). */
    readonly inputBoxes: vscode.InputBoxOptions[] = [];
    inputs: (string | undefined)[] = [];
    cursorAt: { uri: vscode.Uri; line: number } | undefined;

    showWarning(message: string): void {
        this.warnings.push(message);
    }

    setStatus(text: string): vscode.Disposable {
        this.status.push(text);
        return { dispose: () => undefined };
    }

    setContext(key: string, value: unknown): void {
        this.contextCalls.push(key);
        this.contexts.set(key, value);
    }

    activeSession(): vscode.DebugSession | undefined {
        return this.active;
    }

    showQuickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: { title: string }): Thenable<T | undefined> {
        const labels = items.map((i) => i.label);
        this.quickPicks.push({ title: options.title, labels });
        const label = this.choose(labels);
        return Promise.resolve(items.find((i) => i.label === label));
    }

    showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
        this.inputBoxes.push(options);
        return Promise.resolve(this.inputs.shift());
    }

    cursor(): { uri: vscode.Uri; line: number } | undefined {
        return this.cursorAt;
    }
}

/** A `file:` Uri as the commands read it. */
export function fileUri(fsPath: string): vscode.Uri {
    return { scheme: 'file', fsPath, path: fsPath, toString: () => `file://${fsPath}` } as unknown as vscode.Uri;
}

/** The window's job state as the group commands read it: jobs this window debugs, by session and id. */
export class FakeJobState {
    jobs: TrackedJob[] = [];
    readonly changed = new Emitter<void>();
    readonly rankEvents = new Emitter<{ job: TrackedJob; event: LaunchEvent }>();
    readonly onDidChange = this.changed.event;
    readonly onDidRankEvent = this.rankEvents.event;

    all(): TrackedJob[] {
        return this.jobs;
    }
    byJobId(id: string): TrackedJob | undefined {
        return this.jobs.find((j) => j.job === id);
    }
    bySession(id: string): TrackedJob | undefined {
        return this.jobs.find((j) => j.parent?.id === id || [...j.ranks.values()].some((r) => r.session?.id === id));
    }
    ofSession(session: vscode.DebugSession): TrackedJob | undefined {
        return this.bySession(session.id) ?? (session.parentSession ? this.bySession(session.parentSession.id) : undefined);
    }
    update(job: TrackedJob, fn: (j: TrackedJob) => void): void {
        fn(job);
        this.changed.fire();
    }

    get asState(): JobState {
        return this as unknown as JobState;
    }
}

/** A job this window debugs, its supervisor's folder `dir`, its parent session `parent-J`. */
export function tracked(id: string, dir: string, extra: Partial<TrackedJob> = {}): TrackedJob {
    return { key: id, job: id, title: `torchrun · ${id}`, dir, ranks: new Map(), parent: { id: `parent-${id}` } as vscode.DebugSession, ...extra } as TrackedJob;
}

/** A supervisor's control socket: records each command, answers `{"ok": true, "ranks": ...}` or an error. */
export class FakeSupervisor {
    readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-groups-'));
    readonly received: Record<string, unknown>[] = [];
    private readonly server: net.Server;

    constructor(private readonly answer: (cmd: Record<string, unknown>) => { ranks: number[] } | { error: string }) {
        this.server = net.createServer((conn) => {
            let buffer = '';
            conn.setEncoding('utf8');
            conn.on('data', (chunk: string) => {
                buffer += chunk;
                const end = buffer.indexOf('\n');
                if (end < 0) return;
                const cmd = JSON.parse(buffer.slice(0, end)) as Record<string, unknown>;
                this.received.push(cmd);
                const a = this.answer(cmd);
                conn.write(`${JSON.stringify('error' in a ? { error: { message: a.error } } : { ok: true, ranks: a.ranks })}\n`);
            });
        });
    }

    listen(): Promise<this> {
        return new Promise((resolve) => this.server.listen(controlSocket(this.dir), () => resolve(this)));
    }

    close(): Promise<void> {
        return new Promise((resolve) =>
            this.server.close(() => {
                fs.rmSync(this.dir, { recursive: true, force: true });
                resolve();
            }),
        );
    }
}
