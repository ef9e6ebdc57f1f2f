/**
 * The group commands: Continue / Pause / Step Over / Step Into / Step Out All Ranks, Run
 * Chosen Ranks to Cursor, Stop Ranks Together / Alone, Make Group…, Choose Ranks for Group
 * Commands…. Each goes to the job's supervisor over its control socket (core/control.ts) for
 * the ranks rankTargets.ts picks, and is reported in the status bar as the supervisor's events
 * come (`ranks 0-3 stepped over`); a rank that waits in a collective is worth a notification
 * (`ranks 0,1,3 stepped over; rank 2 waiting in all_reduce`), errors too.
 * Also the context keys the menus read: `rankdebug.jobRunning` (a job this window debugs takes
 * commands), `rankdebug.parentFocused` (the focused session is such a job's own), and
 * `rankdebug.stopMode` (that job's stop mode). The VS Code calls are the host's (host.ts);
 * rankGroups.ts gives it the real ones.
 */
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { sessionIdOf } from '../core/commandArgs';
import { sendControl, type ControlCommand, type ControlReply, type StepKind, type StopMode } from '../core/control';
import { debounce } from '../core/debounce';
import type { LaunchEvent } from '../core/events';
import { GroupProgress, who, type GroupVerb } from '../core/groupProgress';
import { CHECK_DELAY_MS, RankChecker, type Execute } from '../core/rankCheck';
import { formatSpec, isPlanError } from '../core/ranks';
import type { JobState, TrackedJob } from '../jobs/jobState';
import type { GroupsHost } from './host';
import { socketOf, type ControlJob, type GroupTargets } from './groupTargets';

/** Milliseconds `blocked` events are gathered before one notification says them all. */
const BLOCKED_GATHER_MS = 400;

interface Pending {
    job: ControlJob;
    progress: GroupProgress;
    notified: boolean;
    timer?: NodeJS.Timeout;
}

export class GroupCommands implements vscode.Disposable {
    /** The step or run-to under way, per job folder. */
    private readonly pending = new Map<string, Pending>();
    /**
     * The job's events that come while a command's reply is on the way, per job folder: events
     * and replies come on different channels, so a rank can stop, and a step arrive, before
     * the reply that says which ranks it moved.
     */
    private readonly early = new Map<string, LaunchEvent[]>();
    private message: vscode.Disposable | undefined;
    private readonly disposables: vscode.Disposable[] = [];
    private readonly contexts = new Map<string, unknown>();

    constructor(
        private readonly host: GroupsHost,
        private readonly state: JobState,
        private readonly targets: GroupTargets,
        private readonly execute: Execute,
    ) {
        this.disposables.push(
            state.onDidRankEvent(({ job, event }) => this.onEvent(job, event)),
            state.onDidChange(() => this.updateContexts()),
            host.onDidChangeActiveDebugSession(() => this.updateContexts()),
        );
        this.updateContexts();
    }

    private setContext(key: string, value: unknown): void {
        if (this.contexts.get(key) === value) return;
        this.contexts.set(key, value);
        this.host.setContext(key, value);
    }

    private updateContexts(): void {
        const focused = this.targets.focused();
        const active = this.host.activeSession();
        this.setContext('rankdebug.jobRunning', this.targets.controlled().length > 0);
        this.setContext('rankdebug.parentFocused', Boolean(focused?.dir && active && focused.parent?.id === active.id));
        this.setContext('rankdebug.stopMode', focused?.stopMode ?? this.host.settings().stopRanks);
    }

    /** Sends a command; shows the error and answers undefined when it fails. */
    private async send(job: ControlJob, cmd: ControlCommand): Promise<ControlReply | undefined> {
        const t0 = Date.now();
        try {
            const reply = await sendControl(socketOf(job), cmd, this.host.l10n);
            this.host.log.info(`${job.id}: ${cmd.command} → ranks ${formatSpec(reply.ranks)} (${Date.now() - t0} ms)`);
            return reply;
        } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            this.host.log.warn(`${job.id}: ${cmd.command}: ${message}`);
            this.host.showError(this.host.l10n.t('Rank Debugger: {0}', message));
            return undefined;
        }
    }

    private say(text: string): void {
        this.message?.dispose();
        this.message = this.host.setStatus(`$(debug-alt) ${text}`, 6000);
    }

    /** Continue / Pause / Step (over, in, out) on the command's ranks. */
    async run(verb: Exclude<GroupVerb, 'run-to'>, args: readonly unknown[]): Promise<void> {
        const job = await this.targets.job(args);
        if (!job) return;
        const pick = this.targets.ranks(job, args);
        const cmd: ControlCommand = verb === 'continue' || verb === 'pause' ? { command: verb, ranks: pick.ranks } : { command: 'step', ranks: pick.ranks, kind: verb as StepKind };
        const { reply, early } = await this.sendKeeping(job, cmd);
        if (!reply) return;
        const held = cmd.command === 'step' ? this.held(job, pick.ranks, reply.ranks) : undefined;
        this.follow(job, new GroupProgress(verb, reply.ranks, '', held), early);
    }

    /** `send`, keeping the job's events that come before the reply (see `early`). */
    private async sendKeeping(job: ControlJob, cmd: ControlCommand): Promise<{ reply: ControlReply | undefined; early: LaunchEvent[] }> {
        const early: LaunchEvent[] = [];
        this.early.set(job.dir, early);
        try {
            return { reply: await this.send(job, cmd), early };
        } finally {
            if (this.early.get(job.dir) === early) this.early.delete(job.dir);
        }
    }

    /**
     * Ranks a command named that the supervisor left out of its reply because they wait in a
     * collective (shown paused there, or reported `blocked`): rank → which collective. Read from
     * the live states, which the supervisor's `blocked` event for them (sent before the reply,
     * on another channel) may or may not have reached yet: either state says it.
     */
    private held(job: ControlJob, asked: readonly number[] | undefined, acted: readonly number[]): Map<number, string> {
        const out = new Map<number, string>();
        const t = job.tracked;
        if (!t?.live) return out;
        for (const rank of asked ?? [...t.ranks.keys()]) {
            if (acted.includes(rank)) continue;
            const live = t.live.get(rank);
            if (live?.state === 'paused' && live.waiting) out.set(rank, live.waiting);
            else if (live?.state === 'blocked') out.set(rank, live.in);
        }
        return out;
    }

    /** Run Chosen Ranks to Cursor: the active editor's file and line, a barrier every rank of the group holds at. */
    async runToCursor(args: readonly unknown[]): Promise<void> {
        const cursor = this.host.cursor();
        if (!cursor || cursor.uri.scheme !== 'file') {
            this.host.showInfo(this.host.l10n.t('Put the cursor on a line of a Python file first.'));
            return;
        }
        const job = await this.targets.job(args);
        if (!job) return;
        const file = cursor.uri.fsPath;
        const line = cursor.line + 1;
        const pick = this.targets.ranks(job, args);
        const { reply, early } = await this.sendKeeping(job, { command: 'run-to', ranks: pick.ranks, file, line });
        if (reply) this.follow(job, new GroupProgress('run-to', reply.ranks, `${path.basename(file)}:${line}`), early);
    }

    /** Reports a command's outcome now (with the events that came before its reply), or as its ranks arrive. */
    private follow(job: ControlJob, progress: GroupProgress, early: readonly LaunchEvent[] = []): void {
        const old = this.pending.get(job.dir);
        if (old?.timer) clearTimeout(old.timer);
        this.pending.delete(job.dir);
        for (const ev of early) progress.apply(ev);
        if (progress.done || !job.tracked) {
            // A job this window does not follow sends no events: the reply is all there is.
            this.say(progress.done ? progress.text(this.host.l10n) : this.host.l10n.t('{0}: sent', who(progress.ranks)));
            return;
        }
        const p: Pending = { job, progress, notified: false };
        this.pending.set(job.dir, p);
        this.say(progress.text(this.host.l10n));
        this.gatherBlocked(p);
    }

    private onEvent(tracked: TrackedJob, event: LaunchEvent): void {
        if (tracked.dir) this.early.get(tracked.dir)?.push(event);
        const p = tracked.dir ? this.pending.get(tracked.dir) : undefined;
        if (!p || !p.progress.apply(event)) return;
        if (p.progress.done) {
            if (p.timer) clearTimeout(p.timer);
            this.pending.delete(p.job.dir);
            // Once a notification said a rank waits, the arrival is worth one too.
            if (p.notified) this.host.showInfo(p.progress.text(this.host.l10n));
            else this.say(p.progress.text(this.host.l10n));
            return;
        }
        this.say(p.progress.text(this.host.l10n));
        this.gatherBlocked(p);
    }

    /** A rank reported waiting in a collective: one notification, once the others have had time to say so too. */
    private gatherBlocked(p: Pending): void {
        if (p.progress.blocked.size && !p.notified && !p.timer) {
            p.timer = setTimeout(() => {
                p.timer = undefined;
                p.notified = true;
                this.host.showWarning(p.progress.text(this.host.l10n));
            }, BLOCKED_GATHER_MS);
        }
    }

    /** Stop Ranks Together / Alone, for the command's job. */
    async setStopMode(mode: StopMode, args: readonly unknown[]): Promise<void> {
        const job = await this.targets.job(args);
        if (!job) return;
        const reply = await this.send(job, { command: 'stop-mode', mode });
        if (!reply) return;
        if (job.tracked) this.state.update(job.tracked, (j) => (j.stopMode = mode));
        this.updateContexts();
        this.say(
            mode === 'together'
                ? this.host.l10n.t('Ranks stop together: when one chosen rank stops, the other chosen ranks pause too.')
                : this.host.l10n.t('Ranks stop alone: when one chosen rank stops, the others run on.'),
        );
    }

    /** Make Group…: the ranks selected in Training Jobs, named; group commands act on it from now on. */
    async makeGroup(args: readonly unknown[]): Promise<void> {
        const job = await this.targets.job(args);
        if (!job) return;
        const ranks = this.targets.selected(job, args);
        if (!ranks.length) {
            this.host.showInfo(this.host.l10n.t('Select ranks in Training Jobs first (Ctrl or Shift + click), then Make Group.'));
            return;
        }
        await this.nameGroup(job, ranks);
    }

    /** Make a group of these ranks of a job (Compare Across Ranks' groups of equal values): the same as Make Group… */
    async makeGroupOf(jobId: string, ranks: readonly number[]): Promise<void> {
        const job = await this.targets.byId(jobId);
        if (job && ranks.length) await this.nameGroup(job, ranks);
    }

    /** Asks for the group's name (the ranks by default) and makes it the one the group commands act on. */
    private async nameGroup(job: ControlJob, ranks: readonly number[]): Promise<void> {
        const name = await this.host.showInputBox({
            title: this.host.l10n.t('Make a group of ranks {0}', formatSpec(ranks)),
            prompt: this.host.l10n.t('A name for the group; the group commands act on it until you choose other ranks.'),
            value: formatSpec(ranks),
        });
        if (!name?.trim()) return;
        const group = this.targets.groups.set(job.id, name.trim(), ranks);
        this.say(this.host.l10n.t('Group commands act on group {0} (ranks {1})', group.name, formatSpec(group.ranks)));
    }

    /**
     * Choose Ranks for Group Commands…: every chosen rank, a stored group, the ranks selected in
     * Training Jobs, the rank of the Call Stack session it was run on, or a typed range.
     */
    async chooseGroup(args: readonly unknown[]): Promise<void> {
        const job = await this.targets.job(args);
        if (!job) return;
        type Item = vscode.QuickPickItem & { ranks?: number[]; group?: string; all?: boolean; type?: boolean };
        const active = this.targets.groups.active(job.id);
        const items: Item[] = [{ label: this.host.l10n.t('All chosen ranks'), description: active ? '' : this.host.l10n.t('now'), all: true }];
        for (const g of this.targets.groups.list(job.id)) {
            items.push({ label: g.name, description: [who(g.ranks), active?.name === g.name ? this.host.l10n.t('now') : ''].filter(Boolean).join(' · '), group: g.name });
        }
        const selected = this.targets.selected(job);
        if (selected.length) items.push({ label: this.host.l10n.t('Selected in Training Jobs'), description: who(selected), ranks: selected });
        const callStackRank = this.callStackRank(job, args);
        if (callStackRank !== undefined) items.push({ label: this.host.l10n.t('Rank of the Call Stack selection'), description: who([callStackRank]), ranks: [callStackRank] });
        items.push({ label: this.host.l10n.t('Type ranks…'), description: '0-3,8', type: true });
        const picked = await this.host.showQuickPick(items, { title: this.host.l10n.t('Group commands of {0} act on…', job.title) });
        if (!picked) return;
        if (picked.all) this.targets.groups.use(job.id, undefined);
        else if (picked.group !== undefined) this.targets.groups.use(job.id, picked.group);
        else {
            const ranks = picked.type ? await this.askRanks(job) : picked.ranks;
            if (!ranks?.length) return;
            this.targets.groups.set(job.id, formatSpec(ranks), ranks);
        }
        this.say(this.host.l10n.t('Group commands act on {0}', this.targets.ranks(job, []).label));
    }

    /** The rank whose session a Call Stack item belongs to. */
    private callStackRank(job: ControlJob, args: readonly unknown[]): number | undefined {
        const id = sessionIdOf(args, (s) => this.state.bySession(s) !== undefined);
        if (!id || !job.tracked) return undefined;
        return [...job.tracked.ranks.values()].find((r) => r.session?.id === id)?.rank;
    }

    /** A typed rank range, read by the language server against the job's size. */
    private async askRanks(job: ControlJob): Promise<number[] | undefined> {
        const worldSize = job.tracked?.worldSize ?? null;
        const checker = new RankChecker(this.execute, { ranks: [], worldSize }, false);
        const text = await this.host.showInputBox({
            title: this.host.l10n.t('Ranks of {0} for the group commands', job.title),
            prompt: this.host.l10n.t('Ranks such as 1,3 or 0-3,8'),
            validateInput: debounce((value: string) => checker.problem(value), CHECK_DELAY_MS, undefined),
        });
        if (!text?.trim()) return undefined;
        try {
            const reply = await checker.check(text);
            if (isPlanError(reply)) throw new Error(reply.error.message);
            if (reply.ranks === null) throw new Error(this.host.l10n.t('which ranks "{0}" names in job {1} is not known here; give rank numbers', text, job.id));
            return reply.ranks;
        } catch (e) {
            this.host.showError(this.host.l10n.t('Rank Debugger: {0}', e instanceof Error ? e.message : String(e)));
            return undefined;
        }
    }

    dispose(): void {
        for (const p of this.pending.values()) if (p.timer) clearTimeout(p.timer);
        this.message?.dispose();
        this.disposables.forEach((d) => d.dispose());
    }
}
