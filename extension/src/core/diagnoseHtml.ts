/**
 * The Why Is This Job Stuck? webview's HTML, from the model of core/diagnose.ts: the verdict
 * (each finding as a sentence with its place as a link, or the healthy sentence), the class
 * tree (largest first; state, collective, place; the culprit's class marked; its frames
 * unfolded), the collectives table (per process group, where each class is) and the ranks read
 * or not. Files, functions and `why` sentences come from the user's job, so every text is
 * escaped; the page loads nothing (CSP `default-src 'none'`, one nonce) and takes its colours
 * from the theme. It posts indexes, never paths: `{type: 'open', finding}`,
 * `{type: 'open', cls, frame}` (frame -1: the class's place), `refresh`, `debugCulprit`,
 * `debugClasses`, `compare`. No `vscode` import.
 */
import { collectiveText, culpritRank, openable, ranksText, representatives, shortPlace, type DiagClass, type DiagnoseView, type Place } from './diagnose';
import type { Localize } from './localize';
import { escapeHtml, webviewPage } from './webviewHtml';

export interface DiagnoseState {
    /** `Why is torchrun · 2026… stuck?`. */
    title: string;
    /** `2.16 s at 15:24:27`. */
    meta?: string;
    /** While a run is under way: what it does (the last view stays below). */
    busy?: string;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); margin: 0; padding: 8px 12px; }
header { display: flex; align-items: baseline; flex-wrap: wrap; gap: 4px 12px; margin-bottom: 8px; }
header h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
header .meta { color: var(--vscode-descriptionForeground); flex: 1; }
h2 { font-size: 1em; margin: 12px 0 4px; font-weight: 600; }
.actions { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 10px; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; cursor: pointer; font: inherit; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
.busy { color: var(--vscode-descriptionForeground); padding: 4px 0; }
.verdict { border-left: 3px solid var(--vscode-editorWarning-foreground); padding: 2px 8px; margin: 0 0 8px; list-style: none; }
.verdict.healthy { border-left-color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.verdict li { padding: 2px 0; }
a.place { color: var(--vscode-textLink-foreground); text-decoration: none; font-family: var(--vscode-editor-font-family); white-space: nowrap; }
a.place:hover, a.place:focus { text-decoration: underline; }
.classes details { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); border-radius: 3px; margin-bottom: 4px; padding: 2px 6px; }
.classes details.culprit { border-color: var(--vscode-editorWarning-foreground); box-shadow: 0 0 0 1px var(--vscode-editorWarning-foreground); }
.classes summary { cursor: pointer; display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; }
.ranks { font-weight: 600; }
.badge { border-radius: 8px; padding: 0 6px; font-size: 0.9em; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.badge.culprit { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
.state-stuck, .state-raised, .state-exited { color: var(--vscode-errorForeground); }
.muted { color: var(--vscode-descriptionForeground); }
ol.frames { margin: 4px 0; padding-left: 18px; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
table { border-collapse: collapse; margin-bottom: 8px; }
th, td { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); padding: 2px 8px; text-align: left; font-weight: normal; }
th.culprit { box-shadow: inset 0 -2px 0 var(--vscode-editorWarning-foreground); }
tr.differs td:first-child { border-left: 3px solid var(--vscode-editorWarning-foreground); }
.unread { color: var(--vscode-errorForeground); }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
    const el = e.target instanceof Element ? e.target.closest('[data-post]') : null;
    if (!el) return;
    e.preventDefault();
    const msg = { type: el.getAttribute('data-post') };
    for (const k of ['finding', 'cls', 'frame']) {
        const v = el.getAttribute('data-' + k);
        if (v !== null) msg[k] = Number(v);
    }
    vscode.postMessage(msg);
});
`;

/** `train.py:46 (train_step)`. */
function placeText(p: Place): string {
    const short = shortPlace(p);
    return p.function ? `${short}${short ? ' ' : ''}(${p.function})` : short;
}

/** A place as a link (data attributes: the indexes the page posts), or plain text when it cannot be opened. */
function placeLink(p: Place | null, attrs: string): string {
    if (!p) return '';
    const text = escapeHtml(placeText(p));
    if (!openable(p)) return `<span class="muted">${text}</span>`;
    return `<a href="#" class="place" data-post="open" ${attrs} title="${escapeHtml(`${p.file}:${p.line}`)}">${text}</a>`;
}

function stateText(c: DiagClass, l10n: Localize): string {
    switch (c.state) {
        case 'waiting':
            return c.collective ? l10n.t('waiting in {0}', collectiveText(c.collective)) : l10n.t('waiting in a collective');
        case 'running':
            return l10n.t('running');
        case 'stuck':
            return l10n.t('stuck');
        case 'exited':
            return l10n.t('exited');
        case 'raised':
            return l10n.t('raised');
        default:
            return l10n.t('unknown');
    }
}

function verdict(view: DiagnoseView, l10n: Localize): string {
    if (view.healthy !== null && !view.findings.length) {
        return `<ul class="verdict healthy" id="verdict"><li>${escapeHtml(view.healthy || l10n.t('The job looks healthy.'))}</li></ul>`;
    }
    if (!view.findings.length) return `<ul class="verdict" id="verdict"><li class="muted">${escapeHtml(l10n.t('No finding: the ranks that were read give no verdict.'))}</li></ul>`;
    const items = view.findings.map((f, i) => `<li class="finding">${escapeHtml(f.why)}${f.where ? ` ${placeLink(f.where, `data-finding="${i}"`)}` : ''}</li>`);
    return `<ul class="verdict" id="verdict">${items.join('')}</ul>`;
}

function classTree(view: DiagnoseView, l10n: Localize): string {
    if (!view.classes.length) return `<p class="muted">${escapeHtml(l10n.t('No rank could be read.'))}</p>`;
    const items = view.classes.map((c, i) => {
        const frames = c.frames.map((f, j) => `<li>${placeLink(f, `data-cls="${i}" data-frame="${j}"`) || escapeHtml(placeText(f))}</li>`).join('');
        const badge = c.culprit ? ` <span class="badge culprit">${escapeHtml(l10n.t('culprit'))}</span>` : '';
        return (
            `<details class="class${c.culprit ? ' culprit' : ''}" data-class="${i}"${c.culprit ? ' open' : ''}>` +
            `<summary><span class="ranks">${escapeHtml(ranksText(c.ranks))}</span>${badge}` +
            (c.ranks.length > 1 ? `<span class="badge">${escapeHtml(l10n.t('{0} ranks', c.ranks.length))}</span>` : '') +
            `<span class="state state-${c.state}">${escapeHtml(stateText(c, l10n))}</span>` +
            `${placeLink(c.where, `data-cls="${i}" data-frame="-1"`)}</summary>` +
            (frames ? `<ol class="frames">${frames}</ol>` : '') +
            `</details>`
        );
    });
    return `<div class="classes" id="classes">${items.join('')}</div>`;
}

function collectivesTable(view: DiagnoseView, l10n: Localize): string {
    if (!view.groups.length) return `<p class="muted">${escapeHtml(l10n.t('No collective state was read.'))}</p>`;
    const head = view.classes.map((c) => `<th${c.culprit ? ' class="culprit"' : ''}>${escapeHtml(ranksText(c.ranks))}</th>`).join('');
    const rows = view.groups.map((g) => {
        // torch names a group made without a description `undefined`.
        const name = g.desc && g.desc !== 'undefined' ? `${g.group} (${g.desc})` : g.group;
        const cells = g.cells.map((c) => `<td>${c === null ? '<span class="muted">—</span>' : escapeHtml(c)}</td>`).join('');
        return `<tr${g.differs ? ' class="differs"' : ''}><td>${escapeHtml(name)}</td>${cells}</tr>`;
    });
    return `<table id="collectives"><thead><tr><th>${escapeHtml(l10n.t('Process group'))}</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function ranksRead(view: DiagnoseView, l10n: Localize): string {
    const text = view.seconds !== null ? l10n.t('{0} ranks read in {1} s', view.ranksRead, view.seconds.toFixed(2)) : l10n.t('{0} ranks read', view.ranksRead);
    const read = `<p id="read">${escapeHtml(text)}</p>`;
    if (!view.unread.length) return read;
    const items = view.unread.map((u) => `<li>${escapeHtml(u.rank !== null ? l10n.t('rank {0}', u.rank) : '?')}: ${escapeHtml(u.reason)}</li>`);
    return `${read}<p class="unread">${escapeHtml(l10n.t('Not read:'))}</p><ul class="unread" id="unread">${items.join('')}</ul>`;
}

function actions(view: DiagnoseView, l10n: Localize): string {
    const out = [`<button class="secondary" data-post="refresh">${escapeHtml(l10n.t('Refresh'))}</button>`];
    const culprit = culpritRank(view);
    if (culprit !== null) out.push(`<button data-post="debugCulprit">${escapeHtml(l10n.t('Debug culprit (rank {0})', culprit))}</button>`);
    const reps = representatives(view);
    if (reps.length) out.push(`<button data-post="debugClasses">${escapeHtml(l10n.t('Debug one per class ({0})', reps.length))}</button>`);
    if (reps.length > 1) out.push(`<button data-post="compare">${escapeHtml(l10n.t('Compare across classes…'))}</button>`);
    return `<div class="actions">${out.join('')}</div>`;
}

/** The page for a diagnosis (the last one kept under a busy line while a new one runs). */
export function renderDiagnose(view: DiagnoseView, state: DiagnoseState, l10n: Localize, nonce: string): string {
    const body = [
        `<header><h1>${escapeHtml(state.title)}</h1><span class="meta">${escapeHtml(state.meta ?? '')}</span></header>`,
        state.busy ? `<div class="busy" id="busy">${escapeHtml(state.busy)}</div>` : '',
        actions(view, l10n),
        verdict(view, l10n),
        `<h2>${escapeHtml(l10n.t('Classes of ranks'))}</h2>`,
        classTree(view, l10n),
        `<h2>${escapeHtml(l10n.t('Collectives'))}</h2>`,
        collectivesTable(view, l10n),
        ranksRead(view, l10n),
    ];
    return webviewPage(nonce, state.title, { style: STYLE, script: SCRIPT }, body.filter(Boolean).join('\n'));
}
