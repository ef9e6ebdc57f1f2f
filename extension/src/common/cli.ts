/**
 * Runs a `rankdebug` CLI verb with `--json` as a child process: the resolved interpreter and
 * the bundled entry script (python.ts), an argv array (never a shell), a time limit and an
 * optional cancellation. The answer is read by core/cliOutput.ts.
 */
import { execFile } from 'node:child_process';
import { cliAnswerOf, CliError, jsonLines } from '../core/cliOutput';
import { log } from './log';
import { cliPrefix } from './python';

export interface CliOptions {
    timeoutMs?: number;
    signal?: AbortSignal;
    cwd?: string;
}

export interface CliRun {
    answer: Record<string, unknown>;
    /** Every JSON line printed, in order (`eval` prints one per rank, then `compare`). */
    lines: Record<string, unknown>[];
    code: number;
    ms: number;
}

/**
 * Runs `python MAIN ARGS...` and returns its JSON answer.
 * Steps: execFile with the argv; a non-zero exit still yields the printed answer when there
 * is one (`stacks` exits 1 when some rank could not be read); `{"error"}`, no answer, a time
 * limit or a cancellation throw a CliError.
 */
export function runCli(python: string, args: string[], options: CliOptions = {}): Promise<CliRun> {
    const [cmd, ...prefix] = cliPrefix(python);
    const t0 = Date.now();
    return new Promise((resolve, reject) => {
        execFile(
            cmd,
            [...prefix, ...args],
            {
                encoding: 'utf8',
                timeout: options.timeoutMs ?? 30000,
                maxBuffer: 64 * 1024 * 1024,
                signal: options.signal,
                cwd: options.cwd,
                // Bytecode is cached (no PYTHONDONTWRITEBYTECODE): the bundled CLI, shipped
                // without .pyc, compiles its modules once, not at every run; Training Jobs runs
                // `jobs --json` every few seconds, and compiling cost 15-20 ms of each.
                env: { ...process.env, PYTHONUTF8: '1' },
            },
            (err, stdout, stderr) => {
                const ms = Date.now() - t0;
                const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
                if (e && typeof e.code !== 'number') {
                    // Not an exit status: the interpreter is missing, the time ran out, or cancelled.
                    if (e.name === 'AbortError') return reject(new CliError('cancelled'));
                    if (e.killed) return reject(new CliError(`rankdebug ${args[0]} took longer than ${Math.round((options.timeoutMs ?? 30000) / 1000)} s`));
                    return reject(new CliError(e.code === 'ENOENT' ? `${python} was not found` : e.message));
                }
                const code = typeof e?.code === 'number' ? e.code : 0;
                try {
                    const lines = jsonLines(stdout);
                    resolve({ answer: cliAnswerOf(lines, stderr, code), lines, code, ms });
                } catch (x) {
                    log().debug(`rankdebug ${args.join(' ')}: exit ${code} in ${ms} ms; stderr: ${stderr.trim().slice(-2000)}`);
                    reject(x);
                }
            },
        );
    });
}
