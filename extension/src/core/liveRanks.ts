/**
 * Each rank's live state in a job this window follows, from the supervisor's `--json` events
 * (`stopped`, `continued`, `blocked`, `raised`, a rank's `exited`), and how a rank row words it:
 * running; paused at `model.py:88` in `forward` (breakpoint); paused at `model.py:90`, waiting in
 * all_reduce #6 (group 0) (a peer is stopped); waiting in all_reduce #6 (group 0) (a group step:
 * the number from PyTorch's records, where the rank could say); raised ValueError at model.py:88;
 * exited with code 1. No `vscode` import.
 */
import * as path from 'node:path';
import type { LaunchEvent } from './events';
import type { Localize } from './localize';

export interface Where {
    file: string | null;
    line: number | null;
    function: string | null;
}

/** Which collective of which process group: `seq` and `group` where the rank could say. */
export interface Numbered {
    seq?: number;
    group?: string;
}

export type LiveRank =
    | { state: 'running' }
    | ({ state: 'paused'; reason: string; waiting?: string } & Numbered & Where)
    | ({ state: 'blocked'; in: string } & Numbered)
    | ({ state: 'raised'; exception: string; message: string; pid: number | null } & Where)
    | { state: 'exited'; code: number };

/** The live states of a job's ranks; `apply` answers whether a row changed. */
export class LiveRanks {
    private readonly ranks = new Map<number, LiveRank>();

    get(rank: number): LiveRank | undefined {
        return this.ranks.get(rank);
    }

    apply(ev: LaunchEvent): boolean {
        const next = nextState(ev, (r) => this.ranks.get(r));
        if (!next) return false;
        const before = this.ranks.get(next.rank);
        if (before && JSON.stringify(before) === JSON.stringify(next.live)) return false;
        this.ranks.set(next.rank, next.live);
        return true;
    }
}

/** The state an event puts its rank in; undefined for events that change no rank. */
function nextState(ev: LaunchEvent, current: (rank: number) => LiveRank | undefined): { rank: number; live: LiveRank } | undefined {
    switch (ev.event) {
        case 'stopped':
            return {
                rank: ev.rank,
                live: { state: 'paused', reason: ev.reason, file: ev.file, line: ev.line, function: ev.function, ...(ev.waiting ? { waiting: ev.waiting, ...numbered(ev) } : {}) },
            };
        case 'continued':
            // A rank that ended stays ended; a late `continued` changes nothing.
            return current(ev.rank)?.state === 'exited' ? undefined : { rank: ev.rank, live: { state: 'running' } };
        case 'blocked':
            return { rank: ev.rank, live: { state: 'blocked', in: ev.in, ...numbered(ev) } };
        case 'raised':
            return { rank: ev.rank, live: { state: 'raised', exception: ev.exception, message: ev.message, pid: ev.pid, file: ev.file, line: ev.line, function: ev.function } };
        default:
            return undefined;
    }
}

function numbered(n: Numbered): Numbered {
    return { ...(n.seq !== undefined ? { seq: n.seq } : {}), ...(n.group !== undefined ? { group: n.group } : {}) };
}

/** `all_reduce #6 (group 0)`; `all_reduce` where the rank could not say which. */
export function collectiveText(name: string, n: Numbered, l10n: Localize): string {
    const numberedName = n.seq !== undefined ? `${name} #${n.seq}` : name;
    return n.group !== undefined ? l10n.t('{0} (group {1})', numberedName, n.group) : numberedName;
}

/** `model.py:88`; '' when the file is not known. */
export function whereText(w: Pick<Where, 'file' | 'line'>): string {
    if (!w.file) return '';
    const base = path.basename(w.file);
    return w.line !== null ? `${base}:${w.line}` : base;
}

/**
 * A key equal for ranks a collapsed row may stand for together: same state, and for paused or
 * raised ranks the same place (and reason or exception).
 */
export function stateKey(live: LiveRank): string {
    switch (live.state) {
        case 'paused':
            return `paused:${live.reason}:${live.file ?? ''}:${live.line ?? ''}${live.waiting ? `:${live.waiting}${numberKey(live)}` : ''}`;
        case 'blocked':
            return `blocked:${live.in}${numberKey(live)}`;
        case 'raised':
            return `raised:${live.exception}:${live.file ?? ''}:${live.line ?? ''}`;
        case 'exited':
            return `exited:${live.code}`;
        default:
            return live.state;
    }
}

/** `#6@0` (ranks at another collective, or another group's, do not collapse together); '' when unknown. */
function numberKey(n: Numbered): string {
    return n.seq !== undefined || n.group !== undefined ? `#${n.seq ?? '?'}@${n.group ?? '?'}` : '';
}

/** A stop reason in the view's words. */
function reasonWord(reason: string, l10n: Localize): string {
    switch (reason) {
        case 'breakpoint':
            return l10n.t('breakpoint');
        case 'pause':
            return l10n.t('pause');
        case 'step':
            return l10n.t('step');
        case 'exception':
            return l10n.t('exception');
        default:
            return reason;
    }
}

function pausedText(live: Extract<LiveRank, { state: 'paused' }>, l10n: Localize): string {
    const where = whereText(live);
    if (live.waiting) {
        // Paused from outside while it waits in a collective (a peer is stopped): where it waits.
        const what = collectiveText(live.waiting, live, l10n);
        if (!where) return l10n.t('paused, waiting in {0}', what);
        if (!live.function) return l10n.t('paused at {0}, waiting in {1}', where, what);
        return l10n.t('paused at {0} in {1}, waiting in {2}', where, live.function, what);
    }
    const why = reasonWord(live.reason, l10n);
    if (!where) return l10n.t('paused ({0})', why);
    if (!live.function) return l10n.t('paused at {0} ({1})', where, why);
    return l10n.t('paused at {0} in {1} ({2})', where, live.function, why);
}

/** The row's state text: `paused at model.py:88 in forward (breakpoint)`, `waiting in all_reduce #6 (group 0)`… */
export function liveText(live: LiveRank, l10n: Localize): string {
    switch (live.state) {
        case 'running':
            return l10n.t('running');
        case 'paused':
            return pausedText(live, l10n);
        case 'blocked':
            return l10n.t('waiting in {0}', collectiveText(live.in || '?', live, l10n));
        case 'raised': {
            const where = whereText(live);
            return where ? l10n.t('raised {0} at {1}', live.exception, where) : l10n.t('raised {0}', live.exception);
        }
        case 'exited':
            return l10n.t('exited with code {0}', live.code);
    }
}
