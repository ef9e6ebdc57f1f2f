/**
 * The hang notification: when a job's supervisor says `hang` (core/hangEvents.ts), one warning
 * "Training job looks stuck: <the first culprit's why>" with *Why Is This Job Stuck?* and, when
 * a culprit names a rank, *Debug rank N*; once per hang (a second `hang` of the same job before
 * its `hang_over` shows nothing). `hang_over` while the warning is still up says the job moved
 * on: VS Code has no call that closes a notification, so a later click still acts (the panel
 * then tells what the job does now). Everything it shows and runs goes through NoticeHost,
 * which the unit tests fake; no `vscode` import.
 */
import type { HangEvent, HangOverEvent } from '../core/hangEvents';
import type { Localize } from '../core/localize';

/** What the notification uses from VS Code (vscodeHost.ts `noticeHost` gives the real one, whyStuck.ts exports it). */
export interface NoticeHost {
    readonly l10n: Localize;
    /** A warning notification with buttons: the button clicked, or undefined when it was closed. */
    showWarning(message: string, ...actions: string[]): Thenable<string | undefined>;
    showInfo(message: string): void;
    /** Why Is This Job Stuck? on the job (none known: the command asks which). */
    whyStuck(job: string | null): void;
    /** Attaches a debugger to the rank of the job. */
    debugRank(job: string | null, rank: number): void;
    log(message: string): void;
}

/** What the job adapter tells (debug/host.ts `AdapterHost.hang`). */
export interface HangListener {
    hang(ev: HangEvent): void;
    hangOver(ev: HangOverEvent): void;
}

interface Shown {
    over: boolean;
}

export class HangNotices implements HangListener {
    /** Jobs in a hang the user was told of (until its `hang_over`). */
    private readonly told = new Set<string>();
    /** Warnings still up, by job. */
    private readonly shown = new Map<string, Shown>();

    constructor(private readonly host: NoticeHost) {}

    hang(ev: HangEvent): void {
        const key = ev.job ?? '';
        if (this.told.has(key)) return;
        this.told.add(key);
        const { l10n } = this.host;
        const rank = ev.culprits.find((c) => c.ranks.length)?.ranks[0];
        const why = ev.culprits.find((c) => c.why)?.why || ev.why || (ev.seconds !== null ? l10n.t('no rank has made progress for {0} s', Math.round(ev.seconds)) : '');
        const whyStuck = l10n.t('Why Is This Job Stuck?');
        const debug = rank !== undefined ? l10n.t('Debug rank {0}', rank) : undefined;
        const notice: Shown = { over: false };
        this.shown.set(key, notice);
        this.host.log(`hang of ${ev.job ?? '?'} after ${ev.seconds ?? '?'} s: ${why}`);
        void this.host.showWarning(l10n.t('Training job looks stuck: {0}', why), ...(debug ? [whyStuck, debug] : [whyStuck])).then((choice) => {
            if (this.shown.get(key) === notice) this.shown.delete(key);
            if (choice === whyStuck) this.host.whyStuck(ev.job);
            else if (choice !== undefined && choice === debug && rank !== undefined) this.host.debugRank(ev.job, rank);
        });
    }

    hangOver(ev: HangOverEvent): void {
        const key = ev.job ?? '';
        this.told.delete(key);
        const notice = this.shown.get(key);
        if (!notice) return;
        this.shown.delete(key);
        notice.over = true;
        this.host.log(`hang of ${ev.job ?? '?'} over after ${ev.seconds ?? '?'} s`);
        const { l10n } = this.host;
        this.host.showInfo(
            ev.seconds !== null
                ? l10n.t('The training job {0} moved on after {1} s stuck.', ev.job ?? '', Math.round(ev.seconds))
                : l10n.t('The training job {0} moved on.', ev.job ?? ''),
        );
    }

    /** Whether a warning for the job is still up (tests). */
    showing(job: string | null): boolean {
        return this.shown.has(job ?? '');
    }
}
