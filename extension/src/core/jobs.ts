/**
 * Choosing a running job among those `rankdebug jobs --json` listed (core/jobList.ts). The
 * extension learns about jobs only from that answer: it never reads the registry folder,
 * whose place, trust rules and files are the Python side's (`rankdebug.runtime.registry`).
 * No `vscode` import.
 */
import type { JobInfo } from './jobList';

/**
 * The job an attach configuration's `job` names: `latest` (or empty) is the newest job
 * `rankdebug launch` supervises; otherwise the job with that id.
 */
export function findJob(id: string, jobs: readonly JobInfo[]): JobInfo | undefined {
    if (id === 'latest' || id === '') {
        const supervised = jobs.filter((j) => j.source === 'registry');
        return [...supervised].sort((a, b) => (a.startTime ?? 0) - (b.startTime ?? 0) || a.id.localeCompare(b.id)).pop();
    }
    return jobs.find((j) => j.id === id);
}

/** The status bar text while jobs run: `rankdebug: 2/4 ranks paused`. */
export function statusText(paused: number, total: number): string {
    return `rankdebug: ${paused}/${total} ranks paused`;
}
