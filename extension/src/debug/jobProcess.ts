/**
 * The job's process: `rankdebug launch --json` run in a pseudoterminal the user sees and types
 * into. Its stdout lines go to the caller (the `--json` events, and the job's own output to
 * print back); stderr, typed input and the exit code pass between the process and the terminal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type * as vscode from 'vscode';
import { LineSplitter } from '../core/events';
import { join } from '../core/shell';
import type { JobSpec } from './configuration';
import type { AdapterHost } from './host';
import { mark } from './traceMarks';
import { launchEnv } from './warmLauncher';

/** What the process tells its owner. */
export interface JobProcessEvents {
    /** One stdout line: a `--json` event, or the job's own output. */
    onLine(line: string): void;
    /** The process could not start (the exit, code 127, follows). */
    onSpawnError(error: Error): void;
    /** The process has ended; every stdout line came before. */
    onExit(code: number): void;
    /** The user closed the terminal. */
    onClose(): void;
}

export class JobProcess {
    private readonly pty: vscode.EventEmitter<string>;
    private proc: ChildProcess | undefined;
    private exited: Promise<number> | undefined;
    /** Whether a signal of ours ended it (a stop), not someone else's. */
    private signalled = false;
    private readonly splitter = new LineSplitter();

    constructor(
        private readonly spec: JobSpec,
        private readonly host: AdapterHost,
        private readonly events: JobProcessEvents,
    ) {
        this.pty = host.emitter<string>();
    }

    /** Opens and shows the job's terminal; it prints the command line first. */
    openTerminal(): vscode.Terminal {
        const pty = this.pty;
        const closeEmitter = this.host.emitter<number | void>();
        const terminal = this.host.createTerminal(`rankdebug: ${this.spec.title}`, {
            onDidWrite: pty.event,
            onDidClose: closeEmitter.event,
            open: () => pty.fire(`\x1b[2m$ ${join(this.spec.argv)}\x1b[0m\r\n`),
            close: () => this.events.onClose(),
            handleInput: (data: string) => this.input(data),
        });
        terminal.show(true);
        return terminal;
    }

    /** Starts the process; its pid (none when it could not start). */
    spawn(): number | undefined {
        mark('spawn');
        const spec = this.spec;
        const env = launchEnv(spec.argv[0], spec.env);
        // A launcher started ahead (while the ranks were picked) runs it, else a new process.
        const warm = this.host.warm?.take(spec.argv, env, spec.cwd);
        this.host.log.info(`launch (cwd ${spec.cwd}${warm ? `, started ahead: pid ${warm.pid}` : ''}): ${join(spec.argv)}`);
        const proc = warm ?? spawn(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
        this.proc = proc;
        this.exited = new Promise<number>((resolve) => {
            proc.on('error', (e) => {
                this.pty.fire(`rankdebug: ${e.message}\r\n`);
                this.events.onSpawnError(e);
                resolve(127);
            });
            proc.on('close', (code, signal) => {
                // A signal we did not send (the OOM killer, `kill -9`) is news to the user.
                killedBy = signal && !this.signalled ? signal : undefined;
                resolve(code ?? (signal ? 128 : 1));
            });
        });
        proc.stdout?.setEncoding('utf8');
        proc.stderr?.setEncoding('utf8');
        proc.stdout?.on('data', (chunk: string) => {
            for (const line of this.splitter.push(chunk)) this.events.onLine(line);
        });
        proc.stderr?.on('data', (chunk: string) => this.pty.fire(chunk.replace(/\r?\n/g, '\r\n')));
        let killedBy: string | undefined;
        void this.exited.then((code) => {
            for (const line of this.splitter.flush()) this.events.onLine(line);
            // Killed outright (the OOM killer, `kill -9`): rankdebug's janitor has ended the
            // job's processes; say who died and how, not a bare exit code.
            const end = killedBy
                ? this.host.l10n.t('[rankdebug launch (pid {0}) was killed by {1}; the job was ended]', proc.pid ?? '?', killedBy)
                : this.host.l10n.t('[job exited with code {0}]', code);
            this.pty.fire(`\r\n\x1b[2m${end}\x1b[0m\r\n`);
            this.proc = undefined;
            this.events.onExit(code);
        });
        return proc.pid;
    }

    /** Shows a line of the job's output in its terminal. */
    print(line: string): void {
        this.pty.fire(`${line}\r\n`);
    }

    /** Ctrl+C interrupts the job; other keys go to its stdin and are echoed. */
    private input(data: string): void {
        if (data === '\x03') this.signal('SIGINT');
        else if (this.proc?.stdin?.writable) {
            this.proc.stdin.write(data.replace(/\r/g, '\n'));
            this.pty.fire(data.replace(/\r/g, '\r\n'));
        }
    }

    /** Stops the job (SIGTERM to `rankdebug launch`, which ends every process; SIGKILL after 8 s) and waits for its exit. */
    async stop(): Promise<void> {
        const proc = this.proc;
        if (!proc || proc.exitCode !== null) return;
        this.signal('SIGTERM');
        const timer = setTimeout(() => this.signal('SIGKILL'), 8000);
        await this.exited;
        clearTimeout(timer);
    }

    /** Sends SIGTERM when the process still runs, without waiting. */
    kill(): void {
        if (this.proc && this.proc.exitCode === null) this.signal('SIGTERM');
    }

    private signal(name: NodeJS.Signals): void {
        this.signalled = true;
        this.proc?.kill(name);
    }
}
