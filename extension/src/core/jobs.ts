/**
 * Reading the job registry (`rankdebug.runtime.registry`): one folder per job, `job.json`
 * and one `rank-N.json` per rank. Node `fs` only; no `vscode` import.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface RankEntry {
    rank: number;
    local_rank?: number | null;
    world_size?: number | null;
    host?: string | null;
    port?: number | null;
    pid?: number | null;
    state?: string;
    command?: string[];
    cwd?: string;
    start_time?: number;
}

export interface JobEntry {
    job: string;
    pid?: number;
    host?: string;
    state?: string;
    command?: string[];
    cwd?: string;
    launcher?: string;
    ranks?: number[] | null;
    rank_spec?: string;
    world_size?: number | null;
    start_time?: number;
    alive: boolean;
    /** The job's registry folder (its control socket is `ctl.sock` in it). */
    dir: string;
    rankEntries: RankEntry[];
}

/** The registry's root, as the Python side computes it (it may not exist yet). */
export function registryRoot(env: NodeJS.ProcessEnv = process.env, uid: number = process.getuid?.() ?? 0): string {
    const runtime = env.XDG_RUNTIME_DIR;
    if (runtime) {
        try {
            const st = fs.statSync(runtime);
            if (st.isDirectory() && st.uid === uid) return path.join(runtime, 'rankdebug');
        } catch {
            // fall through
        }
    }
    return path.join('/tmp', `rankdebug-${uid}`);
}

function readJson(file: string): Record<string, unknown> | undefined {
    try {
        const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
        return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    } catch {
        return undefined;
    }
}

export function pidAlive(pid: number | undefined | null): boolean {
    if (typeof pid !== 'number' || pid <= 0) return false;
    try {
        process.kill(pid, 0);
        return true;
    } catch (e) {
        return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
}

/**
 * Why `dir` is not a registry folder to trust (a link, or another user's: a planted folder
 * could name ports that are not the job's), or undefined when it is this user's own folder.
 */
export function untrustedFolder(dir: string, uid: number = process.getuid?.() ?? 0): string | undefined {
    let st: fs.Stats;
    try {
        st = fs.lstatSync(dir);
    } catch {
        return undefined; // not there (yet): nothing to trust or distrust
    }
    if (st.isSymbolicLink()) return `${dir} is a symbolic link, not a folder of yours`;
    if (!st.isDirectory()) return `${dir} is not a folder`;
    if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not to you`;
    return undefined;
}

/** Every job in the registry, oldest first; jobs whose supervisor is gone are left out unless `all`. */
export function listJobs(root: string = registryRoot(), all = false): JobEntry[] {
    let names: string[];
    try {
        if (untrustedFolder(root) !== undefined) return [];
        names = fs.readdirSync(root).sort();
    } catch {
        return [];
    }
    const out: JobEntry[] = [];
    for (const name of names) {
        const dir = path.join(root, name);
        let files: string[];
        try {
            if (untrustedFolder(dir) !== undefined || !fs.statSync(dir).isDirectory()) continue;
            files = fs.readdirSync(dir);
        } catch {
            continue;
        }
        const info = readJson(path.join(dir, 'job.json')) ?? {};
        const rankEntries = files
            .filter((f) => /^rank-\d+\.json$/.test(f))
            .map((f) => readJson(path.join(dir, f)))
            .filter((e): e is Record<string, unknown> => e !== undefined && typeof e.rank === 'number')
            .map((e) => e as unknown as RankEntry)
            .sort((a, b) => a.rank - b.rank);
        const pid = typeof info.pid === 'number' ? info.pid : undefined;
        const alive = pidAlive(pid);
        if (!alive && !all) continue;
        out.push({ ...(info as Partial<JobEntry>), job: typeof info.job === 'string' ? info.job : name, pid, alive, dir, rankEntries });
    }
    return out;
}

/** The newest job (for `"job": "latest"`). */
export function findJob(id: string, jobs: readonly JobEntry[]): JobEntry | undefined {
    if (id === 'latest' || id === '') return jobs[jobs.length - 1];
    return jobs.find((j) => j.job === id);
}

/** The status bar text while jobs run: `rankdebug: 2/4 ranks paused`. */
export function statusText(paused: number, total: number): string {
    return `rankdebug: ${paused}/${total} ranks paused`;
}
