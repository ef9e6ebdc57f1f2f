// End-to-end scenario `whystuck` (run.mjs runs it; RANKDEBUG_E2E_ONLY=whystuck alone): from a
// hung job to its culprit rank.
//   rankdebug.hangSeconds 5 in the workspace's settings → right-click stuck.sh → `arm` (4 ranks,
//   every rank armed, none debugged) → rank 3 skips an all_reduce and waits in a barrier of a
//   second group, ranks 0-2 wait for it →
//   1. the notification "Training job looks stuck: rank 3 never entered all_reduce #4 …" with
//      *Why Is This Job Stuck?* and *Debug rank 3* (timed from the quick-pick's Enter);
//   2. Why Is This Job Stuck? → the panel: the finding, rank 3's class marked culprit, ranks 0-2
//      waiting in all_reduce #4, the collectives table (group 0: all_reduce #4 against #3);
//      docs/why-stuck.png with RANKDEBUG_E2E_DOCS=1 (or why-stuck);
//   3. the finding's place → stuck_train.py opens at the barrier's line;
//   4. Debug culprit → a `rank 3` session; Debug one per class → `rank 0 · 2 like it` too;
//   5. Training Jobs: the job row's Why Is This Job Stuck? → the same panel, read again;
//   6. Compare across classes → an expression → the compare panel: ranks 0 and 3 apart →
//   stop → no process left.
// The helpers are run.mjs's own (passed in: `h`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceSettings, typeRanks } from '../helpers.mjs';

function toast(page, text) {
    return page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
}

export async function scenarioWhyStuck(page, ws, h) {
    const timings = {};
    const py = fs.readFileSync(path.join(ws, 'stuck_train.py'), 'utf8').split('\n');
    const barrierLine = py.findIndex((l) => l.includes('dist.barrier(group=sync)')) + 1;
    if (barrierLine < 1) throw new Error('stuck_train.py changed: update whyStuck.mjs');

    h.say('why stuck: rankdebug.hangSeconds 5, then right-click stuck.sh → arm');
    workspaceSettings(ws, { 'rankdebug.hangSeconds': 5 });
    await h.sleep(3000); // the window reads the settings file, the server gets the new settings
    await h.palette(page, 'View: Close All Editor Groups');
    await h.palette(page, 'Notifications: Clear All Notifications');
    const line = await h.commandLine(page, 'stuck.sh', 'torchrun --nproc_per_node 4 stuck_train.py');
    await h.rowMenu(page, line, 'Debug Training Command');
    await typeRanks(page, 'arm');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');

    h.say('waiting for the hang notification');
    // This job's notice: armed, its ranks carry collective numbers (#4). A job found running
    // (a plain torchrun left by another run) says "all_reduce" with no number: not matched.
    const note = toast(page, 'never entered all_reduce #4');
    await note.waitFor({ timeout: 120000 });
    timings.noticeMs = Date.now() - tEnter;
    const text = (await note.innerText()).replace(/\s+/g, ' ');
    h.say(`notification ${timings.noticeMs} ms after Enter: ${text.slice(0, 200)}`);
    if (!/Training job looks stuck: rank 3 never entered all_reduce #4/.test(text)) throw new Error(`the notification does not name rank 3: ${text}`);
    const debugButton = note.locator('.monaco-button', { hasText: 'Debug rank 3' });
    if (!(await debugButton.count())) throw new Error('the notification has no Debug rank 3 button');
    await h.shot(page, '40-hang-notification');

    h.say('Why Is This Job Stuck? from the notification');
    const tWhy = Date.now();
    await note.locator('.monaco-button', { hasText: 'Why Is This Job Stuck?' }).click();
    let frame;
    await h.waitFor('the Why Is This Job Stuck? panel with its culprit', async () => {
        frame = await h.webviewWith(page, 'Why is');
        return frame && (await frame.locator('details.class.culprit').count()) > 0;
    }, 60000, 300);
    timings.panelMs = Date.now() - tWhy;
    const culprit = (await frame.locator('details.class.culprit summary').first().innerText()).replace(/\s+/g, ' ');
    const majority = (await frame.locator('details.class').first().innerText()).replace(/\s+/g, ' ');
    const verdict = (await frame.locator('#verdict').innerText()).replace(/\s+/g, ' ');
    const group0 = (await frame.locator('#collectives tbody tr').first().innerText()).replace(/\s+/g, ' ');
    h.say(`panel ${timings.panelMs} ms after the click: culprit [${culprit}]; first class [${majority.slice(0, 80)}]; group 0 [${group0}]`);
    if (!/^rank 3 culprit/.test(culprit)) throw new Error(`the culprit class is not rank 3: ${culprit}`);
    if (!/ranks 0-2 .*waiting in all_reduce #4/.test(majority)) throw new Error(`ranks 0-2 are not shown waiting in all_reduce #4: ${majority}`);
    if (!/rank 3 never entered all_reduce #4/.test(verdict)) throw new Error(`the finding is missing: ${verdict}`);
    if (!/all_reduce #4 .*#3/.test(group0)) throw new Error(`the collectives table's group 0 row: ${group0}`);
    if (h.docs('why-stuck')) await page.screenshot({ path: path.join(h.ROOT, 'docs', 'why-stuck.png') });
    await h.shot(page, '41-why-stuck-panel');

    h.say("the finding's place → the editor");
    await frame.locator('a[data-finding="0"]').click();
    await h.waitFor(`stuck_train.py at line ${barrierLine}`, async () => {
        const tab = await page.locator('.tabs-container .tab.active', { hasText: 'stuck_train.py' }).count();
        const at = await page.locator('.statusbar-item', { hasText: new RegExp(`Ln ${barrierLine},`) }).count();
        return tab > 0 && at > 0;
    }, 20000, 300);

    h.say('Debug culprit → rank 3');
    frame = await h.webviewWith(page, 'Why is');
    const tDebug = Date.now();
    await frame.locator('button[data-post="debugCulprit"]').click();
    await h.palette(page, 'View: Show Run and Debug');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 3(?!\d)/ }).first().waitFor({ timeout: 90000 });
    timings.culpritMs = Date.now() - tDebug;
    h.say(`rank 3's session ${timings.culpritMs} ms after Debug culprit`);

    h.say('Debug one per class → rank 0 · 2 like it');
    frame = await h.webviewWith(page, 'Why is');
    await frame.locator('button[data-post="debugClasses"]').click();
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 0 · 2 like it' }).first().waitFor({ timeout: 90000 });
    const rank3 = await page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 3(?!\d)/ }).count();
    if (rank3 !== 1) throw new Error(`expected one rank 3 session, found ${rank3}`);
    await h.shot(page, '42-one-per-class');

    h.say('Training Jobs: the job row → Why Is This Job Stuck? → the same panel, read again');
    const before = await frame.locator('header .meta').innerText();
    await h.openJobsView(page);
    const jobRow = h.jobsPane(page).locator('.monaco-list-row', { hasText: /torchrun · \d{8}-\d{6}-\d+/ }).first();
    await h.waitFor('the job in Training Jobs', async () => {
        if (await jobRow.count()) return true;
        await h.palette(page, 'Rank Debugger: Refresh Training Jobs');
        return false;
    }, 60000, 2000);
    await h.sleep(1000); // the panel's time reads in seconds
    await h.rowMenu(page, jobRow, 'Why Is This Job Stuck?');
    await h.waitFor('the panel read again', async () => {
        frame = await h.webviewWith(page, 'Why is');
        const meta = frame ? await frame.locator('header .meta').innerText().catch(() => before) : before;
        return meta !== before && (await frame.locator('details.class.culprit').count()) > 0 && !(await frame.locator('#busy').count());
    }, 60000, 300);
    const panels = await page.locator('.tab', { hasText: 'Why is' }).count();
    if (panels !== 1) throw new Error(`expected one Why Is This Job Stuck? panel, found ${panels}`);

    h.say('Compare across classes → rank * 10 + t.sum().item() in ranks 0 and 3, read where they stand');
    frame = await h.webviewWith(page, 'Why is');
    await frame.locator('button[data-post="compare"]').click();
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill('rank * 10 + t.sum().item()');
    const tCompare = Date.now();
    await page.keyboard.press('Enter');
    // Both ranks completed 3 all_reduces of t = ones(4) over 4 ranks (64 each; rank 0's 4th waits): 0 + 256 and 30 + 256.
    const { groups } = await h.waitGroups(page, 'Compare: rank * 10', ['0', '3'], 60000);
    timings.compareMs = Date.now() - tCompare;
    h.say(`compare panel ${timings.compareMs} ms after Enter: ${JSON.stringify(groups.map((g) => g.text.slice(0, 60)))}`);
    if (!/256/.test(groups[0].text) || !/286/.test(groups[1].text)) throw new Error(`unexpected values: ${JSON.stringify(groups)}`);
    await h.shot(page, '43-compare-classes');

    h.say('stopping the job');
    await h.stopDebugging(page);
    const left = await h.waitFor('the job to end', () => (h.jobProcesses(ws).length ? false : 'none'), 30000).catch(() => h.jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    workspaceSettings(ws, { 'rankdebug.hangSeconds': undefined });
    return timings;
}
