/**
 * The Compare Across Ranks webview's HTML, from the model of core/compare.ts: the groups of
 * ranks with equal values (the largest first, the smaller ones marked odd, with where a tensor
 * differs), sparklines of a scalar against rank (inline SVG; NaN/Inf as red bars), and a
 * table rank → value (a tensor's shape, dtype, min, max, mean, norm, NaN and Inf counts and
 * checksum), errors per rank. Values come from user processes, so every text is escaped; the
 * page loads nothing (CSP `default-src 'none'`, one nonce for its style and its script) and
 * takes its colours from the theme's CSS variables.
 * The page posts `{type: 'refresh'}`, `{type: 'tolerance', value}` (the text typed),
 * `{type: 'per', value}` (a dimension offered, or '' for all ranks together: the groups are
 * then per set of ranks sharing that dimension's value, each marked with its set) and
 * `{type: 'makeGroup', group}` (an index into the groups, never ranks). No `vscode` import.
 */
import { differsText, firstLine, groupIndex, groupLetter, rangeText, ranksText, shortNumber, tensorHead, type CompareView, type RankAnswer, type Sparkline, type ValueGroup } from './compare';
import type { Localize } from './localize';
import { escapeHtml, webviewPage } from './webviewHtml';

export interface CompareState {
    /** `Compare: weight`. */
    title: string;
    tolerance: number | null;
    /** The rank whose session the comparison was asked from. */
    from?: number;
    /** The function whose frame each rank evaluated in (`--function`). */
    frame?: string;
    /** While a run is under way: what it does (the last view stays below). */
    busy?: string;
    /** Why the last run gave no view. */
    error?: string;
    /** `0.41 s at 15:24:27`. */
    meta?: string;
    /** The job's parallel dimensions (its ranks' coordinates): offered to compare within one. */
    dims?: readonly string[];
    /** The dimension compared within (`eval --per`); none: all ranks together. */
    per?: string;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); margin: 0; padding: 8px 12px; }
header { display: flex; align-items: baseline; flex-wrap: wrap; gap: 4px 12px; margin-bottom: 6px; }
header h1 { font-size: 1.1em; margin: 0; font-weight: 600; font-family: var(--vscode-editor-font-family); }
header .meta { color: var(--vscode-descriptionForeground); }
.controls { display: flex; align-items: center; flex-wrap: wrap; gap: 6px; margin-bottom: 8px; }
.controls label { color: var(--vscode-descriptionForeground); }
input { background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, transparent); padding: 2px 4px; width: 7em; font: inherit; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; cursor: pointer; font: inherit; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
button.secondary:hover { background: var(--vscode-button-secondaryHoverBackground); }
.status { color: var(--vscode-descriptionForeground); padding: 4px 0; white-space: pre-wrap; }
.status.error { color: var(--vscode-errorForeground); }
.verdict { padding: 4px 8px; margin-bottom: 8px; border-left: 3px solid var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.verdict.odd { border-left-color: var(--vscode-editorWarning-foreground); }
.groups { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 10px; }
.group { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); border-radius: 3px; padding: 6px 8px; min-width: 220px; max-width: 560px; }
.group.odd { border-color: var(--vscode-editorWarning-foreground); box-shadow: 0 0 0 1px var(--vscode-editorWarning-foreground); background: var(--vscode-inputValidation-warningBackground, transparent); }
.group .head { display: flex; align-items: baseline; gap: 6px; }
.group .ranks { font-weight: 600; }
.group .per { color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); }
select { background: var(--vscode-dropdown-background); color: var(--vscode-dropdown-foreground); border: 1px solid var(--vscode-dropdown-border, transparent); font: inherit; }
.group .value { font-family: var(--vscode-editor-font-family); margin: 3px 0; word-break: break-word; }
.group .differs { color: var(--vscode-editorWarning-foreground); margin: 3px 0; }
.group .bad { color: var(--vscode-errorForeground); font-weight: 600; }
.letter { display: inline-block; min-width: 1.4em; text-align: center; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); font-size: 0.9em; }
.odd .letter, tr.odd .letter { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
.badge { border-radius: 8px; padding: 0 6px; font-size: 0.9em; background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
.sparks { display: flex; flex-wrap: wrap; gap: 6px 18px; margin-bottom: 10px; align-items: center; }
.spark { display: flex; align-items: center; gap: 6px; }
.spark .name { color: var(--vscode-descriptionForeground); min-width: 3em; }
.spark .range { color: var(--vscode-descriptionForeground); font-size: 0.9em; font-family: var(--vscode-editor-font-family); }
svg.line { background: var(--vscode-sideBar-background, transparent); border-radius: 2px; }
svg.line polyline { fill: none; stroke: var(--vscode-charts-blue, var(--vscode-foreground)); stroke-width: 1.5; }
svg.line circle { fill: var(--vscode-charts-blue, var(--vscode-foreground)); }
svg.line circle.odd { fill: var(--vscode-editorWarning-foreground); }
svg.line rect.bad { fill: var(--vscode-errorForeground, red); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
th { text-align: left; font-weight: 600; color: var(--vscode-descriptionForeground); border-bottom: 1px solid var(--vscode-panel-border, transparent); }
th, td { padding: 2px 10px 2px 4px; vertical-align: top; white-space: nowrap; }
td.text { white-space: normal; word-break: break-word; }
td.num { text-align: right; }
tr.odd td { background: var(--vscode-inputValidation-warningBackground, transparent); }
tr.odd td.rank { box-shadow: inset 3px 0 0 var(--vscode-editorWarning-foreground); }
tr.error td { color: var(--vscode-errorForeground); }
td.bad { color: var(--vscode-errorForeground); font-weight: 600; }
td.from::after { content: ' ◂'; color: var(--vscode-descriptionForeground); }
.output { color: var(--vscode-descriptionForeground); white-space: pre-wrap; margin: 0; }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
const tol = document.getElementById('tolerance');
const post = (m) => vscode.postMessage(m);
document.getElementById('refresh').addEventListener('click', () => post({ type: 'refresh' }));
document.getElementById('apply').addEventListener('click', () => post({ type: 'tolerance', value: tol.value }));
tol.addEventListener('keydown', (e) => { if (e.key === 'Enter') post({ type: 'tolerance', value: tol.value }); });
const per = document.getElementById('per');
if (per) per.addEventListener('change', () => post({ type: 'per', value: per.value }));
document.addEventListener('click', (e) => {
    const b = e.target instanceof Element ? e.target.closest('button.make-group') : null;
    if (b) post({ type: 'makeGroup', group: Number(b.dataset.group) });
});
`;

function header(state: CompareState, view: CompareView | undefined, l10n: Localize): string {
    const bits: string[] = [];
    if (view) {
        const failed = view.ranks.filter((r) => !r.ok).length;
        bits.push(failed ? l10n.t('{0} ranks answered, {1} failed', view.ranks.length - failed, failed) : l10n.t('{0} ranks answered', view.ranks.length));
        if (view.job) bits.push(l10n.t('job {0}', view.job));
    }
    if (state.frame) bits.push(l10n.t('in {0}', state.frame));
    if (state.tolerance !== null) bits.push(l10n.t('within {0}', shortNumber(state.tolerance)));
    if (state.per) bits.push(l10n.t('compared within each {0}', state.per));
    if (state.meta) bits.push(state.meta);
    const tol = state.tolerance === null ? '' : String(state.tolerance);
    return (
        `<header><h1>${escapeHtml(state.title)}</h1><span class="meta">${escapeHtml(bits.join(' · '))}</span></header>` +
        `<div class="controls"><label for="tolerance">${escapeHtml(l10n.t('Tolerance'))}</label><input id="tolerance" type="text" spellcheck="false" value="${escapeHtml(tol)}" placeholder="${escapeHtml(l10n.t('exact'))}">` +
        `<button id="apply" type="button" class="secondary">${escapeHtml(l10n.t('Apply'))}</button>` +
        `<button id="refresh" type="button">${escapeHtml(l10n.t('Refresh'))}</button>${perSelect(state, l10n)}</div>`
    );
}

/** Compare all ranks together, or within each value of one of the job's dimensions. */
function perSelect(state: CompareState, l10n: Localize): string {
    const dims = state.dims ?? [];
    if (!dims.length && !state.per) return '';
    const options = [state.per && !dims.includes(state.per) ? [...dims, state.per] : dims]
        .flat()
        .map((d) => `<option value="${escapeHtml(d)}"${d === state.per ? ' selected' : ''}>${escapeHtml(l10n.t('within each {0}', d))}</option>`);
    return (
        `<label for="per">${escapeHtml(l10n.t('Compare'))}</label><select id="per">` +
        `<option value=""${state.per ? '' : ' selected'}>${escapeHtml(l10n.t('all ranks together'))}</option>${options.join('')}</select>`
    );
}

/** The verdict above the groups: all equal, the odd ones out, or no majority. */
function verdict(view: CompareView, l10n: Localize): string {
    if (!view.groups.length) return '';
    const sets = new Set(view.groups.flatMap((g) => (g.per !== undefined ? [g.per] : [])));
    if (sets.size) {
        if (view.odd.length) return `<div class="verdict odd">${escapeHtml(l10n.t('{0} sets compared apart; odd one out: {1}', sets.size, ranksText(view.odd)))}</div>`;
        if (view.groups.length === sets.size) return `<div class="verdict same">${escapeHtml(l10n.t('Equal within each of the {0} sets', sets.size))}</div>`;
        return `<div class="verdict odd">${escapeHtml(l10n.t('{0} sets compared apart; in some, no group is larger than the others', sets.size))}</div>`;
    }
    if (view.groups.length === 1) {
        const n = view.groups[0].ranks.length;
        return `<div class="verdict same">${escapeHtml(n === 1 ? l10n.t('One rank answered') : l10n.t('All {0} ranks equal', n))}</div>`;
    }
    if (view.odd.length) {
        return `<div class="verdict odd">${escapeHtml(l10n.t('{0} groups of values; odd one out: {1}', view.groups.length, ranksText(view.odd)))}</div>`;
    }
    return `<div class="verdict odd">${escapeHtml(l10n.t('{0} groups of values, none larger than the others', view.groups.length))}</div>`;
}

/** A group's value in short, as HTML: a tensor's head, mean, norm, NaN and Inf counts (in red), checksum; else the text's first line. */
function groupValue(group: ValueGroup, view: CompareView): string {
    const answer = view.ranks.find((r) => r.ok && r.rank === group.ranks[0]);
    if (answer?.ok && answer.summary) {
        const s = answer.summary;
        const bits = [tensorHead(s), `mean ${shortNumber(s.mean)}`, `norm ${shortNumber(s.norm)}`].map(escapeHtml);
        if (s.nan) bits.push(`<span class="bad">nan ${s.nan}</span>`);
        if (s.inf) bits.push(`<span class="bad">inf ${s.inf}</span>`);
        if (s.checksum) bits.push(escapeHtml(`md5 ${s.checksum.slice(0, 8)}`));
        return bits.join('&nbsp; ');
    }
    return escapeHtml(firstLine(group.text, 120));
}

function groupCard(group: ValueGroup, index: number, view: CompareView, l10n: Localize): string {
    const odd = group.odd ? `<span class="badge">${escapeHtml(l10n.t('odd one out'))}</span>` : '';
    const differs = group.differs ? `<div class="differs">${escapeHtml(differsText(group.differs, l10n))}</div>` : '';
    const make = `<button type="button" class="make-group secondary" data-group="${index}">${escapeHtml(l10n.t('Make a group of these ranks'))}</button>`;
    return (
        `<div class="group${group.odd ? ' odd' : ''}" data-ranks="${escapeHtml(group.ranks.join(','))}">` +
        `<div class="head"><span class="letter">${groupLetter(index)}</span>${group.per !== undefined ? `<span class="per">${escapeHtml(group.per)}</span>` : ''}<span class="ranks">${escapeHtml(ranksText(group.ranks))}</span>${odd}</div>` +
        `<div class="value">${groupValue(group, view)}</div>${differs}${make}</div>`
    );
}

const SPARK_H = 36;
const SPARK_PAD = 4;

/** The least and the greatest of a series' values (NaN, Inf and errors left out); undefined when it has none. */
function valueRange(line: Sparkline): { lo: number; hi: number } | undefined {
    const values = line.points.flatMap((p) => (p.value === null ? [] : [p.value]));
    return values.length ? { lo: Math.min(...values), hi: Math.max(...values) } : undefined;
}

/** The SVG of one series: a polyline through the ranks' values, a dot per rank (odd ranks marked), a red bar where NaN or Inf is. */
export function sparkSvg(line: Sparkline, l10n: Localize, range = valueRange(line)): string {
    const n = line.points.length;
    const w = Math.max(160, Math.min(640, n * 18));
    const x = (i: number): number => (n === 1 ? w / 2 : SPARK_PAD + (i * (w - 2 * SPARK_PAD)) / (n - 1));
    // No range: no value either, so no point is placed.
    const { lo, hi } = range ?? { lo: 0, hi: 0 };
    // Bound by the minimum and maximum; all equal: across the middle.
    const y = (v: number): number => (hi === lo ? SPARK_H / 2 : SPARK_PAD + ((hi - v) / (hi - lo)) * (SPARK_H - 2 * SPARK_PAD));
    const f = (v: number): string => v.toFixed(1);
    const parts: string[] = [];
    let run: string[] = [];
    const flush = (): void => {
        if (run.length > 1) parts.push(`<polyline points="${run.join(' ')}"/>`);
        run = [];
    };
    line.points.forEach((p, i) => {
        if (p.value === null) flush();
        else run.push(`${f(x(i))},${f(y(p.value))}`);
    });
    flush();
    line.points.forEach((p, i) => {
        const tip = `rank ${p.rank}: ${p.value === null ? '–' : shortNumber(p.value)}${p.bad ? ` (${l10n.t('NaN or Inf')})` : ''}`;
        if (p.bad) parts.push(`<rect class="bad" data-rank="${p.rank}" x="${f(x(i) - 1.5)}" y="0" width="3" height="${SPARK_H}"><title>${escapeHtml(tip)}</title></rect>`);
        if (p.value !== null) parts.push(`<circle class="${p.odd ? 'odd' : 'pt'}" data-rank="${p.rank}" cx="${f(x(i))}" cy="${f(y(p.value))}" r="${p.odd ? 3 : 2}"><title>${escapeHtml(tip)}</title></circle>`);
    });
    return `<svg class="line" data-metric="${line.metric}" width="${w}" height="${SPARK_H}" viewBox="0 0 ${w} ${SPARK_H}" role="img" aria-label="${escapeHtml(`${line.metric} by rank`)}">${parts.join('')}</svg>`;
}

function sparks(view: CompareView, l10n: Localize): string {
    if (!view.sparklines.length) return '';
    const items = view.sparklines.map((s) => {
        const range = valueRange(s);
        const text = range ? rangeText(range.lo, range.hi) : '';
        return `<div class="spark"><span class="name">${escapeHtml(s.metric)}</span>${sparkSvg(s, l10n, range)}<span class="range">${escapeHtml(text)}</span></div>`;
    });
    return `<section class="sparks">${items.join('')}</section>`;
}

interface RowContext {
    groups: Map<number, number>;
    odd: Set<number>;
    /** Whether any rank holds a tensor: the table has the summary's columns. */
    tensors: boolean;
    state: CompareState;
    l10n: Localize;
}

function rankRow(r: RankAnswer, ctx: RowContext): string {
    const { tensors, state, l10n } = ctx;
    const group = ctx.groups.get(r.rank);
    const odd = ctx.odd.has(r.rank);
    const from = state.from === r.rank;
    const rankCell = `<td class="rank${from ? ' from' : ''}"${from ? ` title="${escapeHtml(l10n.t('the rank you compared from'))}"` : ''}>${r.rank}</td>`;
    const letter = group === undefined ? '' : `<span class="letter">${groupLetter(group)}</span>`;
    const span = tensors ? 9 : 1;
    if (!r.ok) {
        const where = r.line === null ? '' : ` (${l10n.t('line {0}', r.line)})`;
        return `<tr class="error" data-rank="${r.rank}">${rankCell}<td></td><td colspan="${span}">${escapeHtml(l10n.t('error: {0}', r.message + where))}</td></tr>`;
    }
    const cls = odd ? ' class="odd"' : '';
    const output = r.output ? `<pre class="output">${escapeHtml(r.output.replace(/\n$/, ''))}</pre>` : '';
    let cells: string;
    if (tensors && r.summary) {
        const s = r.summary;
        cells =
            `<td>${escapeHtml(tensorHead(s))}${output}</td>` +
            [s.min, s.max, s.mean, s.norm].map((v) => `<td class="num">${escapeHtml(shortNumber(v))}</td>`).join('') +
            `<td class="num nan${s.nan ? ' bad' : ''}">${s.nan}</td><td class="num inf${s.inf ? ' bad' : ''}">${s.inf}</td>` +
            `<td class="checksum" title="${escapeHtml(s.checksum ?? '')}">${escapeHtml((s.checksum ?? '–').slice(0, 8))}</td>`;
    } else {
        cells = `<td class="text" colspan="${span}" title="${escapeHtml(r.text.slice(0, 2000))}">${escapeHtml(firstLine(r.text, 120))}${output}</td>`;
    }
    return `<tr${cls} data-rank="${r.rank}">${rankCell}<td>${letter}</td>${cells}</tr>`;
}

function table(view: CompareView, state: CompareState, l10n: Localize): string {
    const tensors = view.ranks.some((r) => r.ok && r.summary);
    const ctx: RowContext = { groups: groupIndex(view), odd: new Set(view.odd), tensors, state, l10n };
    const head = tensors
        ? `<th>${escapeHtml(l10n.t('Value'))}</th><th>min</th><th>max</th><th>mean</th><th>norm</th><th>NaN</th><th>Inf</th><th>md5</th>`
        : `<th>${escapeHtml(l10n.t('Value'))}</th>`;
    const rows = view.ranks.map((r) => rankRow(r, ctx)).join('');
    return `<div class="table-wrap"><table class="ranks"><thead><tr><th>${escapeHtml(l10n.t('Rank'))}</th><th>${escapeHtml(l10n.t('Group'))}</th>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The whole page: the header, a status line while busy or failed, then the view when there is one. */
export function renderCompare(view: CompareView | undefined, state: CompareState, l10n: Localize, nonce: string): string {
    const status = state.busy
        ? `<div class="status busy">${escapeHtml(state.busy)}</div>`
        : state.error
          ? `<div class="status error">${escapeHtml(state.error)}</div>`
          : '';
    const body = view
        ? `${verdict(view, l10n)}<section class="groups">${view.groups.map((g, i) => groupCard(g, i, view, l10n)).join('')}</section>${sparks(view, l10n)}${table(view, state, l10n)}`
        : '';
    return webviewPage(nonce, state.title, { style: STYLE, script: SCRIPT }, `${header(state, view, l10n)}${status}${body}`);
}
