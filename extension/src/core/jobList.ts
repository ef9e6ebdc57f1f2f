/**
 * The Training Jobs view's model: `rankdebug jobs --json` (registry + /proc scan, shape in
 * pyserver/rankdebug/jobs/__init__.py) read defensively, and what each row shows. The
 * Python side finds and describes jobs; this module only reads its answer and words it.
 * No `vscode` import.
 */
import { coordText, readCoords, type Coords } from './coords';
import type { AnswerJson, JobJson, RankJson, RaisedJson, GpuJson } from './generated/jobsAnswer';
import type { Raw } from './raw';

export type RankStateName = 'starting' | 'running' | 'armed' | 'raised' | 'listening' | 'attached' | 'exited';

/** Where a rank held alive after an uncaught exception raised it (`rankdebug.runtime.hold`). */
export interface RaisedInfo {
    exception: string;
    message: string;
    file: string | null;
    line: number | null;
    function: string | null;
}

export interface GpuUse {
    index: number | null;
    memoryMib: number | null;
}

export interface RankInfo {
    pid: number | null;
    rank: number;
    localRank: number | null;
    worldSize: number | null;
    host: string | null;
    port: number | null;
    address: string | null;
    state: RankStateName;
    cpu: number | null;
    rss: number | null;
    gpu: GpuUse[] | null;
    armed: boolean;
    /** Set while the rank is held at an uncaught exception. */
    raised: RaisedInfo | null;
    /** Its parallel coordinates (`{dp: 1, tp: 3}`, outermost first) from the job's device mesh or parallel_state; null while unknown. */
    coords?: Coords | null;
}

export interface JobInfo {
    id: string;
    source: 'registry' | 'scan';
    host: string | null;
    launcher: string;
    launcherPid: number | null;
    command: string[];
    cwd: string | null;
    startTime: number | null;
    worldSize: number | null;
    armed: boolean;
    /** The job's folder, where its supervisor takes commands (`dir`; null for a job the scan found); see `controlDir`. */
    dir: string | null;
    ranks: RankInfo[];
}

export interface JobsSnapshot {
    host: string | null;
    scanMs: number | null;
    warnings: string[];
    /** The registry's root folder (the Python side made it private), watched for jobs coming and going; null when not said. */
    registry: string | null;
    jobs: JobInfo[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const STATES: readonly RankStateName[] = ['starting', 'running', 'armed', 'raised', 'listening', 'attached', 'exited'];

function readRaised(v: unknown): RaisedInfo | null {
    if (typeof v !== 'object' || v === null) return null;
    const r: Raw<RaisedJson> = obj(v);
    return { exception: str(r.exception) ?? 'Exception', message: str(r.message) ?? '', file: str(r.file), line: num(r.line), function: str(r.function) };
}

function readRank(v: unknown): RankInfo | undefined {
    const r: Raw<RankJson> = obj(v);
    const rank = num(r.rank);
    if (rank === null) return undefined;
    const state = STATES.includes(r.state as RankStateName) ? (r.state as RankStateName) : 'running';
    const gpu = Array.isArray(r.gpu) ? r.gpu.map((g) => { const one: Raw<GpuJson> = obj(g); return { index: num(one.index), memoryMib: num(one.memory_mib) }; }) : null;
    return {
        pid: num(r.pid),
        rank,
        localRank: num(r.local_rank),
        worldSize: num(r.world_size),
        host: str(r.host),
        port: num(r.port),
        address: str(r.address),
        state,
        cpu: num(r.cpu),
        rss: num(r.rss),
        gpu,
        armed: r.armed === true || state === 'armed',
        raised: readRaised(r.raised),
        coords: readCoords(r.coords),
    };
}

function readJob(v: unknown): JobInfo | undefined {
    const j: Raw<JobJson> = obj(v);
    const id = str(j.id);
    if (!id) return undefined;
    const ranks = (Array.isArray(j.ranks) ? j.ranks : []).map(readRank).filter((r): r is RankInfo => r !== undefined);
    ranks.sort((a, b) => a.rank - b.rank);
    return {
        id,
        source: j.source === 'registry' ? 'registry' : 'scan',
        host: str(j.host),
        launcher: str(j.launcher) ?? 'other',
        launcherPid: num(j.launcher_pid),
        command: strs(j.command),
        cwd: str(j.cwd),
        startTime: num(j.start_time),
        worldSize: num(j.world_size),
        armed: j.armed === true || ranks.some((r) => r.armed),
        dir: str(j.dir),
        ranks,
    };
}

/** Reads the object `rankdebug jobs --json` printed (already JSON-decoded). Missing fields are null/false. */
export function readJobs(answer: unknown): JobsSnapshot {
    const a: Raw<AnswerJson> = obj(answer);
    return {
        host: str(a.host),
        scanMs: num(a.scan_ms),
        warnings: strs(a.warnings),
        registry: str(a.registry),
        jobs: (Array.isArray(a.jobs) ? a.jobs : []).map(readJob).filter((j): j is JobInfo => j !== undefined),
    };
}

/**
 * Whether a job's supervisor takes commands here (the group commands): a job `rankdebug
 * launch` supervises on this machine, whose folder the answer names; not a job the scan found.
 */
export function takesCommands(job: Pick<JobInfo, 'dir'>): boolean {
    return Boolean(job.dir);
}

/** The folder of a job `rankdebug launch` supervises here (its control socket is `ctl.sock` in it), as the answer names it; null for a job the scan found. */
export function controlDir(job: Pick<JobInfo, 'dir'>): string | null {
    return job.dir || null;
}

/** What this window's debug sessions know of a rank (jobState.ts). */
export type SessionState = 'attached' | 'paused' | undefined;

/** The state a rank row shows: this window's session state wins over the scan's. */
export type ShownState = 'starting' | 'running' | 'armed' | 'raised' | 'listening' | 'waiting for debugger' | 'attached' | 'paused' | 'exited';

export function shownState(rank: RankInfo, job: JobInfo, session: SessionState): ShownState {
    if (session) return session;
    // Ranks `rankdebug launch` chose wait for a debugger; a rank injected later just listens.
    if (rank.state === 'listening') return job.source === 'registry' ? 'waiting for debugger' : 'listening';
    return rank.state;
}

/** Whether the view offers Attach on a rank: any live rank this window has no session on. */
export function canAttach(rank: RankInfo, session: SessionState): boolean {
    return !session && rank.pid !== null && rank.state !== 'exited' && rank.state !== 'attached';
}

/** Ranks a rank's debugger can be reached on without injecting anything. */
export function listensNow(rank: RankInfo): boolean {
    return rank.port !== null && rank.port > 0 && (rank.state === 'listening' || rank.state === 'attached');
}

/** `302 MiB`, `1.4 GiB`. */
export function formatBytes(bytes: number | null): string {
    if (bytes === null || bytes < 0) return '';
    const mib = bytes / (1024 * 1024);
    if (mib < 1024) return `${Math.round(mib)} MiB`;
    return `${(mib / 1024).toFixed(1)} GiB`;
}

/** `45%` (of one core), whole percents so the row does not change at every refresh. */
export function formatCpu(cpu: number | null): string {
    return cpu === null ? '' : `${Math.round(cpu)}%`;
}

/** `GPU 0`, `GPU 0,1`; '' when the rank uses none or nvidia-smi is not there. */
export function formatGpu(gpu: GpuUse[] | null): string {
    if (!gpu?.length) return '';
    const ids = gpu.map((g) => (g.index === null ? '?' : String(g.index)));
    return `GPU ${ids.join(',')}`;
}

/** The job row: label `torchrun · ID`, description parts `N ranks`-count and source (worded by the caller). */
export function jobLabel(job: JobInfo): string {
    return `${job.launcher} · ${job.id}`;
}

export function rankCount(job: JobInfo): number {
    return job.worldSize ?? job.ranks.length;
}

/**
 * Context value of a job row: space-separated tokens after `rankdebug.job`
 * (`registry`|`scan`, `terminal` when this window has its terminal, `armed`). A registry job's
 * supervisor takes group commands (package.json matches `registry`).
 */
export function jobContext(job: JobInfo, hasTerminal: boolean): string {
    return ['rankdebug.job', job.source, hasTerminal ? 'terminal' : '', job.armed ? 'armed' : ''].filter(Boolean).join(' ');
}

/**
 * Context value of a rank row: `rankdebug.rank` + `attachable`, `armed` (Evaluate), `exited`,
 * `control` (the job's supervisor takes group commands).
 */
export function rankContext(rank: RankInfo, job: JobInfo, session: SessionState): string {
    const armed = (rank.armed || job.armed) && rank.state !== 'exited';
    const control = takesCommands(job) ? 'control' : '';
    return ['rankdebug.rank', canAttach(rank, session) ? 'attachable' : '', armed ? 'armed' : '', rank.state === 'exited' ? 'exited' : '', control].filter(Boolean).join(' ');
}

/** A string that changes when anything a row shows changes (the tree re-renders only then). */
export function rowSignature(job: JobInfo, rank?: RankInfo, session?: SessionState, extra = ''): string {
    if (!rank) return JSON.stringify([job.id, job.launcher, job.source, rankCount(job), job.armed, job.launcherPid, extra]);
    return JSON.stringify([rank.rank, rank.pid, rank.state, rank.port, formatCpu(rank.cpu), formatBytes(rank.rss), formatGpu(rank.gpu), rank.armed, coordText(rank.coords), session ?? '', extra]);
}

/** The `rankdebug.jobs.refreshSeconds` setting as milliseconds; 0 (off) for anything not a positive number. */
export function refreshMs(value: unknown): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return 0;
    return Math.max(1, value) * 1000;
}
