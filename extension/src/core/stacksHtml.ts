/**
 * The Show Stacks webview's HTML, from the model of core/stacks.ts. Frames come from user
 * processes, so every text is escaped; the page loads nothing (CSP `default-src 'none'`, one
 * nonce for its style and its script) and takes its colours from the theme's CSS variables.
 * A click on a frame posts `{type: 'open', column, frame}` (indexes, never a path); the
 * Refresh button posts `{type: 'refresh'}`. No `vscode` import.
 */
import type { ColumnView, StacksView } from './stacks';

/** The page's words, localised by the caller. */
export interface StacksLabels {
    title: string;
    /** `2 of 2 ranks read in 0.03 s at 15:24:27`. */
    meta: string;
    refresh: string;
    errors: string;
    noStacks: string;
    oddOneOut: string;
    idle: string;
    waitingIn: (collective: string) => string;
    thread: (name: string) => string;
}

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A nonce for the page's CSP (base64 of 16 random bytes from the caller, or letters). */
export function isNonce(nonce: string): boolean {
    return /^[A-Za-z0-9+/=]{16,}$/.test(nonce);
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); margin: 0; padding: 8px 12px; }
header { display: flex; align-items: baseline; gap: 12px; margin-bottom: 8px; }
header h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
header .meta { color: var(--vscode-descriptionForeground); flex: 1; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; cursor: pointer; font: inherit; }
button:hover { background: var(--vscode-button-hoverBackground); }
.errors { border-left: 3px solid var(--vscode-errorForeground); padding: 2px 8px; margin-bottom: 8px; }
.errors h2 { font-size: 1em; margin: 2px 0; color: var(--vscode-errorForeground); }
.errors ul { margin: 2px 0; padding-left: 16px; }
.message { color: var(--vscode-descriptionForeground); padding: 12px 0; white-space: pre-wrap; }
.columns { display: flex; gap: 10px; align-items: flex-start; overflow-x: auto; padding-bottom: 8px; }
.column { flex: 0 0 auto; min-width: 240px; max-width: 420px; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); border-radius: 3px; }
.column.odd { border-color: var(--vscode-editorWarning-foreground); box-shadow: 0 0 0 1px var(--vscode-editorWarning-foreground); }
.column.other { opacity: 0.85; }
.head { padding: 6px 8px; border-bottom: 1px solid var(--vscode-panel-border, transparent); background: var(--vscode-sideBar-background, transparent); }
.label { font-weight: 600; font-size: 1.05em; }
.summary { color: var(--vscode-descriptionForeground); margin-top: 2px; word-break: break-word; }
.badges { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 3px; }
.badge { border-radius: 8px; padding: 0 6px; font-size: 0.9em; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.badge.odd { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
.badge.idle { background: transparent; color: var(--vscode-descriptionForeground); border: 1px solid var(--vscode-descriptionForeground); }
ol.frames { list-style: none; margin: 0; padding: 4px 0; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
ol.frames li { padding: 1px 8px; }
.frame { display: flex; justify-content: space-between; gap: 12px; color: inherit; text-decoration: none; }
a.frame:hover, a.frame:focus { background: var(--vscode-list-hoverBackground); outline: none; }
a.frame:hover .place { color: var(--vscode-textLink-foreground); text-decoration: underline; }
.frame.user .name { font-weight: 600; }
.frame.library { opacity: 0.6; }
.place { color: var(--vscode-descriptionForeground); white-space: nowrap; }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.getElementById('refresh').addEventListener('click', () => vscode.postMessage({ type: 'refresh' }));
document.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a.frame') : null;
    if (!a) return;
    e.preventDefault();
    vscode.postMessage({ type: 'open', column: Number(a.dataset.column), frame: Number(a.dataset.frame) });
});
`;

function page(nonce: string, title: string, body: string): string {
    if (!isNonce(nonce)) throw new Error('a nonce of at least 16 base64 characters is needed');
    const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
    return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head><body>
${body}
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>`;
}

function header(labels: Pick<StacksLabels, 'title' | 'refresh'>, meta: string): string {
    return `<header><h1>${escapeHtml(labels.title)}</h1><span class="meta">${escapeHtml(meta)}</span><button id="refresh" type="button">${escapeHtml(labels.refresh)}</button></header>`;
}

function column(c: ColumnView, index: number, labels: StacksLabels): string {
    const badges = [
        c.odd ? `<span class="badge odd">${escapeHtml(labels.oddOneOut)}</span>` : '',
        c.collective ? `<span class="badge wait">${escapeHtml(labels.waitingIn(c.collective))}</span>` : '',
        c.active ? '' : `<span class="badge idle">${escapeHtml(labels.idle)}</span>`,
    ].join('');
    const thread = c.main ? '' : `<div class="summary">${escapeHtml(labels.thread(c.thread))}</div>`;
    const frames = c.frames
        .map((f, i) => {
            const cls = `frame ${f.library ? 'library' : 'user'}`;
            const inner = `<span class="name">${escapeHtml(f.name)}</span><span class="place">${escapeHtml(f.short)}</span>`;
            const where = escapeHtml(`${f.file}:${f.line}`);
            return f.openable
                ? `<li><a href="#" class="${cls}" data-column="${index}" data-frame="${i}" title="${where}">${inner}</a></li>`
                : `<li><span class="${cls}" title="${where}">${inner}</span></li>`;
        })
        .join('');
    const classes = ['column', c.odd ? 'odd' : '', c.main ? '' : 'other'].filter(Boolean).join(' ');
    return `<div class="${classes}"><div class="head"><div class="label">${escapeHtml(c.label)}</div>${thread}<div class="badges">${badges}</div><div class="summary">${escapeHtml(c.summary)}</div></div><ol class="frames">${frames}</ol></div>`;
}

/** The panel with every group of ranks as a column side by side. */
export function renderStacks(view: StacksView, labels: StacksLabels, nonce: string): string {
    const errors = view.errors.length
        ? `<section class="errors"><h2>${escapeHtml(labels.errors)}</h2><ul>${view.errors
              .map((e) => `<li>${escapeHtml(e.label)}${e.pid === null ? '' : ` (pid ${e.pid})`}: ${escapeHtml(e.message)}</li>`)
              .join('')}</ul></section>`
        : '';
    const columns = view.columns.length
        ? `<main class="columns">${view.columns.map((c, i) => column(c, i, labels)).join('')}</main>`
        : `<p class="message">${escapeHtml(labels.noStacks)}</p>`;
    return page(nonce, labels.title, `${header(labels, labels.meta)}${errors}${columns}`);
}

/** The panel while reading, or when the CLI gave no stacks at all. */
export function renderMessage(title: string, refresh: string, message: string, nonce: string): string {
    return page(nonce, title, `${header({ title, refresh }, '')}<p class="message">${escapeHtml(message)}</p>`);
}
