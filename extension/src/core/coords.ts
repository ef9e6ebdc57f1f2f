/**
 * Parallel coordinates as the extension shows them: the plan's (`rankdebug.plan` → `coords`:
 * what the command says, before anything runs) and a running rank's (`rankdebug jobs --json`
 * → `ranks[].coords`, from its DeviceMesh or Megatron's parallel_state). Read defensively,
 * worded (`dp 1 · pp 0 · tp 5`), and the quick-pick's per-dimension presets as selectors
 * (`dp=0 tp=0`: the ranks that differ only in pp) for the server to resolve.
 * No `vscode` import.
 */

import type { Localize } from './localize';
import { formatSpec } from './ranks';

/** A rank's coordinates, outermost dimension first: `{dp: 1, tp: 3}`. */
export type Coords = Readonly<Record<string, number>>;

/** One value the layout was read from (`--tensor-model-parallel-size 2`, line 1-based). */
export interface CoordRead {
    name: string;
    value: string;
    file: string | null;
    line: number | null;
}

/** The plan's `coords`: sizes, the grid's order (fastest first), where it was read, each rank's coordinates (index = rank). */
export interface PlanCoords {
    dims: Readonly<Record<string, number>>;
    order: readonly string[];
    worldSize: number | null;
    source: string;
    read: readonly CoordRead[];
    ranks: readonly Coords[];
}

/** As the job side bounds them (rankdebug.jobs.job_coords): at most 16 names, identifiers. */
const MAX_DIMS = 16;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 31;

/** `{name: index}` with 1 to 16 identifier names and whole indexes ≥ 0, in its own key order; else null. */
export function readCoords(v: unknown): Coords | null {
    if (!isObj(v)) return null;
    const entries = Object.entries(v);
    if (!entries.length || entries.length > MAX_DIMS) return null;
    const out: Record<string, number> = {};
    for (const [name, index] of entries) {
        if (!NAME.test(name) || !isIndex(index)) return null;
        out[name] = index;
    }
    return out;
}

/** The plan's `coords` object, or null when absent or not of its shape (then no rank shows coordinates). */
export function readPlanCoords(v: unknown): PlanCoords | null {
    if (!isObj(v)) return null;
    const dims = readCoords(v.dims);
    if (!dims || Object.values(dims).some((n) => n < 1) || !Array.isArray(v.ranks)) return null;
    const ranks: Coords[] = [];
    for (const r of v.ranks) {
        const c = readCoords(r);
        if (!c) return null;
        ranks.push(c);
    }
    const read = (Array.isArray(v.read) ? v.read : []).filter(isObj).map((r) => ({
        name: typeof r.name === 'string' ? r.name : '',
        value: typeof r.value === 'string' ? r.value : String(r.value ?? ''),
        file: typeof r.file === 'string' ? r.file : null,
        line: isIndex(r.line) ? r.line : null,
    }));
    return {
        dims,
        order: Array.isArray(v.order) ? v.order.filter((d): d is string => typeof d === 'string') : [],
        worldSize: isIndex(v.world_size) ? v.world_size : null,
        source: typeof v.source === 'string' ? v.source : '',
        read: read.filter((r) => r.name),
        ranks,
    };
}

/**
 * The dimensions in the order rows show them, outermost first: the grid's order reversed (the
 * plan writes it fastest first, as Megatron does), then any other dimension (a view such as
 * torchtitan's `dp`) as `dims` lists it; those of size 1 left out.
 */
export function shownDims(coords: Pick<PlanCoords, 'dims' | 'order'>): string[] {
    // A dimension of size 1 says nothing (pp 0 on every rank): left out.
    const named = new Set(Object.keys(coords.dims).filter((d) => coords.dims[d] > 1));
    const grid = [...coords.order].reverse().filter((d) => named.has(d));
    return [...grid, ...[...named].filter((d) => !grid.includes(d))];
}

/** `dp 1 · pp 0 · tp 5`, in `dims` order (default: the coordinates' own); dimensions the rank lacks are left out. */
export function coordText(where: Coords | null | undefined, dims: readonly string[] = where ? Object.keys(where) : []): string {
    if (!where) return '';
    const parts: string[] = [];
    for (const d of dims) if (where[d] !== undefined) parts.push(`${d} ${where[d]}`);
    return parts.join(' · ');
}

/** `tp 2 × dp 2 × pp 2`, outermost first. */
export function layoutText(coords: PlanCoords): string {
    return shownDims(coords)
        .map((d) => `${d} ${coords.dims[d]}`)
        .join(' × ');
}

/**
 * Where the layout was read: the flags with their values (`--tensor-model-parallel-size 2,
 * --pipeline-model-parallel-size 2`), values read from a file as the file and its lines
 * (`llama3_70b.toml:40-44`), else the framework's name.
 */
export function readText(coords: PlanCoords): string {
    const flags: string[] = [];
    const files = new Map<string, number[]>();
    for (const r of coords.read) {
        if (!r.file) {
            flags.push(r.value ? `${r.name} ${r.value}` : r.name);
            continue;
        }
        const lines = files.get(r.file) ?? [];
        if (r.line !== null) lines.push(r.line);
        files.set(r.file, lines);
    }
    const places = [...files].map(([file, lines]) => {
        const base = file.split(/[\\/]/).pop() || file;
        return lines.length ? `${base}:${formatSpec(lines)}` : base;
    });
    const all = [...flags, ...places];
    return all.length ? all.join(', ') : coords.source;
}

/** The layout and where it was read, for the quick-pick's title: `pp 2 × dp 2 × tp 2 from --tensor-model-parallel-size 2, …`. */
export function layoutTitle(coords: PlanCoords, l10n: Localize): string {
    return l10n.t('{0} from {1}', layoutText(coords), readText(coords));
}

/** A preset of one dimension's group: the selector that holds every other dimension at 0. */
export interface GroupPreset {
    dim: string;
    spec: string;
}

/**
 * Per dimension of the grid of size > 1, outermost first, the ranks that vary only along it
 * (the grid's other dimensions at 0): `dp=0 tp=0` for pp (the first rank of each pipeline
 * stage), `pp=0 dp=0` for tp (one tensor-parallel group). A view over several of the grid's
 * dimensions (torchtitan's `dp`) has none: which it spans is not said. Which ranks each names
 * is the server's to say.
 */
export function groupPresets(coords: Pick<PlanCoords, 'dims' | 'order'>): GroupPreset[] {
    const shown = shownDims(coords);
    const inGrid = shown.filter((d) => coords.order.includes(d));
    const grid = inGrid.length ? inGrid : shown;
    if (grid.length < 2) return [];
    return grid.map((d) => ({
        dim: d,
        spec: grid
            .filter((o) => o !== d)
            .map((o) => `${o}=0`)
            .join(' '),
    }));
}

/** The dimensions a job's ranks report, in the order the first rank to report each gives them. */
export function reportedDims(ranks: readonly { coords?: Coords | null }[]): string[] {
    const out: string[] = [];
    for (const r of ranks) {
        if (!r.coords) continue;
        for (const d of Object.keys(r.coords)) if (!out.includes(d)) out.push(d);
    }
    return out;
}

/** A selector to show as an example, from the job's own dimensions: `pp=last tp=0`, `tp=0`. */
export function exampleSelector(dims: readonly string[]): string {
    if (!dims.length) return 'tp=0';
    if (dims.length === 1) return `${dims[0]}=0`;
    return `${dims[0]}=last ${dims[dims.length - 1]}=0`;
}
