/**
 * Following a JSON-lines events file as it grows: the file the terminal shim's
 * `rankdebug launch --json` writes its events to. Each complete line goes to the caller.
 */
import * as fs from 'node:fs';
import { LineSplitter } from '../core/events';

export class EventsFile {
    private watcher: fs.FSWatcher | undefined;
    private offset = 0;
    private readonly splitter = new LineSplitter();

    constructor(
        private readonly file: string,
        private readonly onLine: (line: string) => void,
    ) {}

    /** Reads what the file holds now, then each addition until closed. */
    start(): void {
        try {
            this.watcher = fs.watch(this.file, () => this.read());
        } catch {
            // the file is gone already
        }
        this.read();
    }

    /** Whether the file is still followed (it existed, and it is not closed). */
    get watching(): boolean {
        return this.watcher !== undefined;
    }

    close(): void {
        this.watcher?.close();
        this.watcher = undefined;
    }

    private read(): void {
        let data: Buffer;
        try {
            data = fs.readFileSync(this.file);
        } catch {
            return;
        }
        if (data.length <= this.offset) return;
        const chunk = data.subarray(this.offset).toString('utf8');
        this.offset = data.length;
        for (const line of this.splitter.push(chunk)) this.onLine(line);
    }
}
