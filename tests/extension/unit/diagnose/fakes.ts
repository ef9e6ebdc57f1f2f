/**
 * Fakes of what the diagnose room takes from VS Code (extension/src/diagnose/host.ts): on top
 * of the jobs room's (notifications, the log, the settings, the CLI, a progress notification),
 * warnings, webview panels, files shown and sessions as they start, all recorded; and the other
 * parts the panels call (the jobs, Attach to Ranks, Compare, the class sessions).
 */
import type * as vscode from 'vscode';
import type { ClassPick } from '../../../../extension/src/core/classSessions';
import type { JobInfo, RankInfo } from '../../../../extension/src/core/jobList';
import type { ClassSessionsHost, WhyStuckHost } from '../../../../extension/src/diagnose/host';
import { Emitter } from '../debug/fakes';
import { FakePanel } from '../inspect/fakes';
import { FakeAttachHost, FakeRoomHost } from '../jobs/fakes';

export class FakeClassHost extends FakeRoomHost implements ClassSessionsHost {
    readonly warnings: string[] = [];
    readonly started = new Emitter<vscode.DebugSession>();
    readonly onDidStartDebugSession = this.started.event;

    showWarning(message: string): void {
        this.warnings.push(message);
    }
}

export class FakeWhyStuckHost extends FakeAttachHost implements WhyStuckHost {
    readonly warnings: string[] = [];
    readonly panels: { title: string; panel: FakePanel }[] = [];
    /** Files shown beside the panel, `file:line` (0-based). */
    readonly opened: string[] = [];

    showWarning(message: string): void {
        this.warnings.push(message);
    }
    createPanel(title: string): vscode.WebviewPanel {
        const panel = new FakePanel();
        this.panels.push({ title, panel });
        return panel as unknown as vscode.WebviewPanel;
    }
    showFile(file: string, line: number): Thenable<unknown> {
        this.opened.push(`${file}:${line}`);
        return Promise.resolve();
    }
}

/** The jobs running now (`fresh`), the one picked in the palette, and what was attached. */
export class FakeParts {
    jobs: JobInfo[] = [];
    picked: JobInfo | undefined;
    readonly pickTitles: string[] = [];
    /** Ranks with a session of this window, by job. */
    readonly sessions = new Map<string, number[]>();
    readonly attached: { job: string; ranks: number[]; told: boolean | undefined }[] = [];
    readonly compared: { job: string; ranks: readonly number[]; fn: string | undefined; title: string }[] = [];
    readonly classes: { job: string; reps: ClassPick[]; what: string }[] = [];
    classesDisposed = 0;

    readonly python = (): Promise<string> => Promise.resolve('/venv/bin/python');
    readonly jobStore = {
        fresh: (): Promise<readonly JobInfo[]> => Promise.resolve(this.jobs),
        pickJob: (title: string): Promise<JobInfo | undefined> => {
            this.pickTitles.push(title);
            return Promise.resolve(this.picked);
        },
    };
    readonly attach = {
        attachRanks: (job: JobInfo, ranks: RankInfo[], told?: boolean): Promise<void> => {
            this.attached.push({ job: job.id, ranks: ranks.map((r) => r.rank), told });
            return Promise.resolve();
        },
        sessionsOf: (job: string): ReadonlySet<number> => new Set(this.sessions.get(job) ?? []),
    };
    readonly compare = {
        compareIn: (job: string, ranks: readonly number[], fn: string | undefined, title: string): Promise<void> => {
            this.compared.push({ job, ranks, fn, title });
            return Promise.resolve();
        },
    };
    /** The class sessions' route as the panels call it. */
    readonly classSessions = {
        open: (job: string, reps: readonly ClassPick[], what: string): Promise<void> => {
            this.classes.push({ job, reps: [...reps], what });
            return Promise.resolve();
        },
        dispose: (): void => void (this.classesDisposed += 1),
    };
    readonly deps = { python: this.python, jobs: this.jobStore, attach: this.attach, compare: this.compare };
}
