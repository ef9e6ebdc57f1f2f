/**
 * The Show Stacks webview's HTML, from the model of core/stacks.ts. Frames come from user
 * processes, so every text is escaped; the page loads nothing (CSP `default-src 'none'`, one
 * nonce for its style and its script) and takes its colours from the theme's CSS variables.
 * A click on a frame posts `{type: 'open', column, frame}` (indexes, never a path); the
 * Refresh button posts `{type: 'refresh'}`. The Tree view (the main threads merged, outermost
 * frame at the root, as Linaro DDT's parallel stack view) posts `{type: 'openNode', node}` for a
 * click on a place and `{type: 'group', node}` for a node's group action (preorder indexes).
 * The Tree / Columns toggle is the page's own (kept in the webview's state). *Debug one rank per
 * class* posts `{type: 'debugClasses'}`, a node's *Debug this class* `{type: 'debugNode', node}`.
 * No `vscode` import.
 */
import { classRep, compactRanks, parseRankList, stackClasses, type ColumnView, type CollectiveMismatch, type StacksView, type TreeNodeView } from './stacks';
import { escapeHtml, webviewPage } from './webviewHtml';

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
    /** Tree view words (defaults in English when left out). */
    tree?: string;
    columns?: string;
    /** The title of a node's group action: `Make a rank group of ranks 0-2`. */
    makeGroup?: (ranks: string) => string;
    groupAction?: string;
    collectivesTitle?: string;
    /** The header's *Debug one rank per class* (left out: no button). */
    debugClasses?: string;
    /** A node's *Debug this class*: its button's text and title (`Debug rank 3, standing for ranks 0-3`). */
    debugAction?: string;
    debugNode?: (rank: number, ranks: string) => string;
}

/** Tests read escapeHtml from here. */
export { escapeHtml };

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); margin: 0; padding: 8px 12px; }
header { display: flex; align-items: baseline; gap: 12px; margin-bottom: 8px; }
header h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
header .meta { color: var(--vscode-descriptionForeground); flex: 1; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; cursor: pointer; font: inherit; }
button:hover { background: var(--vscode-button-hoverBackground); }
.errors { border-left: 3px solid var(--vscode-errorForeground); padding: 2px 8px; margin-bottom: 8px; }
.errors h2 { font-size: 1em; margin: 2px 0; color: var(--vscode-errorForeground); }
.sr { position: absolute; left: -10000px; width: 1px; height: 1px; overflow: hidden; }
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
.toggle { display: inline-flex; gap: 0; }
.toggle button { background: transparent; color: var(--vscode-foreground); border: 1px solid var(--vscode-button-background); }
.toggle button.on { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
body.mode-tree main.columns, body.mode-columns main.tree { display: none; }
.collectives { border-left: 3px solid var(--vscode-editorWarning-foreground); padding: 2px 8px; margin-bottom: 8px; }
.collectives div.warning { padding: 1px 0; }
.collectives mark, .tree mark { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); border-radius: 3px; padding: 0 3px; }
main.tree { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
.tree details > summary { list-style: none; cursor: pointer; display: flex; align-items: baseline; }
.tree details > summary > .row { flex: 1; min-width: 0; }
.tree details > summary::-webkit-details-marker { display: none; }
.tree details > summary::before { content: '▾'; flex: 0 0 1em; padding-left: 4px; color: var(--vscode-descriptionForeground); }
.tree details:not([open]) > summary::before { content: '▸'; }
.tree .row { display: flex; align-items: baseline; gap: 8px; padding: 1px 4px; }
.tree .row.chain { padding-left: calc(1em + 8px); }
.tree .row:hover { background: var(--vscode-list-hoverBackground); }
.tree .kids { margin-left: 1.2em; border-left: 1px solid var(--vscode-tree-indentGuidesStroke, var(--vscode-panel-border, transparent)); padding-left: 4px; }
.tree .count { border-radius: 8px; padding: 0 6px; font-size: 0.9em; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); white-space: nowrap; }
.tree .who { color: var(--vscode-descriptionForeground); white-space: nowrap; }
.tree .row.user .name { font-weight: 600; }
.tree .row.library { opacity: 0.6; }
.tree .row.odd { box-shadow: inset 3px 0 0 var(--vscode-editorWarning-foreground); }
.tree .row.odd .count { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
.tree .row .place { margin-left: auto; }
.tree a.place { color: var(--vscode-descriptionForeground); }
.tree a.place:hover { color: var(--vscode-textLink-foreground); }
.tree button.group, .tree button.debugNode { padding: 0 6px; font-size: 0.85em; }
header button.secondary { background: var(--vscode-button-secondaryBackground, var(--vscode-button-background)); color: var(--vscode-button-secondaryForeground, var(--vscode-button-foreground)); }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.getElementById('refresh').addEventListener('click', () => vscode.postMessage({ type: 'refresh' }));
document.getElementById('debugClasses')?.addEventListener('click', () => vscode.postMessage({ type: 'debugClasses' }));
function setMode(mode) {
    if (!document.querySelector('main.tree')) mode = 'columns';
    document.body.classList.toggle('mode-tree', mode === 'tree');
    document.body.classList.toggle('mode-columns', mode !== 'tree');
    for (const b of document.querySelectorAll('.toggle button')) b.classList.toggle('on', b.dataset.mode === mode);
}
const state = vscode.getState() || {};
setMode(state.mode || document.body.dataset.mode || 'columns');
document.addEventListener('click', (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (!t) return;
    const mode = t.closest('.toggle button');
    if (mode) {
        setMode(mode.dataset.mode);
        vscode.setState({ ...(vscode.getState() || {}), mode: mode.dataset.mode });
        return;
    }
    const debug = t.closest('button.debugNode');
    if (debug) {
        e.preventDefault();
        vscode.postMessage({ type: 'debugNode', node: Number(debug.dataset.node) });
        return;
    }
    const group = t.closest('button.group');
    if (group) {
        e.preventDefault();
        vscode.postMessage({ type: 'group', node: Number(group.dataset.node) });
        return;
    }
    const place = t.closest('a.place[data-node]');
    if (place) {
        e.preventDefault();
        vscode.postMessage({ type: 'openNode', node: Number(place.dataset.node) });
        return;
    }
    const a = t.closest('a.frame');
    if (!a) return;
    e.preventDefault();
    vscode.postMessage({ type: 'open', column: Number(a.dataset.column), frame: Number(a.dataset.frame) });
});
`;

function page(nonce: string, title: string, body: string, mode?: 'tree' | 'columns'): string {
    return webviewPage(nonce, title, { style: STYLE, script: SCRIPT }, body, mode ? `class="mode-${mode}" data-mode="${mode}"` : '');
}

function header(labels: Pick<StacksLabels, 'title' | 'refresh'>, meta: string, toggle = '', actions = ''): string {
    return `<header><h1>${escapeHtml(labels.title)}</h1><span class="meta">${escapeHtml(meta)}</span>${toggle}${actions}<button id="refresh" type="button">${escapeHtml(labels.refresh)}</button></header>`;
}

/**
 * A text with every `rank 3` / `ranks 0-2` whose ranks are all in `odd` wrapped in <mark>;
 * the rest escaped.
 */
export function highlightRanks(text: string, odd: readonly number[]): string {
    const set = new Set(odd);
    let out = '';
    let last = 0;
    for (const m of text.matchAll(/\branks? (\d+(?:\s*[-,]\s*\d+)*)/g)) {
        const ranks = parseRankList(m[1]);
        if (!ranks.length || !ranks.every((r) => set.has(r))) continue;
        const at = m.index ?? 0;
        out += `${escapeHtml(text.slice(last, at))}<mark>${escapeHtml(m[0])}</mark>`;
        last = at + m[0].length;
    }
    return out + escapeHtml(text.slice(last));
}

/** The process groups whose ranks disagree on a collective, one warning line each. */
export function renderCollectives(found: readonly CollectiveMismatch[], title = 'Collectives the ranks disagree on'): string {
    if (!found.length) return '';
    const lines = found.map((c) => `<div class="warning" data-group="${escapeHtml(c.group)}">⚠ ${highlightRanks(c.message || `group ${c.group}`, c.odd)}</div>`).join('');
    return `<section class="collectives" role="alert"><h2 class="sr">${escapeHtml(title)}</h2>${lines}</section>`;
}

/** The rows of one branch: a chain of nodes with the same ranks at one level, then its children nested. */
function branch(node: TreeNodeView, total: number, labels: StacksLabels, odd: readonly number[] = []): string {
    const chain = [node];
    for (let last = node; last.children.length === 1 && last.children[0].count === last.count; ) {
        last = last.children[0];
        chain.push(last);
    }
    const who = compactRanks(node.ranks);
    const makeGroup = labels.makeGroup ?? ((r: string) => `Make a rank group of ranks ${r}`);
    const row = (n: TreeNodeView, head: boolean): string => {
        const f = n.frame;
        const cls = ['row', f.library ? 'library' : 'user', n.odd ? 'odd' : '', head ? 'head' : 'chain'].filter(Boolean).join(' ');
        const where = escapeHtml(`${f.file}:${f.line}`);
        const place = f.openable
            ? `<a href="#" class="place" data-node="${n.id}" title="${where}">${escapeHtml(f.short)}</a>`
            : `<span class="place" title="${where}">${escapeHtml(f.short)}</span>`;
        const group =
            head && n.ranks.some((r) => r >= 0)
                ? `<button type="button" class="group" data-node="${n.id}" title="${escapeHtml(makeGroup(who))}">${escapeHtml(labels.groupAction ?? 'group')}</button>`
                : '';
        const rep = head && labels.debugNode ? classRep(n.ranks, odd) : null;
        const debug = rep && labels.debugNode
            ? `<button type="button" class="debugNode" data-node="${n.id}" title="${escapeHtml(labels.debugNode(rep.rank, who))}">${escapeHtml(labels.debugAction ?? 'debug')}</button>`
            : '';
        const badges = head
            ? `<span class="count" title="${escapeHtml(`${n.count} of ${total}`)}">${n.count}/${total}</span><span class="who">${n.odd ? `<mark>${escapeHtml(who)}</mark>` : escapeHtml(who)}</span>`
            : '';
        return `<div class="${cls}" data-node="${n.id}">${badges}<span class="name">${escapeHtml(f.name)}</span>${place}${debug}${group}</div>`;
    };
    const rest = chain.slice(1).map((n) => row(n, false)).join('');
    const end = chain[chain.length - 1];
    const kids = end.children.length ? `<div class="kids">${end.children.map((c) => branch(c, total, labels, odd)).join('')}</div>` : '';
    const oddInside = !node.odd && containsOdd(node);
    return `<details open class="branch${node.odd ? ' odd' : ''}${oddInside ? ' has-odd' : ''}"><summary>${row(node, true)}</summary>${rest}${kids}</details>`;
}

function containsOdd(node: TreeNodeView): boolean {
    return node.odd || node.children.some(containsOdd);
}

/** The merged tree of the main threads as nested collapsible rows. */
export function renderTree(view: Pick<StacksView, 'tree' | 'treeTotal'> & { odd?: readonly number[] }, labels: StacksLabels): string {
    if (!view.tree.length) return '';
    return `<main class="tree">${view.tree.map((n) => branch(n, view.treeTotal, labels, view.odd ?? [])).join('')}</main>`;
}

function column(c: ColumnView, index: number, labels: StacksLabels): string {
    const badges = [
        c.odd ? `<span class="badge odd">${escapeHtml(labels.oddOneOut)}</span>` : '',
        c.current || c.collective ? `<span class="badge wait">${escapeHtml(labels.waitingIn(c.current ?? c.collective ?? ''))}</span>` : '',
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
    const tree = view.columns.length ? renderTree(view, labels) : '';
    const mode = tree && view.total > 1 ? 'tree' : 'columns';
    const toggle = tree
        ? `<span class="toggle" role="group"><button type="button" data-mode="tree" class="${mode === 'tree' ? 'on' : ''}">${escapeHtml(labels.tree ?? 'Tree')}</button><button type="button" data-mode="columns" class="${mode === 'columns' ? 'on' : ''}">${escapeHtml(labels.columns ?? 'Columns')}</button></span>`
        : '';
    const collectives = renderCollectives(view.collectives ?? [], labels.collectivesTitle);
    const classes = labels.debugClasses ? stackClasses(view) : [];
    const actions = classes.length
        ? `<button id="debugClasses" type="button" class="secondary" data-classes="${classes.length}">${escapeHtml(labels.debugClasses ?? '')}</button>`
        : '';
    return page(nonce, labels.title, `${header(labels, labels.meta, toggle, actions)}${collectives}${errors}${tree}${columns}`, mode);
}

/** The panel while reading, or when the CLI gave no stacks at all. */
export function renderMessage(title: string, refresh: string, message: string, nonce: string): string {
    return page(nonce, title, `${header({ title, refresh }, '')}<p class="message">${escapeHtml(message)}</p>`);
}
