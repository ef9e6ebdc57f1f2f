/**
 * The lines of `rankdebug attach JOB SPEC --json`, read through the names declared in
 * pyserver/rankdebug/protocol/attach.py (generated types): each rank's `listening` (where
 * to connect) or `failed` (why not). No `vscode` import.
 */
import type { FailedAttach, ListeningAttach } from './generated/attachLines';
import type { Raw } from './raw';

export interface AttachedRank {
    rank: number;
    host: string;
    port: number;
}

export interface FailedRank {
    /** null when the line did not say which */
    rank: number | null;
    message: string;
}

export interface AttachAnswer {
    listening: AttachedRank[];
    failed: FailedRank[];
}

/** The ranks that listen and the ones that failed, in the order said; other lines are skipped. */
export function readAttachLines(lines: readonly Record<string, unknown>[]): AttachAnswer {
    const out: AttachAnswer = { listening: [], failed: [] };
    for (const line of lines) {
        if (line.event === 'listening') {
            const l: Raw<ListeningAttach> = line;
            if (typeof l.rank === 'number' && typeof l.host === 'string' && typeof l.port === 'number') {
                out.listening.push({ rank: l.rank, host: l.host, port: l.port });
            }
        } else if (line.event === 'failed') {
            const f: Raw<FailedAttach> = line;
            out.failed.push({
                rank: typeof f.rank === 'number' ? f.rank : null,
                message: typeof f.message === 'string' ? f.message : '',
            });
        }
    }
    return out;
}
