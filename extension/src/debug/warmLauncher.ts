/**
 * A `rankdebug launch` started ahead, while the user picks ranks, so that no interpreter
 * starts and no module loads between the quick-pick's Enter and the job's start. It waits
 * (RANKDEBUG_WARM, pyserver/rankdebug/warm.py) for the launch on a pipe of its own
 * (fd 3); its stdin, stdout, stderr, pid and signals are the job process's, as if started then.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { Writable } from 'node:stream';

/** An unused launcher ends after this long (the quick-pick was left open, or cancelled). */
const IDLE_MS = 5 * 60_000;
/** Variables that change how the interpreter itself starts: a launch that sets them starts its own. */
const STARTUP_VARIABLE = /^PYTHON(?!PATH$|UNBUFFERED$)/;

interface Ready {
    prefix: string[];
    proc: ChildProcess;
    timer: NodeJS.Timeout;
}

function same(a: readonly string[], b: readonly string[]): boolean {
    return a.length === b.length && a.every((x, i) => x === b[i]);
}

function alive(proc: ChildProcess): boolean {
    return proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined;
}

/** The environment a job process starts with: the interpreter's own folder first on PATH, so that the job's `python`/`torchrun` are its. */
export function launchEnv(python: string, extra: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...extra, PYTHONUNBUFFERED: '1' };
    if (path.isAbsolute(python)) env.PATH = `${path.dirname(python)}${path.delimiter}${env.PATH ?? ''}`;
    return env;
}

export class WarmLauncher {
    private ready: Ready | undefined;

    /** Starts a launcher for `prefix` (the argv that runs rankdebug, before `launch`), unless one is ready. */
    prepare(prefix: readonly string[], cwd?: string): void {
        const ready = this.ready;
        if (ready && same(ready.prefix, prefix) && alive(ready.proc)) {
            ready.timer.refresh();
            return;
        }
        this.discard();
        const env = { ...launchEnv(prefix[0], {}), RANKDEBUG_WARM: '3' };
        const proc = spawn(prefix[0], [...prefix.slice(1), 'launch'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
        const gone = () => {
            if (this.ready?.proc === proc) this.discard();
        };
        proc.on('error', gone);
        proc.on('exit', gone);
        const timer = setTimeout(() => this.discard(), IDLE_MS);
        timer.unref();
        this.ready = { prefix: [...prefix], proc, timer };
    }

    /**
     * The ready launcher, told to run `argv` (`[...prefix, 'launch', ...]`) with `env` in
     * `cwd`; undefined when none fits (the caller starts the process itself).
     */
    take(argv: readonly string[], env: Record<string, string>, cwd: string): ChildProcess | undefined {
        const ready = this.ready;
        if (!ready) return undefined;
        clearTimeout(ready.timer);
        this.ready = undefined;
        const at = argv.indexOf('launch');
        const fits = at > 0 && same(ready.prefix, argv.slice(0, at)) && alive(ready.proc) && !Object.keys(env).some((k) => STARTUP_VARIABLE.test(k) && process.env[k] !== env[k]);
        const pipe = ready.proc.stdio[3] as Writable | null;
        if (!fits || !pipe?.writable) {
            ready.proc.kill();
            return undefined;
        }
        pipe.on('error', () => undefined); // it died meanwhile: its exit says so
        pipe.end(JSON.stringify({ argv: argv.slice(at), env, cwd }));
        return ready.proc;
    }

    /** Ends the ready launcher, if any (EOF on its pipe: it exits). */
    discard(): void {
        const ready = this.ready;
        this.ready = undefined;
        if (!ready) return;
        clearTimeout(ready.timer);
        (ready.proc.stdio[3] as Writable | null)?.end();
        ready.proc.kill();
    }
}
