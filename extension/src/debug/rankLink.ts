/**
 * A rank's DAP connection held by the extension itself, with no VS Code session: the client a
 * chosen rank beyond `rankdebug.maxSessions` has. The job's supervisor reaches a rank only
 * through its gate's client (supervise/together.py pauses, continues and steps through it; a
 * rank with no client is left out of stop together and of every group command), so a rank
 * without a session keeps one of these: configured like a session (the editor's breakpoints,
 * the default exception filters), it stops together and takes group commands with the rest.
 * A VS Code session can later show the rank over this same connection (linkSession.ts), and
 * leave again, without the gate ever seeing a disconnect: debugpy lets a rank run on when its
 * client goes, even one stopped at a breakpoint. Node `net` only; no `vscode` import.
 */
import * as net from 'node:net';

export interface DapMessage {
    seq: number;
    type: 'request' | 'response' | 'event';
    command?: string;
    event?: string;
    request_seq?: number;
    success?: boolean;
    message?: string;
    arguments?: Record<string, unknown>;
    body?: Record<string, unknown>;
}

/** A source's line breakpoints as DAP `setBreakpoints` takes them. */
export interface SourceBreakpoints {
    path: string;
    breakpoints: { line: number; condition?: string; hitCondition?: string; logMessage?: string }[];
}

/** Whoever shows the rank now (a VS Code session): it gets the adapter's events and reverse requests. */
export interface LinkView {
    onMessage(message: DapMessage): void;
    onClose(): void;
}

/** Milliseconds the link waits to connect and be configured. */
const OPEN_TIMEOUT_MS = 30000;

export class RankLink {
    /** debugpy's capabilities (the initialize response), for a session that shows the rank later. */
    capabilities: Record<string, unknown> = {};
    /** Where the rank is stopped (the adapter's last `stopped`), undefined while it runs. */
    stopped: { threadId: number; reason: string } | undefined;
    closed = false;
    private readonly socket: net.Socket;
    private buffer = Buffer.alloc(0);
    private seq = 1;
    private readonly pending = new Map<number, (r: DapMessage) => void>();
    private readonly eventWaiters = new Map<string, (() => void)[]>();
    private view: LinkView | undefined;
    /** The sources whose breakpoints the link sent, for sources that later have none. */
    private sent = new Set<string>();
    private readonly closedPromise: Promise<void>;

    constructor(
        readonly rank: number,
        private readonly host: string,
        private readonly port: number,
    ) {
        this.socket = new net.Socket();
        this.closedPromise = new Promise((resolve) => this.socket.on('close', () => resolve()));
        this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
        this.socket.on('error', () => undefined); // 'close' follows
        this.socket.on('close', () => this.onClosed());
    }

    /**
     * Connects and configures: initialize, attach (with `attach`, the arguments a session
     * would send), the breakpoints and debugpy's default exception filters, configurationDone.
     * Throws when the gate refuses it or does not answer.
     */
    async open(attach: Record<string, unknown>, breakpoints: readonly SourceBreakpoints[]): Promise<void> {
        await withTimeout(
            new Promise<void>((resolve, reject) => {
                this.socket.once('connect', resolve);
                this.socket.once('error', reject);
                this.socket.connect(this.port, this.host);
            }),
            `rank ${this.rank}: no answer from ${this.host}:${this.port}`,
        );
        const init = await this.checked('initialize', { clientID: 'rankdebug', adapterID: 'rankdebug', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
        this.capabilities = init.body ?? {};
        const initialized = this.nextEvent('initialized');
        // The gate answers attach only after configurationDone: not awaited here.
        const attached = this.request('attach', attach);
        await withTimeout(initialized, `rank ${this.rank}: no initialized event`);
        await this.setBreakpoints(breakpoints);
        const filters = Array.isArray(this.capabilities.exceptionBreakpointFilters) ? (this.capabilities.exceptionBreakpointFilters as { filter?: string; default?: boolean }[]) : [];
        await this.request('setExceptionBreakpoints', { filters: filters.filter((f) => f.default && f.filter).map((f) => f.filter) });
        await this.checked('configurationDone', {});
        const answer = await withTimeout(attached, `rank ${this.rank}: attach not answered`);
        if (!answer.success) throw new Error(`rank ${this.rank}: ${answer.message ?? 'attach refused'}`);
    }

    /** The editor's breakpoints now; a source the link set before and that has none left is cleared. */
    async setBreakpoints(sources: readonly SourceBreakpoints[]): Promise<void> {
        const now = new Set(sources.map((s) => s.path));
        const cleared = [...this.sent].filter((p) => !now.has(p)).map((path) => ({ path, breakpoints: [] }));
        this.sent = now;
        await Promise.all([...sources, ...cleared].map((s) => this.request('setBreakpoints', { source: { path: s.path }, breakpoints: s.breakpoints })));
    }

    /** Sends a request; its response (a failed one too). A closed link answers a failure. */
    request(command: string, args: Record<string, unknown> = {}): Promise<DapMessage> {
        if (this.closed) return Promise.resolve({ seq: 0, type: 'response', command, success: false, message: `rank ${this.rank}: its connection is closed` });
        const seq = this.seq++;
        const answer = new Promise<DapMessage>((resolve) => this.pending.set(seq, resolve));
        this.write({ seq, type: 'request', command, arguments: args });
        return answer;
    }

    private async checked(command: string, args: Record<string, unknown>): Promise<DapMessage> {
        const r = await withTimeout(this.request(command, args), `rank ${this.rank}: ${command} not answered`);
        if (!r.success) throw new Error(`rank ${this.rank}: ${r.message ?? `${command} failed`}`);
        return r;
    }

    /** Answers a reverse request of the adapter (from the view that got it). */
    respond(message: DapMessage): void {
        if (!this.closed) this.write({ ...message, seq: this.seq++ });
    }

    /** A session shows the rank from now on (undefined: none, the link goes on alone). */
    show(view: LinkView | undefined): void {
        this.view = view;
    }

    /** Resolves once the connection has closed. */
    get whenClosed(): Promise<void> {
        return this.closedPromise;
    }

    get shown(): boolean {
        return this.view !== undefined;
    }

    /** Ends the connection as a client would (debugpy lets the rank run on); resolves once closed. */
    async close(): Promise<void> {
        if (this.closed) return;
        const bye = this.request('disconnect', { restart: false, terminateDebuggee: false });
        await Promise.race([bye, delay(3000)]);
        this.socket.end();
        await Promise.race([this.closedPromise, delay(3000)]);
        this.socket.destroy();
    }

    /** Closes at once, with no word to the adapter (the job has ended). */
    destroy(): void {
        this.socket.destroy();
    }

    private nextEvent(name: string): Promise<void> {
        return new Promise((resolve) => this.eventWaiters.set(name, [...(this.eventWaiters.get(name) ?? []), resolve]));
    }

    private write(message: DapMessage): void {
        const json = Buffer.from(JSON.stringify(message), 'utf8');
        this.socket.write(Buffer.concat([Buffer.from(`Content-Length: ${json.length}\r\n\r\n`, 'ascii'), json]));
    }

    private onData(chunk: Buffer): void {
        this.buffer = Buffer.concat([this.buffer, chunk]);
        for (;;) {
            const end = this.buffer.indexOf('\r\n\r\n');
            if (end < 0) return;
            const length = /Content-Length:\s*(\d+)/i.exec(this.buffer.subarray(0, end).toString('ascii'))?.[1];
            if (length === undefined) {
                this.socket.destroy(); // not DAP: nothing more can be read
                return;
            }
            const start = end + 4;
            if (this.buffer.length < start + Number(length)) return;
            const body = this.buffer.subarray(start, start + Number(length)).toString('utf8');
            this.buffer = this.buffer.subarray(start + Number(length));
            let message: DapMessage;
            try {
                message = JSON.parse(body) as DapMessage;
            } catch {
                continue;
            }
            this.onMessage(message);
        }
    }

    private onMessage(m: DapMessage): void {
        if (m.type === 'response') {
            const done = this.pending.get(m.request_seq ?? -1);
            this.pending.delete(m.request_seq ?? -1);
            done?.(m);
            return;
        }
        if (m.type === 'event') {
            this.onEvent(m);
            return;
        }
        // A reverse request: the view's to answer; with none, refused.
        if (this.view) this.view.onMessage(m);
        else this.respond({ seq: 0, type: 'response', request_seq: m.seq, command: m.command, success: false, message: 'no session shows this rank' });
    }

    private onEvent(m: DapMessage): void {
        this.follow(m.event, m.body ?? {});
        const name = m.event ?? '';
        for (const resolve of this.eventWaiters.get(name) ?? []) resolve();
        this.eventWaiters.delete(name);
        // The gate's own "initialized" of the link's configuration is not the view's.
        if (m.event !== 'initialized') this.view?.onMessage(m);
    }

    /** Whether the rank is stopped, and which thread, from the adapter's events. */
    private follow(event: string | undefined, body: Record<string, unknown>): void {
        if (event === 'stopped') {
            const threadId = typeof body.threadId === 'number' ? body.threadId : (this.stopped?.threadId ?? 0);
            this.stopped = { threadId, reason: String(body.reason ?? 'pause') };
        } else if (event === 'continued' && (body.allThreadsContinued !== false || body.threadId === this.stopped?.threadId)) {
            this.stopped = undefined;
        }
    }

    private onClosed(): void {
        if (this.closed) return;
        this.closed = true;
        for (const [seq, done] of this.pending) done({ seq: 0, type: 'response', request_seq: seq, success: false, message: `rank ${this.rank}: its connection closed` });
        this.pending.clear();
        this.view?.onClose();
    }
}

function delay(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function withTimeout<T>(p: Promise<T>, what: string, ms = OPEN_TIMEOUT_MS): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms)));
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
