/**
 * What a rank row of Training Jobs says: the scan's state (jobList.ts), this window's session
 * state, and on top the supervisor's live state (liveRanks.ts) when this window follows the job.
 * No `vscode` import.
 */
import type { Coords } from './coords';
import { shownState, type JobInfo, type RankInfo, type SessionState, type ShownState } from './jobList';
import { liveText, stateKey, type LiveRank } from './liveRanks';
import type { Localize } from './localize';

/** A rank row as the tree groups it (rankTree.ts). */
export interface RankRow {
    rank: number;
    /** The host the rank runs on, when known. */
    node: string | null;
    /** Rows with equal keys may collapse into one range row. */
    key: string;
    /** The state in one word (`running`, `paused`), for a range row's counts. */
    word: string;
    /** The state as the row shows it (`paused at train.py:30 in main (breakpoint)`). */
    text: string;
    /** A codicon id. */
    icon: string;
    live?: LiveRank;
    /** The rank's parallel coordinates when the job reported them (Group Ranks by… groups by one). */
    coords?: Coords | null;
}

/** A scan or session state in the view's words. */
function stateWord(s: ShownState, l10n: Localize): string {
    switch (s) {
        case 'starting':
            return l10n.t('starting');
        case 'running':
            return l10n.t('running');
        case 'armed':
            return l10n.t('armed');
        case 'raised':
            return l10n.t('raised');
        case 'listening':
            return l10n.t('listening');
        case 'waiting for debugger':
            return l10n.t('waiting for debugger');
        case 'attached':
            return l10n.t('attached');
        case 'paused':
            return l10n.t('paused');
        case 'exited':
            return l10n.t('exited');
    }
}

const SHOWN_ICONS: Record<ShownState, string> = {
    starting: 'loading~spin',
    running: 'circle-outline',
    armed: 'zap',
    raised: 'error',
    listening: 'debug-disconnect',
    'waiting for debugger': 'debug-disconnect',
    attached: 'debug',
    paused: 'debug-pause',
    exited: 'circle-slash',
};

const LIVE_ICONS: Record<LiveRank['state'], string> = {
    running: 'circle-outline',
    paused: 'debug-pause',
    blocked: 'watch',
    raised: 'error',
    exited: 'circle-slash',
};

/** A live state in one word. */
function liveWord(live: LiveRank, l10n: Localize): string {
    switch (live.state) {
        case 'running':
            return l10n.t('running');
        case 'paused':
            return l10n.t('paused');
        case 'blocked':
            return l10n.t('waiting');
        case 'raised':
            return l10n.t('raised');
        case 'exited':
            return l10n.t('exited');
    }
}

/** A rank the scan found held at an uncaught exception, as the `raised` event would say it. */
function raisedLive(rank: RankInfo): LiveRank | undefined {
    return rank.raised && rank.state !== 'exited' ? { state: 'raised', pid: rank.pid, ...rank.raised } : undefined;
}

/**
 * The row of `rank`: the live state when the supervisor told one (it knows where the rank
 * stopped) or the scan found it held at an exception, else this window's session state, else
 * the scan's.
 */
export function rankRow(rank: RankInfo, job: JobInfo, session: SessionState, told: LiveRank | undefined, l10n: Localize): RankRow {
    const node = rank.host;
    const coords = rank.coords;
    const live = told ?? (session ? undefined : raisedLive(rank));
    if (live && !(live.state === 'running' && session === 'paused')) {
        return { rank: rank.rank, node, key: stateKey(live), word: liveWord(live, l10n), text: liveText(live, l10n), icon: LIVE_ICONS[live.state], live, coords };
    }
    const st = shownState(rank, job, session);
    const word = stateWord(st, l10n);
    return { rank: rank.rank, node, key: st, word, text: word, icon: SHOWN_ICONS[st], coords };
}
