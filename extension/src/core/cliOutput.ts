/**
 * Reading what the `rankdebug` CLI prints with `--json`: one JSON object per line on stdout,
 * or `{"error": {"message": ...}}` with exit status 1/2. No `vscode` import.
 */

/** A CLI verb failed: its own message (`{"error": {"message"}}`), or why no answer came. */
export class CliError extends Error {
    constructor(
        message: string,
        readonly code: number | null = null,
    ) {
        super(message);
        this.name = 'CliError';
    }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Every JSON object printed on a line of its own, in order (other lines are skipped). */
export function jsonLines(stdout: string): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const raw of stdout.split('\n')) {
        const line = raw.trim();
        if (!line.startsWith('{')) continue;
        try {
            const obj = asObject(JSON.parse(line));
            if (obj) out.push(obj);
        } catch {
            // a partial or foreign line
        }
    }
    return out;
}

/**
 * The answer of a `--json` verb.
 * Steps: the last JSON object on stdout; an `error` object becomes a CliError with its message;
 * no object at all becomes a CliError with the end of stderr (or the exit status).
 */
export function cliAnswer(stdout: string, stderr: string, code: number | null): Record<string, unknown> {
    return cliAnswerOf(jsonLines(stdout), stderr, code);
}

/** cliAnswer of the JSON lines already read from stdout (jsonLines). */
export function cliAnswerOf(objects: readonly Record<string, unknown>[], stderr: string, code: number | null): Record<string, unknown> {
    const last = objects[objects.length - 1];
    const error = last ? asObject(last.error) : undefined;
    if (error) {
        const message = typeof error.message === 'string' ? error.message : JSON.stringify(error);
        throw new CliError(message, code);
    }
    if (last) return last;
    const tail = stderr.trim().split('\n').slice(-4).join('\n').trim();
    throw new CliError(tail || `exit status ${code ?? '?'} and no answer`, code);
}
