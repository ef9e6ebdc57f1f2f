/**
 * *Choose when the ranks start*: the job runs with every rank armed (`rankdebug launch
 * --arm`, through the usual launch configuration), and a quick-pick fills with its ranks as
 * they start — node, local rank, pid and parallel coordinates, from `rankdebug jobs JOB
 * --json` (the registry every armed rank writes itself into), read when the job's folder
 * changes and every second or so. The ranks checked are attached at once (rankAttach.ts:
 * through the job's own session, so each is a `rank N` under it). A choice typed instead
 * (`1,3`, `4-7`, `local0`, `tp=0`; read by the language server) stands for the rest of the
 * job: the ranks it names that have started are attached at once, and those that start later
 * as they start. Escape leaves the job running, every rank armed (attach later from Training
 * Jobs; Stop ends it). The job's end closes the pick. Core: core/appearingRanks.ts. The VS Code
 * calls are the host's (host.ts); startedRankPick.ts gives it the real ones.
 */
import * as fs from 'node:fs';
import type * as vscode from 'vscode';
import { resolveChoice, startedItems, startedRanks, toAttach, type StartedRank } from '../core/appearingRanks';
import { readJobs, type JobInfo, type RankInfo } from '../core/jobList';
import { RankChecker, CHECK_DELAY_MS, type Execute } from '../core/rankCheck';
import { debounce } from '../core/debounce';
import { formatSpec } from '../core/ranks';
import { TYPE } from '../debug/configuration';
import type { JobState } from '../jobs/jobState';
import type { StartedHost } from './host';

/** How often the job is read while the pick is open (its folder's changes read it sooner). */
const POLL_MS = 1000;
/** ... and while a typed choice stands, the pick closed (each read runs a Python process). */
const STANDING_POLL_MS = 10000;
/** How long the job's session may take to start and say its job id. */
const START_MS = 120000;

export interface StartedPickDeps {
    python: () => Promise<string>;
    state: JobState;
    execute: Execute;
    attach: (job: JobInfo, ranks: RankInfo[]) => Promise<void>;
}

interface Item extends vscode.QuickPickItem {
    rank?: number;
}

/** Resolves with the first value `get` gives after `event` fires (or now), or undefined after `ms`. */
function when<T>(event: vscode.Event<unknown>, get: () => T | undefined, ms: number): Promise<T | undefined> {
    const now = get();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
        const timer = setTimeout(() => {
            sub.dispose();
            resolve(undefined);
        }, ms);
        const sub = event(() => {
            const got = get();
            if (got === undefined) return;
            clearTimeout(timer);
            sub.dispose();
            resolve(got);
        });
    });
}

export class StartedPicks {
    constructor(
        private readonly host: StartedHost,
        private readonly deps: StartedPickDeps,
    ) {}

    /**
     * Follows the job session named `name` (call before starting it): once it runs and says its
     * job, the pick. Steps: the session (type rankdebug, no parent, this name); its job id from
     * the job's state; the pick until Enter, Escape or the job's end; a typed choice stands on.
     */
    follow(name: string, title: string): void {
        const session = new Promise<vscode.DebugSession | undefined>((resolve) => {
            const timer = setTimeout(() => {
                sub.dispose();
                resolve(undefined);
            }, START_MS);
            const sub = this.host.onDidStartDebugSession((s) => {
                if (s.type !== TYPE || s.name !== name || s.parentSession) return;
                clearTimeout(timer);
                sub.dispose();
                resolve(s);
            });
        });
        void session.then(async (s) => {
            if (!s) return this.host.log.warn(`ranks as they start: no session named ${name}`);
            const job = await when(this.deps.state.onDidChange, () => this.deps.state.bySession(s.id)?.job, START_MS);
            if (!job) return this.host.log.warn(`ranks as they start: ${name} said no job`);
            this.host.log.info(`ranks as they start: job ${job}`);
            new StartedWatch(this.host, this.deps, s, job, title).run();
        });
    }
}

/** One job's pick and, after it, a standing typed choice. */
class StartedWatch {
    private readonly qp: vscode.QuickPick<Item>;
    private started: StartedRank[] = [];
    private info: JobInfo | undefined;
    private shown = '';
    /** Ranks handed to an attach (never twice). */
    private readonly sent = new Set<number>();
    /** The typed choice that stands after Enter. */
    private standing = '';
    private pickOpen = true;
    private accepting = false;
    private ended = false;
    private timer: NodeJS.Timeout | undefined;
    private watcher: fs.FSWatcher | undefined;
    private reading: Promise<void> | undefined;
    private again = false;
    private status: vscode.Disposable | undefined;
    private readonly subs: vscode.Disposable[] = [];
    private readonly baseTitle: string;

    constructor(
        private readonly host: StartedHost,
        private readonly deps: StartedPickDeps,
        private readonly session: vscode.DebugSession,
        private readonly job: string,
        title: string,
    ) {
        this.qp = host.createQuickPick<Item>();
        this.baseTitle = host.l10n.t('{0}: choose ranks as they start', title);
    }

    run(): void {
        const qp = this.qp;
        qp.title = this.fillTitle();
        qp.placeholder = this.host.l10n.t('Check ranks to debug as they start, or type ranks (1,3, 4-7, local0, tp=0): those that start later are attached too');
        qp.canSelectMany = true;
        qp.ignoreFocusOut = true;
        qp.matchOnDescription = true;
        qp.keepScrollPosition = true;
        qp.busy = true;
        const hint = debounce((text: string) => this.showHint(text), CHECK_DELAY_MS, undefined);
        this.subs.push(
            qp.onDidChangeValue((text) => void hint(text)),
            qp.onDidAccept(() => void this.accept()),
            qp.onDidHide(() => this.hidden()),
            this.host.onDidTerminateDebugSession((s) => {
                if (s.id === this.session.id) this.end(this.host.l10n.t('the job ended'));
            }),
        );
        qp.show();
        const dir = this.deps.state.bySession(this.session.id)?.dir;
        try {
            if (dir) this.watcher = fs.watch(dir, () => this.soon());
            this.watcher?.on('error', () => undefined);
        } catch {
            // No folder to watch (yet): the timer reads the job.
        }
        void this.read();
    }

    private soon(): void {
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.read(), 150);
    }

    /** Reads the job (one read at a time; a call during a read asks for one more). */
    private read(): Promise<void> {
        if (this.ended) return Promise.resolve();
        if (this.reading) {
            this.again = true;
            return this.reading;
        }
        if (this.timer) clearTimeout(this.timer);
        this.reading = this.readOnce().finally(() => {
            this.reading = undefined;
            if (this.ended) return;
            if (this.again) {
                this.again = false;
                void this.read();
            } else {
                this.timer = setTimeout(() => void this.read(), this.pickOpen ? POLL_MS : STANDING_POLL_MS);
            }
        });
        return this.reading;
    }

    private async readOnce(): Promise<void> {
        try {
            const run = await this.host.runCli(await this.deps.python(), ['jobs', this.job, '--json', '--no-gpu'], { timeoutMs: 30000 });
            const found = readJobs(run.answer).jobs.find((j) => j.id === this.job);
            if (!found) {
                if (this.info) this.end(this.host.l10n.t('the job ended'));
                return;
            }
            this.info = found;
            this.started = startedRanks(found);
        } catch (e) {
            // `jobs JOB` refuses a job that has gone (or not yet registered): the session's end says which.
            this.host.log.debug(`ranks as they start: ${e instanceof Error ? e.message : String(e)}`);
            return;
        }
        if (this.pickOpen) this.fill();
        if (this.standing) await this.attachStanding();
    }

    /** The pick's rows from the started ranks; what was checked stays checked. */
    private fill(): void {
        const world = this.info?.worldSize ?? null;
        const data = startedItems(this.started, world, this.host.l10n);
        const signature = JSON.stringify(data);
        if (signature === this.shown) return;
        this.shown = signature;
        const checked = new Set(this.qp.selectedItems.map((i) => i.rank));
        const active = new Set(this.qp.activeItems.map((i) => i.rank));
        const items: Item[] = data.map((d) =>
            d.kind === 'separator' ? { label: d.label, kind: this.host.separator } : { label: d.label, description: d.description, rank: d.rank },
        );
        this.qp.items = items;
        this.qp.selectedItems = items.filter((i) => i.rank !== undefined && (checked.has(i.rank) || this.sent.has(i.rank)));
        const stillActive = items.filter((i) => i.rank !== undefined && active.has(i.rank));
        if (stillActive.length) this.qp.activeItems = stillActive;
        this.qp.busy = world === null || this.started.length < world;
        if (!this.qp.value.trim()) this.qp.title = this.fillTitle();
    }

    /** What a typed text names now, through the server. */
    private resolve(text: string): ReturnType<typeof resolveChoice> {
        const world = this.info?.worldSize ?? null;
        return resolveChoice(text, this.started, world, (job) => new RankChecker(this.deps.execute, job, false).check(text));
    }

    /** The title says what Enter takes for the typed text, or the server's word on it (none for a filter such as `node 1`). */
    private async showHint(text: string): Promise<void> {
        let hint = '';
        const t = text.trim();
        if (t) {
            const got = await this.resolve(t).catch(() => ({ error: '' }));
            if ('ranks' in got) hint = this.host.l10n.t('Enter: ranks {0}, now and as they start', formatSpec(got.ranks));
            else if (!this.filters(t)) hint = got.error;
        }
        if (this.qp.value === text && this.pickOpen) this.qp.title = hint ? `${this.baseTitle} — ${hint}` : this.fillTitle();
    }

    private fillTitle(): string {
        const world = this.info?.worldSize ?? null;
        if (!this.started.length) return `${this.baseTitle} — ${this.host.l10n.t('waiting for the first rank')}`;
        return `${this.baseTitle} — ${world !== null ? this.host.l10n.t('{0} of {1} started', this.started.length, world) : this.host.l10n.t('{0} started', this.started.length)}`;
    }

    /** Whether `text` filters the rows (`node 1`, `tp 1`, a pid) rather than naming ranks. */
    private filters(text: string): boolean {
        const t = text.toLowerCase();
        return this.qp.items.some((i) => i.rank !== undefined && `${i.label} ${i.description ?? ''}`.toLowerCase().includes(t));
    }

    /** Enter: the typed choice (it then stands) and the checked ranks, attached now; nothing yet: the pick stays open. */
    private async accept(): Promise<void> {
        if (this.accepting) return;
        this.accepting = true;
        try {
            await this.acceptNow();
        } finally {
            this.accepting = false;
        }
    }

    private async acceptNow(): Promise<void> {
        const typed = this.qp.value.trim();
        const checked = this.qp.selectedItems.map((i) => i.rank).filter((r): r is number => r !== undefined);
        let named: number[] = [];
        if (typed) {
            // A choice wins over a filter of the rows (`1` names rank 1); a filter takes the checked rows.
            const got = await this.resolve(typed).catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }));
            if ('ranks' in got) {
                this.standing = typed;
                named = got.ranks;
            } else if (!this.filters(typed)) {
                this.qp.title = `${this.baseTitle} — ${got.error}`;
                return;
            }
        }
        if (!checked.length && !this.standing) return;
        this.closePick();
        const now = toAttach(this.started, [...checked, ...named], this.taken());
        this.host.log.info(`ranks as they start: ${this.job}: attach ${formatSpec(now.map((r) => r.rank)) || 'none yet'}${this.standing ? `; ${this.standing} stands` : ''}`);
        if (this.standing) {
            this.status = this.host.setStatus(`$(watch) ${this.host.l10n.t('Rank Debugger: ranks {0} are attached as they start', this.standing)}`);
        } else {
            this.stop();
        }
        await this.attach(now);
    }

    /** Ranks this window's sessions have or are starting, and those sent here. */
    private taken(): Set<number> {
        const out = this.deps.state.claimed(this.job);
        for (const r of this.sent) out.add(r);
        return out;
    }

    private async attach(ranks: StartedRank[]): Promise<void> {
        if (!ranks.length || !this.info) return;
        for (const r of ranks) this.sent.add(r.rank);
        await this.deps.attach(this.info, ranks.map((r) => r.info));
    }

    /** The standing choice: the ranks it names that have started since. */
    private async attachStanding(): Promise<void> {
        const got = await this.resolve(this.standing).catch(() => ({ error: '' }));
        if ('ranks' in got) await this.attach(toAttach(this.started, got.ranks, this.taken()));
        // Every rank has started: no rank is left to wait for.
        const world = this.info?.worldSize ?? null;
        if (!this.pickOpen && world !== null && this.started.length >= world) this.stop();
    }

    /** The pick closed: by Enter (the watch may stand on), by Escape (the job runs on, armed), or by the job's end. */
    private hidden(): void {
        if (!this.pickOpen) return;
        const ended = this.ended; // read first: stop() marks the watch ended
        this.closePick();
        this.stop();
        if (!ended) {
            this.host.showInfo(this.host.l10n.t('The job runs on with every rank armed: attach to any rank from Training Jobs, or stop it there.'));
        }
    }

    private end(why: string): void {
        if (this.ended) return;
        this.host.log.info(`ranks as they start: ${this.job}: ${why}`);
        this.ended = true;
        this.closePick();
        this.stop();
    }

    private closePick(): void {
        if (!this.pickOpen) return;
        this.pickOpen = false;
        this.qp.hide();
        this.qp.dispose();
    }

    private stop(): void {
        this.ended = true;
        if (this.timer) clearTimeout(this.timer);
        this.watcher?.close();
        this.status?.dispose();
        for (const s of this.subs) s.dispose();
        this.subs.length = 0;
    }
}
