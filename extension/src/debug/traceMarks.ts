/**
 * Where the time of a debug start goes, on the extension's side: with RANKDEBUG_TRACE_FILE
 * set (the end-to-end suite sets it), one timestamped line per phase, beside the marks of
 * the job's processes (pyserver/rankdebug/runtime/marks.py). Nothing without it.
 */
import * as fs from 'node:fs';

export function mark(what: string): void {
    const file = process.env.RANKDEBUG_TRACE_FILE;
    if (!file) return;
    try {
        fs.appendFileSync(file, `${(Date.now() / 1000).toFixed(3)} ext ${what}\n`);
    } catch {
        // a trace is never worth failing the launch for
    }
}
