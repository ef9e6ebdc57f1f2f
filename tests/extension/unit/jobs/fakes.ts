/**
 * Fakes of what the jobs room takes from VS Code (extension/src/jobs/host.ts): notifications,
 * the log, the settings, the `rankdebug` CLI, a progress notification and sessions started,
 * all recorded; and ranks and jobs as `rankdebug jobs --json` reads them.
 */
import type * as vscode from 'vscode';
import type { CliOptions, CliRun } from '../../../../extension/src/common/cli';
import type { JobInfo, RankInfo } from '../../../../extension/src/core/jobList';
import { DEFAULTS, type ExtensionSettings } from '../../../../extension/src/core/settings';
import type { AttachHost, RoomHost } from '../../../../extension/src/jobs/host';
import { Emitter } from '../debug/fakes';
import { FakePickHost } from '../launch/fakes';

/** A rank of a job on one host: running, pid 1000 + rank. */
export function rank(r: number, extra: Partial<RankInfo> = {}): RankInfo {
    return { pid: 1000 + r, rank: r, localRank: r, worldSize: 4, host: 'gpu-a', port: null, address: null, state: 'running', cpu: null, rss: null, gpu: null, armed: true, raised: null, coords: null, ...extra };
}

/** A job of `ranks` from the registry, as `rankdebug jobs --json` lists it. */
export function job(ranks: RankInfo[], extra: Partial<JobInfo> = {}): JobInfo {
    return { id: 'J1', source: 'registry', host: 'gpu-a', launcher: 'torchrun', launcherPid: 999, command: ['torchrun', 'train.py'], cwd: '/w', startTime: 0, worldSize: ranks.length, armed: true, dir: '/run/rankdebug/J1', ranks, ...extra };
}

export class FakeRoomHost extends FakePickHost implements RoomHost {
    readonly infos: string[] = [];
    readonly errors: string[] = [];
    readonly logged: string[] = [];
    readonly log = { info: (m: string) => this.logged.push(m), warn: (m: string) => this.logged.push(`warn: ${m}`) };
    settingsNow: ExtensionSettings = { ...DEFAULTS };

    showInfo(message: string): void {
        this.infos.push(message);
    }

    showError(message: string): void {
        this.errors.push(message);
    }

    settings(): ExtensionSettings {
        return this.settingsNow;
    }
}

/** One `rankdebug` run asked of the host. */
export interface CliCall {
    args: string[];
    options: CliOptions;
}

export class FakeAttachHost extends FakeRoomHost implements AttachHost {
    readonly cliCalls: CliCall[] = [];
    /** The CLI's lines by verb and arguments before the flags (`attach J1 1`); a missing one fails as the CLI would. */
    cli = new Map<string, Record<string, unknown>[] | Error>();
    readonly progress: string[] = [];
    readonly sessions: vscode.DebugConfiguration[] = [];
    /** Cancels the progress notification when set. */
    readonly cancel = new Emitter<void>();
    folderNow: vscode.WorkspaceFolder | undefined = { uri: { fsPath: '/w' } as vscode.Uri, name: 'w', index: 0 };

    runCli(_python: string, args: string[], options: CliOptions): Promise<CliRun> {
        this.cliCalls.push({ args, options });
        const flags = args.findIndex((a) => a.startsWith('--'));
        const key = (flags < 0 ? args : args.slice(0, flags)).join(' ');
        const lines = this.cli.get(key);
        if (lines === undefined) return Promise.reject(new Error(`no answer for rankdebug ${key}`));
        if (lines instanceof Error) return Promise.reject(lines);
        return Promise.resolve({ answer: lines[0] ?? {}, lines, code: 0, ms: 1 });
    }

    withProgress<R>(title: string, task: (progress: vscode.Progress<{ message?: string }>, token: vscode.CancellationToken) => Promise<R>): Thenable<R> {
        this.progress.push(`[${title}]`);
        const token = { isCancellationRequested: false, onCancellationRequested: (listener: () => void) => this.cancel.event(listener) };
        this.cancel.event(() => (token.isCancellationRequested = true));
        return task({ report: ({ message }) => this.progress.push(message ?? '') }, token as unknown as vscode.CancellationToken);
    }

    folder(): vscode.WorkspaceFolder | undefined {
        return this.folderNow;
    }

    startDebugging(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Thenable<boolean> {
        this.sessions.push(config);
        return Promise.resolve(true);
    }
}
