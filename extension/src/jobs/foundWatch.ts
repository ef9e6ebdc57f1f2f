/**
 * The hang watch of jobs Training Jobs found running (core/foundWatch.ts decides which): one
 * `rankdebug watch JOB --hang-seconds S --json` child process per job, its `hang` and
 * `hang_over` lines (core/hangEvents.ts) shown by the notification a launched job's
 * supervisor raises (diagnose/hangNotices.ts). A hang said while this window holds a rank of
 * the job paused in the debugger is the user's own doing, and a `hang_over` while it debugs
 * ranks of the job may be the debugger's (injecting debugpy runs code in the rank): logged,
 * not shown. A watcher stops
 * when the job leaves the list, when the view is hidden (unless the setting says always),
 * and by itself when the job ends (`ended`); then it is not started again for that job.
 * With `always`, the jobs are listed every WATCH_SCAN_MS while the view is hidden.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import { watchArgs, watchFoundMode, watching, watchPlan, type WatchFoundMode } from '../core/foundWatch';
import type { JobInfo } from '../core/jobList';
import { parseHangEvent } from '../core/hangEvents';
import type { HangListener } from '../diagnose/hangNotices';
import type { JobState } from './jobState';
import { log } from '../common/log';
import { cliPrefix } from '../common/python';
import { getSettings, SECTION } from '../common/settings';

const WATCH_SCAN_MS = 30000;

export class FoundJobWatch implements vscode.Disposable {
    /** The watcher of each job (its process once the interpreter is known). */
    private readonly procs = new Map<string, { child?: ChildProcess }>();
    /** Jobs whose watcher ended (with its job, or refused): not watched again. */
    private readonly done = new Set<string>();
    private visible = false;
    private jobs: readonly JobInfo[] = [];
    private timer: NodeJS.Timeout | undefined;
    private disposed = false;

    constructor(
        private readonly python: () => Promise<string>,
        private readonly state: JobState,
        private readonly notices: HangListener,
        /** Lists the jobs again (while hidden, for `always`). */
        private readonly list: () => Promise<readonly JobInfo[]>,
    ) {}

    private mode(): WatchFoundMode {
        return watchFoundMode(vscode.workspace.getConfiguration(SECTION).get('jobs.watchFound'));
    }

    /** The jobs the view just listed, and whether it is visible: watchers started and stopped to match. */
    update(jobs: readonly JobInfo[], visible: boolean): void {
        this.jobs = jobs;
        this.visible = visible;
        const mode = this.mode();
        const seconds = getSettings().hangSeconds;
        const plan = watchPlan(jobs, new Set(this.procs.keys()), this.done, watching(mode, visible, seconds));
        for (const id of plan.stop) this.stop(id, 'no longer watched');
        for (const id of plan.start) void this.start(id, seconds);
        this.schedule(mode === 'always' && !visible && seconds > 0);
    }

    /** The settings changed: every watcher again with them. */
    restart(): void {
        for (const id of [...this.procs.keys()]) this.stop(id, 'settings changed');
        this.update(this.jobs, this.visible);
    }

    private schedule(on: boolean): void {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        if (!on || this.disposed) return;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.list()
                .then((jobs) => this.update(jobs, this.visible))
                .catch((e: unknown) => log().warn(`found-job watch: cannot list jobs: ${String(e)}`));
        }, WATCH_SCAN_MS);
    }

    private async start(id: string, seconds: number): Promise<void> {
        // Taken before the interpreter is known: a second update starts no second watcher.
        const slot: { child?: ChildProcess } = {};
        this.procs.set(id, slot);
        const [cmd, ...prefix] = cliPrefix(await this.python());
        if (this.procs.get(id) !== slot || this.disposed) return;
        const child = spawn(cmd, [...prefix, ...watchArgs(id, seconds)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUTF8: '1' } });
        slot.child = child;
        log().info(`found-job watch: ${id} (hang after ${seconds} s), pid ${child.pid ?? '?'}`);
        let stderr = '';
        child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
        if (child.stdout) readline.createInterface({ input: child.stdout }).on('line', (line) => this.onLine(id, line));
        child.on('error', (e) => log().warn(`found-job watch ${id}: ${e.message}`));
        child.on('close', (code) => {
            if (this.procs.get(id) === slot) {
                this.procs.delete(id);
                // Ended with its job, or refused it (code 2): not started again for this job.
                if (code !== null) this.done.add(id);
            }
            log().info(`found-job watch ${id}: ended (${code ?? 'signal'})${code ? `: ${stderr.trim() || '?'}` : ''}`);
        });
    }

    private onLine(id: string, line: string): void {
        const ev = parseHangEvent(line);
        if (!ev) {
            if (line.includes('"error"')) log().warn(`found-job watch ${id}: ${line}`);
            return;
        }
        if (ev.event === 'hang_over') {
            // A rank this window attached to moved as debugpy was put in and run: not the job's doing.
            if (this.state.byJobId(id)?.ranks.size) log().info(`found-job watch ${id}: moved on after ${ev.seconds ?? '?'} s, not shown: this window debugs ranks of it`);
            else this.notices.hangOver(ev);
            return;
        }
        const paused = [...(this.state.byJobId(id)?.ranks.entries() ?? [])].filter(([, r]) => r.state === 'paused').map(([rank]) => rank);
        if (paused.length) {
            log().info(`found-job watch ${id}: hang not shown, ranks ${paused.join(',')} are paused in this window: ${ev.why}`);
            return;
        }
        this.notices.hang(ev);
    }

    private stop(id: string, why: string): void {
        const child = this.procs.get(id)?.child;
        this.procs.delete(id);
        if (child?.pid !== undefined && child.exitCode === null) {
            log().info(`found-job watch ${id}: stopped (${why})`);
            child.kill('SIGTERM');
        }
    }

    /** Whether a job has a watcher now (the e2e reads it through the log). */
    watches(id: string): boolean {
        return this.procs.has(id);
    }

    dispose(): void {
        this.disposed = true;
        this.schedule(false);
        for (const id of [...this.procs.keys()]) this.stop(id, 'window closing');
    }
}
