// End-to-end scenario `compareroutes` (run.mjs runs it; RANKDEBUG_E2E_ONLY=compareroutes alone):
// the two routes into Compare Across Ranks that the `compare` scenario does not take.
//   right-click compare.sh → `0 arm` (4 ranks, rank 0 debugged, every rank armed) → rank 0 at a
//   breakpoint in main(), ranks 1-3 waiting for it in the all_reduce →
//   1. Watch: `weight` added to the Watch view (Debug: Add to Watch on the selected word) →
//      right-click its row → Compare Across Ranks → the panel groups ranks 0,1,3 and 2, rank 2
//      highlighted, its odd element named;
//   2. the editor's selection: `grad` selected in compare_train.py → the editor's context menu →
//      Compare Across Ranks → ranks 0,2,3 and 1, rank 1's NaN counted →
//   stop → no process left.
// The helpers are run.mjs's own (passed in: `h`), so that the two files drive the UI alike.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { typeRanks } from '../helpers.mjs';

/** Selects the first whole word `word` on line `line` of the active editor (the cursor goes there first). */
async function selectWord(page, h, line, word) {
    await h.goToLine(page, line);
    await page.keyboard.press('Home'); // the line's first non-blank character: the word
    await page.keyboard.press('Control+Shift+ArrowRight');
    await h.waitFor(`"${word}" selected`, async () => (await page.locator('.statusbar-item', { hasText: `(${word.length} selected)` }).count()) > 0, 10000);
}

/** The Watch view's row of `expr`. */
function watchRow(page, expr) {
    return page.locator('.debug-watch .monaco-list-row', { hasText: new RegExp(`^\\s*${expr}\\b`) }).first();
}

/** Opens the Watch view (Run and Debug) when it is collapsed. */
async function openWatch(page) {
    const header = page.locator('.pane-header', { hasText: /^\s*Watch/ }).first();
    await header.waitFor({ timeout: 15000 });
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
}

export async function scenarioCompareRoutes(page, ws, h) {
    const timings = {};
    const py = fs.readFileSync(path.join(ws, 'compare_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# the e2e breakpoint')) + 1;
    const weightLine = py.findIndex((l) => /^\s*weight = torch\.randn/.test(l)) + 1;
    const gradLine = py.findIndex((l) => /^\s*grad = torch\.ones/.test(l)) + 1;
    if (bp < 1 || weightLine < 1 || gradLine < 1) throw new Error('compare_train.py changed: update compareRoutes.mjs');

    h.say('compare routes: a breakpoint only rank 0 reaches, then right-click compare.sh → 0 arm');
    await h.palette(page, 'View: Close All Editor Groups');
    await h.openFile(page, 'compare_train.py');
    await h.goToLine(page, bp);
    await page.locator('.monaco-editor.focused').waitFor();
    await page.keyboard.press('F9');
    await page.locator('.monaco-editor .codicon-debug-breakpoint').first().waitFor({ timeout: 15000 });
    await h.openFile(page, 'compare.sh');
    const line = page.locator('.monaco-editor .view-line', { hasText: 'torchrun --nproc_per_node 4 compare_train.py' }).first();
    await line.waitFor();
    await page.locator('.monaco-editor .codelens-decoration', { hasText: 'Debug' }).first().waitFor({ timeout: 90000 });
    await h.rowMenu(page, line, 'Debug Training Command');
    await typeRanks(page, '0 arm');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first().waitFor({ timeout: 120000 });
    await h.waitFor(`rank 0's frame at line ${bp}`, async () => {
        if (await h.frameRow(page, 'compare_train.py', bp).first().isVisible()) return true;
        const row = page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first();
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click().catch(() => undefined);
        await h.expandMainThreads(page);
        return false;
    }, 120000, 500);
    timings.pausedMs = Date.now() - tEnter;
    h.say(`rank 0 paused at compare_train.py:${bp} ${timings.pausedMs} ms after the quick-pick`);
    // The paused frame (main) is the one selected: the other ranks evaluate in their main() too.

    // 1. Watch: weight, added from the editor, then compared from its Watch row.
    await h.showFile(page, 'compare_train.py');
    await selectWord(page, h, weightLine, 'weight');
    await h.palette(page, 'Debug: Add to Watch');
    await openWatch(page);
    const row = watchRow(page, 'weight');
    await h.waitFor('weight in the Watch view with its value', async () => /tensor\(/.test(await row.innerText().catch(() => '')), 30000, 200);
    h.say('Watch: right-click weight → Compare Across Ranks');
    const tWatch = await h.rowMenu(page, row, 'Compare Across Ranks');
    let { frame, groups } = await h.waitGroups(page, 'Compare: weight', ['0,1,3', '2']);
    timings.watchMs = Math.round((await h.shownAt(frame)) - tWatch);
    if (groups[0].odd || !groups[1].odd) throw new Error(`Watch route: rank 2's group is not the one highlighted: ${JSON.stringify(groups)}`);
    if (!/differs from rank 0 at element 1234 \[19, 18\]/.test(groups[1].text)) throw new Error(`Watch route: rank 2's group does not name the element: ${groups[1].text}`);
    h.say(`Compare: weight from the Watch view — [0,1,3] [2] odd, shown ${timings.watchMs} ms after the click`);
    await h.shot(page, '28-compare-watch');

    // 2. The editor's selection: grad, compared from the editor's context menu.
    await h.showFile(page, 'compare_train.py');
    await selectWord(page, h, gradLine, 'grad');
    h.say('editor: grad selected → context menu → Compare Across Ranks');
    await page.keyboard.press('Shift+F10'); // the context menu at the selection, which stays
    const tSelection = await h.pickMenuItem(page, 'Compare Across Ranks');
    ({ frame, groups } = await h.waitGroups(page, 'Compare: grad', ['0,2,3', '1']));
    timings.selectionMs = Math.round((await h.shownAt(frame)) - tSelection);
    if (groups[0].odd || !groups[1].odd) throw new Error(`selection route: rank 1's group is not the one highlighted: ${JSON.stringify(groups)}`);
    const nans = (await frame.locator('td.nan').allInnerTexts()).map((t) => t.trim());
    if (JSON.stringify(nans) !== '["0","1","0","0"]') throw new Error(`selection route: NaN counts ${JSON.stringify(nans)}`);
    h.say(`Compare: grad from the editor's selection — [0,2,3] [1] odd, NaN counts ${nans.join(',')}, shown ${timings.selectionMs} ms after the click`);
    await h.shot(page, '29-compare-selection');

    // Nor a watch expression (the Watch view hides once no session is left).
    await row.click();
    await page.keyboard.press('Delete');
    await row.waitFor({ state: 'detached', timeout: 10000 });
    h.say('stopping the job');
    await h.stopDebugging(page);
    const left = await h.waitFor('the job to end', () => (h.jobProcesses(ws).length ? false : 'none'), 30000).catch(() => h.jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    // Leave the workspace as found: no breakpoint.
    await h.palette(page, 'View: Close All Editor Groups');
    await h.openFile(page, 'compare_train.py');
    await h.goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}
