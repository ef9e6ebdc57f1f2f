/**
 * What each row of Training Jobs shows (jobsView.ts makes a `vscode.TreeItem` of it): a job
 * row (`torchrun · J1`, its rank count, where it was found, armed, its start; the command in
 * the tooltip), a range row (`ranks 0-127 · running`) and a rank row (coordinates, pid, state,
 * CPU, memory, GPU, its debug port; what its live state adds in the tooltip), each with the
 * context value the menus read and a codicon. No `vscode` import: the unit tests read the rows.
 */
import { coordText } from '../core/coords';
import { canAttach, formatBytes, formatCpu, formatGpu, jobContext, jobLabel, rankContext, rankCount, takesCommands, type JobInfo, type RankInfo, type SessionState } from '../core/jobList';
import { collectiveText, whereText, type LiveRank } from '../core/liveRanks';
import type { Localize } from '../core/localize';
import { groupRowId, jobRowId, rankRowId, type GroupTreeNode } from '../core/jobTree';
import { rankRow, type RankRow } from '../core/rankRow';
import { join } from '../core/shell';
import type { TrackedJob } from './jobState';

export type JobNode =
    | { kind: 'job'; job: JobInfo; tracked?: TrackedJob }
    | { kind: 'group'; job: JobInfo; group: GroupTreeNode; tracked?: TrackedJob }
    | { kind: 'rank'; job: JobInfo; rank: RankInfo; row?: RankRow; tracked?: TrackedJob };

/** A row as the tree shows it. */
export interface JobItem {
    id: string;
    label: string;
    /** Whether it has children, and shows them at first. */
    state: 'none' | 'collapsed' | 'expanded';
    description: string;
    /** Plain text; a job row's is the command (a shell code block) then `text`. */
    tooltip: string | { command: string; text: string };
    contextValue: string;
    /** A codicon id. */
    icon: string;
}

export function nodeId(n: JobNode): string {
    switch (n.kind) {
        case 'job':
            return jobRowId(n.job);
        case 'group':
            return groupRowId(n.job, n.group);
        case 'rank':
            return rankRowId(n.job, n.rank.rank);
    }
}

function time(seconds: number | null): string {
    if (!seconds) return '';
    return new Date(seconds * 1000).toLocaleTimeString();
}

/** What a rank's tooltip adds for its live state. */
function liveTip(live: LiveRank | undefined, l10n: Localize): string {
    switch (live?.state) {
        case 'paused':
            return live.file ? `${live.file}${live.line !== null ? `:${live.line}` : ''}${live.function ? ` (${live.function})` : ''}` : '';
        case 'blocked':
            return l10n.t('Waits in {0} for the ranks that have not reached it.', collectiveText(live.in || '?', live, l10n));
        case 'raised':
            return [
                `${live.exception}${live.message ? `: ${live.message}` : ''}`,
                whereText(live) ? `${live.file}:${live.line ?? ''}${live.function ? ` (${live.function})` : ''}` : '',
                l10n.t('The rank is held alive: Attach opens it at this frame.'),
            ]
                .filter(Boolean)
                .join('\n');
        default:
            return '';
    }
}

/** `pid 12 · paused at train.py:30 in main (breakpoint) · 45% · 302 MiB · GPU 0 · 127.0.0.1:5678`. */
function rankDescription(r: RankInfo, row: RankRow, where: string, l10n: Localize): string {
    const ended = row.key === 'exited' || row.live?.state === 'exited';
    return [
        coordText(r.coords),
        r.pid !== null ? `pid ${r.pid}` : '',
        row.text,
        ended ? '' : formatCpu(r.cpu),
        ended ? '' : formatBytes(r.rss),
        formatGpu(r.gpu),
        r.armed && row.key !== 'armed' ? l10n.t('armed') : '',
        where,
    ]
        .filter(Boolean)
        .join(' · ');
}

/** A range of ranks (`ranks 0-127 · running`), collapsed. */
export function groupItem(node: Extract<JobNode, { kind: 'group' }>): JobItem {
    const g = node.group;
    return {
        id: nodeId(node),
        label: g.label,
        state: 'collapsed',
        description: g.description,
        tooltip: `${g.label}\n${g.description}`,
        contextValue: ['rankdebug.ranks', takesCommands(node.job) ? 'control' : ''].filter(Boolean).join(' '),
        icon: g.id.startsWith('node:') ? 'server' : g.id.startsWith('dim:') ? 'layers' : 'list-tree',
    };
}

/** A job row, expanded; `shown`: how many rank rows a filter lets through (undefined: no filter). */
export function jobItem(node: Extract<JobNode, { kind: 'job' }>, shown: number | undefined, l10n: Localize): JobItem {
    const j = node.job;
    const source = j.source === 'registry' ? l10n.t('rankdebug') : l10n.t('found running');
    const count = shown !== undefined ? l10n.t('{0} shown', shown) : '';
    return {
        id: nodeId(node),
        label: jobLabel(j),
        state: 'expanded',
        description: [l10n.t('{0} ranks', rankCount(j)), count, source, j.armed ? l10n.t('armed') : '', time(j.startTime)].filter(Boolean).join(' · '),
        tooltip: { command: j.command.length ? join(j.command) : '', text: `\ncwd: ${j.cwd ?? ''}\n${l10n.t('launcher pid')}: ${j.launcherPid ?? ''}\n` },
        contextValue: jobContext(j, Boolean(node.tracked?.terminal)),
        icon: j.armed ? 'zap' : 'server-process',
    };
}

/** A rank row; `session`: this window's session state of the rank. */
export function rankItem(node: Extract<JobNode, { kind: 'rank' }>, session: SessionState, l10n: Localize): JobItem {
    const r = node.rank;
    const row = node.row ?? rankRow(r, node.job, session, node.tracked?.live?.get(r.rank), l10n);
    const where = r.port ? `${r.address ?? '127.0.0.1'}:${r.port}` : '';
    return {
        id: nodeId(node),
        label: `rank ${r.rank}`,
        state: 'none',
        description: rankDescription(r, row, where, l10n),
        tooltip: [
            `rank ${r.rank}${r.localRank !== null ? ` (local ${r.localRank})` : ''} · pid ${r.pid ?? '?'} · ${r.host ?? ''}`,
            coordText(r.coords),
            `${row.text}${where ? ` · ${where}` : ''}`,
            liveTip(row.live, l10n),
            canAttach(r, session) ? l10n.t('Attach starts a debugger in this rank; only this rank pauses.') : '',
        ]
            .filter(Boolean)
            .join('\n'),
        contextValue: rankContext(r, node.job, session),
        icon: row.icon,
    };
}

/** Jobs by start time, the newest first (a job whose start is unknown last). */
export function newestFirst(jobs: readonly JobInfo[]): JobInfo[] {
    return [...jobs].sort((a, b) => (b.startTime ?? 0) - (a.startTime ?? 0));
}
