// End-to-end scenario `compare` (run.mjs runs it; RANKDEBUG_E2E_ONLY=compare alone):
//   compare across ranks: right-click compare.sh → `0 arm` (4 ranks, rank 0 debugged, all armed)
//   → rank 0 at a breakpoint in main() → Show Stacks on the job: the merged tree branches, rank 0
//   at the breakpoint (odd), ranks 1-3 in all_reduce (docs/stack-tree.png with
//   RANKDEBUG_E2E_DOCS=1) → Variables: weight → Compare Across Ranks → the panel
//   groups ranks 0,1,3 and 2 (rank 2 highlighted, element 1234 [19, 18] named; click → groups
//   timed; docs/compare-panel.png with RANKDEBUG_E2E_DOCS=1) → Make a group of rank 2 → grad
//   typed in the Debug Console → Compare Across Ranks… offers it → rank 1's NaN counted in red
//   → tolerance 1e-2 on weight → one group → stop → no process left;
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, say, sleep, docs, jobProcesses, waitFor, shot, palette, openFile, goToLine, setBreakpoint, commandLine, stopDebugging, frameRow, expandMainThreads, jobsPane, openJobsView, rowMenu, stacksFrame, webviewWith, shownAt, waitGroups, typeRanks } from '../helpers.mjs';

/**
 * Show Stacks on the compare job while rank 0 is paused at its breakpoint and ranks 1-3 wait for
 * it in the all_reduce: the merged tree's root holds 4/4 ranks and branches in main() into rank 0
 * at the breakpoint line (the odd one out: it stays put while the others wait for it) and ranks
 * 1-3 in all_reduce; the collective warning names group 0. docs/stack-tree.png with
 * RANKDEBUG_E2E_DOCS=1 (or =stack-tree). The panel is closed again; answers the ms from the click
 * to the tree shown.
 */
async function compareStackTree(page, pane, bp) {
    say('Show Stacks on the compare job');
    const jobRow = pane.locator('.monaco-list-row', { hasText: /torchrun · \d{8}-\d{6}-\d+/ }).first();
    const tStacks = await rowMenu(page, jobRow, 'Show Stacks');
    const frame = stacksFrame(page);
    const heads = frame.locator('main.tree .row.head');
    let seen = [];
    await waitFor('the merged tree branching into rank 0 and ranks 1-3', async () => {
        seen = await heads.evaluateAll((els) =>
            els.map((el) => ({
                count: el.querySelector('.count')?.textContent?.trim(),
                who: el.querySelector('.who')?.textContent?.trim(),
                name: el.querySelector('.name')?.textContent?.trim(),
                place: el.querySelector('.place')?.textContent?.trim(),
                odd: el.classList.contains('odd'),
                marked: !!el.querySelector('.who mark'),
                branch: (el.closest('details')?.innerText ?? '').replace(/\s+/g, ' '),
            })),
        ).catch(() => []);
        return seen.some((h) => h.count === '4/4') && seen.some((h) => h.count === '3/4' && h.who === '1-3') && seen.some((h) => h.count === '1/4' && h.who === '0');
    }, 60000, 250).catch((e) => {
        throw new Error(`${e.message}; tree heads: ${JSON.stringify(seen)}`);
    });
    const ms = Date.now() - tStacks;
    // Ranks 1-3 wait in the all_reduce (library code, under their loop's line); rank 0 is at the breakpoint.
    const others = seen.find((h) => h.count === '3/4' && h.who === '1-3');
    if (!/all_reduce/.test(others?.branch ?? '')) throw new Error(`ranks 1-3's branch does not reach all_reduce: ${others?.branch}`);
    const rank0Head = seen.find((h) => h.count === '1/4' && h.who === '0');
    if (!new RegExp(`compare_train\\.py:${bp}\\b`).test(rank0Head?.branch ?? '')) throw new Error(`rank 0's branch is not at compare_train.py:${bp}: ${rank0Head?.branch}`);
    if (!rank0Head?.odd || !rank0Head.marked) throw new Error(`rank 0's branch is not marked as the odd one out: ${JSON.stringify(rank0Head)}`);
    const warnings = frame.locator('.collectives');
    const warning = (await warnings.count()) ? (await warnings.innerText()).replace(/\s+/g, ' ') : '';
    say(`stack tree: ${seen.map((h) => `${h.count} [${h.who}] ${h.name}${h.odd ? ' (odd)' : ''}`).join(' | ')}; ${warning || 'no collective warning'} (${ms} ms after the click)`);
    await shot(page, '24-compare-stack-tree');
    if (docs('stack-tree')) await stackTreePicture(page, frame);
    await palette(page, 'View: Close Editor');
    return ms;
}

/**
 * docs/stack-tree.png: the Show Stacks panel alone, ~950 px wide (as compare-panel.png), down to
 * the tree's last row. The side bars and the debug console are hidden meanwhile (the panel sits in
 * the only editor group, which cannot be maximised); the window is put back, side bar shown.
 */
async function stackTreePicture(page, frame) {
    await palette(page, 'View: Hide Panel');
    await palette(page, 'View: Toggle Primary Side Bar Visibility');
    if (await page.locator('.part.auxiliarybar').isVisible()) await palette(page, 'View: Hide Secondary Side Bar');
    const size = page.viewportSize();
    await page.setViewportSize({ width: 1000, height: 800 });
    try {
        await sleep(800); // the workbench and the webview lay out again
        const editor = await page.locator('.editor-group-container.active .editor-container').boundingBox();
        const tree = await frame.locator('main.tree').boundingBox();
        if (!editor || !tree) throw new Error('the stacks panel has no box to take a picture of');
        const height = Math.min(editor.height, Math.ceil(tree.y + tree.height - editor.y + 16));
        await page.screenshot({ path: path.join(ROOT, 'docs', 'stack-tree.png'), clip: { x: editor.x, y: editor.y, width: editor.width, height } });
        say(`docs/stack-tree.png: ${Math.round(editor.width)}×${height}`);
    } finally {
        if (size) await page.setViewportSize(size);
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await sleep(300);
    }
}

/**
 * Compare Across Ranks: right-click compare.sh → `0 arm` (rank 0 debugged, every rank armed) →
 * rank 0 stops at a breakpoint in main(), the others wait for it in the all_reduce → right-click
 * `weight` in the Variables view → Compare Across Ranks → the panel groups ranks 0,1,3 and 2, rank
 * 2 highlighted, `differs from rank 0 at element 1234 [19, 18]` (docs/compare-panel.png with
 * RANKDEBUG_E2E_DOCS=1) → Make a group of these ranks on rank 2's group → the group commands act
 * on it → `grad` typed in the Debug Console, then Compare Across Ranks… offers it → rank 1's NaN
 * counted (red), its sparkline point red → tolerance 1e-2 on `weight` → one group of 4 → stop → no
 * process left.
 */
export async function scenarioCompare(page, ws) {
    const timings = {};
    const py = fs.readFileSync(path.join(ws, 'compare_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# the e2e breakpoint')) + 1;
    say('compare: a breakpoint only rank 0 reaches, then right-click compare.sh → 0 arm');
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'compare_train.py');
    await setBreakpoint(page, bp);
    const line = await commandLine(page, 'compare.sh', 'torchrun --nproc_per_node 4 compare_train.py');
    await rowMenu(page, line, 'Debug Training Command');
    await typeRanks(page, '0 arm');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');

    say('waiting for rank 0 at the breakpoint');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first().waitFor({ timeout: 120000 });
    await waitFor(`rank 0's frame at line ${bp}`, async () => {
        if (await frameRow(page, 'compare_train.py', bp).first().isVisible()) return true;
        const row = page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first();
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click().catch(() => undefined);
        await expandMainThreads(page);
        return false;
    }, 120000, 500);
    timings.pausedMs = Date.now() - tEnter;
    say(`rank 0 paused at compare_train.py:${bp} ${timings.pausedMs} ms after the quick-pick`);
    // The other ranks are armed: Training Jobs lists them so (their handlers answer eval).
    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    await waitFor('ranks 1-3 armed in Training Jobs', async () => {
        const rows = (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
        if ([1, 2, 3].every((r) => rows.some((t) => new RegExp(`rank ${r}(?!\\d).*armed`).test(t)))) return true;
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return false;
    }, 60000, 2000);
    timings.stacksMs = await compareStackTree(page, pane, bp);

    // Variables: Locals of rank 0's frame in main().
    const locals = page.locator('.debug-variables .monaco-list-row', { hasText: 'Locals' }).first();
    await locals.waitFor({ timeout: 30000 });
    if ((await locals.getAttribute('aria-expanded')) === 'false') await locals.click();
    const weightRow = page.locator('.debug-variables .monaco-list-row', { hasText: /^\s*weight\b/ }).first();
    await weightRow.waitFor({ timeout: 30000 });
    // The variable's own menu must not be offered outside our sessions: here it is ours.
    say('Variables: right-click weight → Compare Across Ranks');
    const tClick = await rowMenu(page, weightRow, 'Compare Across Ranks');
    await waitFor('the Compare: weight panel', () => webviewWith(page, 'Compare: weight'), 30000, 25);
    timings.panelMs = Date.now() - tClick; // first seen by the test (its polling included)
    let { frame, groups } = await waitGroups(page, 'Compare: weight', ['0,1,3', '2']);
    timings.seenMs = Date.now() - tClick;
    timings.weightMs = Math.round((await shownAt(frame)) - tClick);
    if (groups[0].odd || !groups[1].odd) throw new Error(`rank 2's group is not the one highlighted: ${JSON.stringify(groups)}`);
    if (!/differs from rank 0 at element 1234 \[19, 18\]/.test(groups[1].text)) throw new Error(`rank 2's group does not name the element: ${groups[1].text}`);
    const rowClass = (f, r) => f.locator(`tr[data-rank="${r}"]`).getAttribute('class');
    if ((await rowClass(frame, 2)) !== 'odd' || (await rowClass(frame, 0)) !== null) throw new Error(`table rows: rank 2 ${await rowClass(frame, 2)}, rank 0 ${await rowClass(frame, 0)}`);
    const verdict = (await frame.locator('.verdict').innerText()).replace(/\s+/g, ' ');
    const spark = await frame.locator('svg.line[data-metric="mean"] circle.odd[data-rank="2"]').count();
    if (!spark) throw new Error('the mean sparkline does not mark rank 2');
    say(`Compare: weight — panel first seen ${timings.panelMs} ms, groups shown ${timings.weightMs} ms after the click (seen by the test at ${timings.seenMs} ms); ${verdict}; ${groups.map((g) => `[${g.ranks}]${g.odd ? ' odd' : ''}`).join(' ')}; ${groups[1].text.match(/differs[^M]*/)?.[0]?.trim()}`);
    await shot(page, '25-compare-weight');
    if (docs('compare-panel')) {
        await palette(page, 'View: Toggle Maximize Editor Group');
        await sleep(800);
        // The panel alone, without the tab bar (the debug toolbar floats over it).
        await page.locator('.editor-group-container.active .editor-container').screenshot({ path: path.join(ROOT, 'docs', 'compare-panel.png') });
        await palette(page, 'View: Toggle Maximize Editor Group');
        await sleep(300);
        frame = await webviewWith(page, 'Compare: weight');
    }

    // Make a group of rank 2's group: the group commands act on it.
    say('Make a group of these ranks (rank 2)');
    await frame.locator('.group.odd button.make-group').click();
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'Make a group of ranks 2' }).waitFor({ timeout: 15000 });
    await input.fill('odd weight');
    await page.keyboard.press('Enter');
    await page.locator('.statusbar-item', { hasText: 'Group commands act on group odd weight (ranks 2)' }).first().waitFor({ timeout: 15000 });
    say('the group commands act on group odd weight (ranks 2)');

    // grad, typed in rank 0's Debug Console, then offered by Compare Across Ranks….
    await palette(page, 'Focus on Debug Console View');
    const repl = page.locator('.repl-input-wrapper .monaco-editor');
    await repl.waitFor();
    await repl.click();
    await page.keyboard.type('grad');
    await page.keyboard.press('Enter');
    await page.locator('.repl .monaco-list-row', { hasText: 'tensor([1., 1., 1., 1., 1., 1., 1., 1.])' }).first().waitFor({ timeout: 30000 });
    say('Debug Console: grad; Compare Across Ranks… offers it');
    await palette(page, 'Rank Debugger: Compare Across Ranks…');
    const offered = page.locator('.quick-input-list .monaco-list-row', { hasText: 'last in the Debug Console of rank 0' }).first();
    await offered.waitFor({ timeout: 15000 });
    if (!/grad/.test(await offered.innerText())) throw new Error(`offered: ${await offered.innerText()}`);
    const tGrad = Date.now();
    await offered.click();
    ({ frame, groups } = await waitGroups(page, 'Compare: grad', ['0,2,3', '1']));
    timings.gradMs = Math.round((await shownAt(frame)) - tGrad);
    const nanCell = frame.locator('tr[data-rank="1"] td.nan');
    if ((await nanCell.innerText()).trim() !== '1' || !/\bbad\b/.test((await nanCell.getAttribute('class')) ?? '')) throw new Error(`rank 1's NaN cell: ${await nanCell.innerText()} (${await nanCell.getAttribute('class')})`);
    const nans = await frame.locator('td.nan').allInnerTexts();
    if (JSON.stringify(nans.map((t) => t.trim())) !== '["0","1","0","0"]') throw new Error(`NaN counts: ${JSON.stringify(nans)}`);
    if (!(await frame.locator('svg.line rect.bad[data-rank="1"]').count())) throw new Error('no red NaN mark for rank 1 in the sparkline');
    say(`Compare: grad — NaN counts ${nans.join(',')}, rank 1 odd and red (${timings.gradMs} ms after the pick)`);
    await shot(page, '26-compare-grad');

    // Tolerance 1e-2 on weight: rank 2 joins the others.
    say('tolerance 1e-2 on weight');
    await page.locator('.tabs-container .tab', { hasText: 'Compare: weight' }).first().click();
    frame = await waitFor('the weight panel shown', () => webviewWith(page, 'Compare: weight'), 15000, 100);
    await frame.locator('#tolerance').fill('1e-2');
    const tTol = Date.now();
    await frame.locator('#apply').click();
    ({ frame, groups } = await waitGroups(page, 'Compare: weight', ['0,1,2,3']));
    timings.toleranceMs = Math.round((await shownAt(frame)) - tTol);
    const verdict2 = (await frame.locator('.verdict').innerText()).replace(/\s+/g, ' ');
    if (!/All 4 ranks equal/.test(verdict2)) throw new Error(`verdict within 1e-2: ${verdict2}`);
    if (!/within 0\.01/.test(await frame.locator('header .meta').innerText())) throw new Error('the header does not say the tolerance');
    say(`within 1e-2: ${verdict2} (${timings.toleranceMs} ms after Apply)`);
    await shot(page, '27-compare-tolerance');

    say('stopping the job');
    const tStop = Date.now();
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : 'none'), 30000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'compare_train.py');
    await goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}
